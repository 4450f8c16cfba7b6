//! A real OpenSSH server on loopback for the remote-host tests (docs/design.md §11):
//! its own host key, authorized_keys and config in a temporary folder, no
//! system file touched, killed when dropped. And the client side of it: a
//! temporary HOME with its own ~/.ssh (key, config, known_hosts), so nothing
//! of the user's is read.

#![allow(dead_code)]

pub mod gate;
pub mod proxy;
pub mod serve;

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{BIN, Home, PATIENCE};
pub use gate::Gate;
pub use proxy::Proxy;

/// This test binary reaches its hosts by a command (`tests/sshd/gate.rs`)
/// instead of SSH: a remote test file built again through its symlink
/// `NAME_by_command.rs` runs its tests over the other transport.
pub fn by_command() -> bool {
    env!("CARGO_CRATE_NAME").ends_with("_by_command")
}

/// What breaks the link of a test's host: the TCP proxy in front of sshd,
/// or the gate of a command host.
pub enum Breaker<'a> {
    Proxy(&'a Proxy),
    Gate(&'a Gate),
}

impl Breaker<'_> {
    pub fn cut(&self) {
        match self {
            Breaker::Proxy(p) => p.cut(),
            Breaker::Gate(g) => g.cut(),
        }
    }

    pub fn stall(&self) {
        match self {
            Breaker::Proxy(p) => p.stall(),
            Breaker::Gate(g) => g.stall(),
        }
    }

    pub fn restore(&self) {
        match self {
            Breaker::Proxy(p) => p.restore(),
            Breaker::Gate(g) => g.restore(),
        }
    }

    /// Connections (or commands) taken so far, refused ones included.
    pub fn accepted(&self) -> usize {
        match self {
            Breaker::Proxy(p) => p.accepted(),
            Breaker::Gate(g) => g.accepted(),
        }
    }
}

const SSHD: &str = "/usr/sbin/sshd";

/// The server: `sshd -D` on 127.0.0.1 and a free port.
pub struct Sshd {
    pub dir: tempfile::TempDir,
    child: Child,
    pub port: u16,
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "agents-test", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen (install openssh-client)");
    assert!(status.success(), "ssh-keygen failed");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Sshd {
    /// Starts sshd accepting `client_pub` for the current user. Sessions get
    /// `XDG_CONFIG_HOME=remote_config` so the remote agents reads the test's
    /// config, not the user's.
    pub fn start(client_pub: &Path, remote_config: &Path) -> Sshd {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} is missing: install openssh-server (.ci/run does)"
        );
        assert!(
            !nix_is_root() || Path::new("/run/sshd").is_dir(),
            "sshd run as root needs its privilege-separation directory /run/sshd (.ci/run creates it)"
        );
        let dir = tempfile::Builder::new().prefix("sshd").tempdir().expect("temp dir");
        keygen(&dir.path().join("host_ed25519"));
        std::fs::copy(client_pub, dir.path().join("authorized_keys")).expect("authorized_keys");
        // The host's user has a HOME of its own: its shell reads no startup
        // file of this machine's user (a pyenv init there takes a lock that
        // a dozen parallel sessions queue on), and nothing the host writes
        // under HOME lands in the real one.
        std::fs::create_dir(dir.path().join("home")).expect("the host user's HOME");
        let mut last_log = String::new();
        for _attempt in 0..3 {
            let port = free_port();
            let config = format!(
                "ListenAddress 127.0.0.1\n\
                 Port {port}\n\
                 HostKey {dir}/host_ed25519\n\
                 PidFile {dir}/sshd.pid\n\
                 AuthorizedKeysFile {dir}/authorized_keys\n\
                 StrictModes no\n\
                 UsePAM no\n\
                 PasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\n\
                 PubkeyAuthentication yes\n\
                 PermitRootLogin prohibit-password\n\
                 SetEnv XDG_CONFIG_HOME={config_home} HOME={dir}/home\n\
                 LogLevel VERBOSE\n",
                dir = dir.path().display(),
                config_home = remote_config.display(),
            );
            let config_path = dir.path().join("sshd_config");
            std::fs::write(&config_path, config).unwrap();
            let log = std::fs::File::create(dir.path().join("sshd.log")).unwrap();
            let child = Command::new(SSHD)
                .arg("-D")
                .arg("-e")
                .arg("-f")
                .arg(&config_path)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("start sshd");
            let mut child = child;
            if wait_listening(&mut child, port) {
                return Sshd { dir, child, port };
            }
            last_log = std::fs::read_to_string(dir.path().join("sshd.log")).unwrap_or_default();
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("sshd did not start: {last_log}");
    }

