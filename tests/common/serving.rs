//! What the socket tests share (`engine_protocol.rs`, `engine_socket.rs`):
//! a runtime for the library's client, the home's paths, and `agents`
//! commands that must answer within `PATIENCE`.

use std::process::{Output, Stdio};

use agents::paths::Paths;
use serde_json::Value;

use super::{Home, PATIENCE};

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

pub fn paths(home: &Home) -> Paths {
    Paths::at(home.path().to_path_buf())
}

/// Runs `agents ARGS`, failing the test (and killing it) if it has not
/// answered within `PATIENCE`: a daemon that stopped serving must fail the
/// test, not hang it.
pub fn answer_within_patience(home: &Home, args: &[&str]) -> Output {
    let child = home
        .cmd(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agents");
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(PATIENCE) {
        Ok(out) => out.expect("wait for agents"),
        Err(_) => {
            super::kill9(pid);
            panic!("agents {args:?} did not answer within {PATIENCE:?}");
        }
    }
}

/// `agents ls` answers: the daemon still serves.
pub fn assert_daemon_serves(home: &Home) {
    let out = answer_within_patience(home, &["ls", "--json"]);
    assert!(
        out.status.success(),
        "agents ls failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout).expect("ls --json prints JSON");
}
