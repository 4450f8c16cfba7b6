//! A fault-injecting TCP proxy for the remote tests (docs/design.md §11): it sits
//! between the local daemon and the loopback sshd and can cut the link
//! (every connection closed both ways, new ones dropped), stall it (bytes
//! held in both directions, nothing closed) and restore it.
//!
//! Plain std threads: one accepting, two per connection (one per
//! direction). A stalled pump holds what it has read and stops reading, so
//! TCP flow control holds the rest in the kernels' buffers, as on a link
//! whose packets stop arriving.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Forward,
    Stall,
    Cut,
}

struct Shared {
    mode: Mutex<Mode>,
    changed: Condvar,
    /// Both sockets of every open connection, to shut down on a cut.
    open: Mutex<Vec<TcpStream>>,
    /// Connections accepted so far, dropped ones included.
    accepted: AtomicUsize,
    stopping: AtomicBool,
}

impl Shared {
    /// Waits while stalled; true when the bytes may go on, false on a cut.
    fn may_forward(&self) -> bool {
        let mut mode = self.mode.lock().unwrap();
        while *mode == Mode::Stall && !self.stopping.load(Ordering::SeqCst) {
            mode = self.changed.wait(mode).unwrap();
        }
        *mode == Mode::Forward && !self.stopping.load(Ordering::SeqCst)
    }

    fn set(&self, to: Mode) {
        *self.mode.lock().unwrap() = to;
        self.changed.notify_all();
    }

    fn close_all(&self) {
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

/// The proxy: connect to `127.0.0.1:port` to reach the target through it.
pub struct Proxy {
    pub port: u16,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `127.0.0.1:target_port`.
    pub fn start(target_port: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port for the proxy");
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            mode: Mutex::new(Mode::Forward),
            changed: Condvar::new(),
            open: Mutex::new(Vec::new()),
            accepted: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
        });
        let acceptor = {
            let shared = shared.clone();
            std::thread::spawn(move || accept(listener, target_port, shared))
        };
        Proxy {
            port,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// Closes every connection both ways; new ones are dropped as soon as
    /// they are accepted, until `restore`. Bytes held by a stall are lost.
    pub fn cut(&self) {
        self.shared.set(Mode::Cut);
        self.shared.close_all();
    }

    /// Holds every byte, both ways, of current and new connections; closes
    /// nothing.
    pub fn stall(&self) {
        self.shared.set(Mode::Stall);
    }

    /// Forwards normally again (held bytes go on); new connections accepted.
    pub fn restore(&self) {
        self.shared.set(Mode::Forward);
    }

    /// Connections accepted so far, those dropped by a cut included: how
    /// often the client tried.
    pub fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.shared.set(Mode::Cut);
        self.shared.close_all();
        // Wake the acceptor out of `accept`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn accept(listener: TcpListener, target_port: u16, shared: Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        if *shared.mode.lock().unwrap() == Mode::Cut {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        }
        let Ok(server) = TcpStream::connect(("127.0.0.1", target_port)) else {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let (Ok(c2), Ok(s2), Ok(c3), Ok(s3)) = (
            client.try_clone(),
            server.try_clone(),
            client.try_clone(),
            server.try_clone(),
        ) else {
            continue;
        };
        {
            let mut open = shared.open.lock().unwrap();
            // A cut that raced this accept must not miss these two.
            if *shared.mode.lock().unwrap() == Mode::Cut {
                let _ = client.shutdown(Shutdown::Both);
                let _ = server.shutdown(Shutdown::Both);
                continue;
            }
            open.push(c3);
            open.push(s3);
        }
        let up = shared.clone();
        std::thread::spawn(move || pump(client, server, up));
        let down = shared.clone();
        std::thread::spawn(move || pump(s2, c2, down));
    }
}

/// Copies `from` → `to` until either ends or the link is cut.
fn pump(mut from: TcpStream, mut to: TcpStream, shared: Arc<Shared>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if !shared.may_forward() {
            break;
        }
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // Read just as a stall began: held here until it ends.
        if !shared.may_forward() || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    // One side ended (or a cut): end both, as a TCP relay does.
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}