    pub fn host_key_pub(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("host_ed25519.pub")).unwrap()
    }

    /// `SHA256:…`, as `ssh-keygen -l` prints it.
    pub fn fingerprint(&self) -> String {
        let out = Command::new("ssh-keygen")
            .arg("-lf")
            .arg(self.dir.path().join("host_ed25519.pub"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .nth(1)
            .expect("a fingerprint")
            .to_string()
    }

    /// The known_hosts line OpenSSH would write for this server.
    pub fn known_hosts_line(&self) -> String {
        self.known_hosts_line_at(self.port)
    }

    /// The same key under another port (a proxy in front of this server):
    /// known_hosts entries are per `[host]:port`.
    pub fn known_hosts_line_at(&self, port: u16) -> String {
        let text = self.host_key_pub();
        let mut fields = text.split_whitespace();
        let (kind, b64) = (fields.next().unwrap(), fields.next().unwrap());
        format!("[127.0.0.1]:{port} {kind} {b64}\n")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Listening means answering with an SSH banner.
fn wait_listening(child: &mut Child, port: u16) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut banner = [0u8; 7];
            if stream.read_exact(&mut banner).is_ok() && &banner == b"SSH-2.0" {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn nix_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

pub fn local_user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A local agents (its own AGENTS_HOME and HOME with ~/.ssh), a "remote"
/// agents state on the same machine (another AGENTS_HOME), and the sshd
/// between them. Dropped in order: the proxy (so a stalled one holds up
/// nothing), local daemon, remote daemon, sshd.
pub struct Net {
    /// A fault-injecting proxy in front of sshd (`Net::with_proxy`).
    pub proxy: Option<Proxy>,
    /// With [`by_command`]: the gate of the hosts added for this sshd or
    /// its proxy, and those of other hosts (never broken).
    gate: Option<Gate>,
    other_gates: std::sync::Mutex<Vec<Gate>>,
    pub local: Home,
    pub remote: Home,
    pub sshd: Sshd,
    /// HOME of the local side: .ssh/id_ed25519, .ssh/config, .ssh/known_hosts.
    pub client_home: tempfile::TempDir,
}

impl Net {
    pub fn new() -> Net {
        let client_home = tempfile::Builder::new().prefix("cli").tempdir().unwrap();
        let ssh = client_home.path().join(".ssh");
        std::fs::create_dir_all(&ssh).unwrap();
        keygen(&ssh.join("id_ed25519"));
        let remote = Home::new();
        let sshd = Sshd::start(&ssh.join("id_ed25519.pub"), remote.config.path());
        let gate = by_command().then(|| Gate::new(&sshd.dir.path().join("home"), remote.config.path()));
        Net {
            proxy: None,
            gate,
            other_gates: std::sync::Mutex::default(),
            local: Home::new(),
            remote,
            sshd,
            client_home,
        }
    }

    /// As `new`, with a proxy in front of sshd: `target_via_proxy` goes
    /// through it, and `know_the_host` knows the key under its port too.
    pub fn with_proxy() -> Net {
        let mut net = Net::new();
        net.proxy = Some(Proxy::start(net.sshd.port));
        net
    }

    /// What cuts, stalls and restores the link of the host added with
    /// [`Net::target_via_proxy`].
    pub fn proxy(&self) -> Breaker<'_> {
        let proxy = self.proxy.as_ref().expect("a Net made with_proxy");
        match &self.gate {
            Some(gate) => Breaker::Gate(gate),
            None => Breaker::Proxy(proxy),
        }
    }

    /// `user@127.0.0.1:proxyport`.
    pub fn target_via_proxy(&self) -> String {
        self.target_at(self.proxy.as_ref().expect("a Net made with_proxy").port)
    }

    /// `user@127.0.0.1:port` (a port that reaches this sshd, such as a proxy's).
    pub fn target_at(&self, port: u16) -> String {
        format!("{}@127.0.0.1:{port}", local_user())
    }

    /// Adds the server's key under `port` to known_hosts.
    pub fn know_the_host_at(&self, port: u16) {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.known_hosts())
            .unwrap();
        file.write_all(self.sshd.known_hosts_line_at(port).as_bytes()).unwrap();
    }

    /// Adds a known_hosts line (another server's, such as a jump host's).
    pub fn know_the_host_at_line(&self, line: &str) {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.known_hosts())
            .unwrap();
        file.write_all(line.as_bytes()).unwrap();
    }

    pub fn ssh_dir(&self) -> PathBuf {
        self.client_home.path().join(".ssh")
    }

    pub fn known_hosts(&self) -> PathBuf {
        self.ssh_dir().join("known_hosts")
    }

    /// Writes the server's real key into known_hosts (a user who has
    /// connected with ssh before).
    pub fn know_the_host(&self) {
        std::fs::write(self.known_hosts(), self.sshd.known_hosts_line()).unwrap();
        if let Some(proxy) = &self.proxy {
            self.know_the_host_at(proxy.port);
        }
    }

    /// `user@127.0.0.1:port`.
    pub fn target(&self) -> String {
        format!("{}@127.0.0.1:{}", local_user(), self.sshd.port)
    }

    /// The remote state directory, for `--remote-home`.
    pub fn remote_home(&self) -> String {
        self.remote.path().display().to_string()
    }

    /// `hosts add NAME` for this server, this binary as the remote agents.
    /// With [`by_command`], the host is reached by a gate instead: this
    /// Net's own for the server and its proxy, a gate of its own for
    /// another target.
    pub fn add_host(&self, name: &str, target: &str) {
        let remote_home = self.remote_home();
        let Some(gate) = &self.gate else {
            self.ok(&[
                "hosts",
                "add",
                name,
                target,
                "--remote-bin",
                BIN,
                "--remote-home",
                &remote_home,
            ]);
            return;
        };
        let ours = target == self.target() || self.proxy.as_ref().is_some_and(|_| target == self.target_via_proxy());
        let command = if ours {
            gate.command()
        } else {
            let other = Gate::new(&self.sshd.dir.path().join("home"), self.remote.config.path());
            let command = other.command();
            self.other_gates.lock().unwrap().push(other);
            command
        };
        self.ok(&[
            "hosts",
            "add",
            name,
            "--command",
            &command,
            "--remote-bin",
            BIN,
            "--remote-home",
            &remote_home,
        ]);
        let hosts = self.json(&["hosts", "ls", "--json"]);
        let added = hosts.as_array().unwrap().iter().find(|h| h["name"] == name).unwrap();
        assert_eq!(added["command"][0], command.as_str(), "{added}");
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.local.cmd(args);
        c.env("HOME", self.client_home.path()).env_remove("SSH_AUTH_SOCK");
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run agents")
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "agents {args:?} failed: {}\n{}\nsshd log:\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout),
            self.sshd.log()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs and insists on failure; returns stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            !out.status.success(),
            "agents {args:?} succeeded: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    pub fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).expect("json output")
    }

    /// `agents run -d --host HOST ARGS…`: the new run's id.
    pub fn start_on(&self, host: &str, args: &[&str]) -> String {
        let mut all = vec!["run", "-d", "--host", host];
        all.extend_from_slice(args);
        self.ok(&all).trim().to_string()
    }

    /// Waits until the local mirror of `run`'s output holds `needle`.
    pub fn wait_mirrored(&self, run: &str, needle: &str) {
        let needle = needle.as_bytes();
        self.wait_until(
            &format!("{:?} is mirrored here", String::from_utf8_lossy(needle)),
            || std::fs::read(self.local.log_path(run)).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle)),
        );
    }

    pub fn wait_until(&self, what: &str, f: impl FnMut() -> bool) {
        let mut f = f;
        crate::common::wait_until(what, PATIENCE, &mut f)
    }
}
