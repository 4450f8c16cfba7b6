//! A host's SSH configuration as OpenSSH itself resolves it: `ssh -G`
//! prints the effective values for a target, `Include` and `Match`
//! followed, so a host defined in an included file or behind a bastion
//! (`ProxyJump`, `ProxyCommand`) is found as `ssh` finds it. Without an
//! `ssh` client here, `target::resolve` reads `~/.ssh/config` itself (the
//! common keywords only).
//!
//! And the byte stream to a host behind a proxy: russh runs over any
//! stream, so a jump is one more command that yields a stdin/stdout —
//! `ssh -W HOST:PORT JUMP`, or the user's own ProxyCommand.

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use tokio::io::DuplexStream;

use super::error::RemoteError;
use super::target::{Proxy, Resolved, Target};

/// The last bytes a proxy wrote to stderr.
pub type StderrTail = Arc<Mutex<Vec<u8>>>;

/// How long `ssh -G` may take (it runs `Match exec` commands).
const RESOLVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The effective configuration of `target` from `ssh -G`, `~` taken as
/// `home`; `None` when there is no `ssh` to ask. When `home` is not the
/// user's home in the password database (a test's, or a user's own
/// `HOME`), `ssh` is pointed at `home/.ssh/config`, which it would not
/// read by itself.
pub async fn effective(target: &Target, home: &Path) -> Option<Result<Resolved, String>> {
    let mut command = tokio::process::Command::new("ssh");
    let account_home = account_home();
    if let Some(file) = config_file(home) {
        command.arg("-F").arg(file);
    }
    command.arg("-G");
    if let Some(port) = target.port {
        command.arg("-p").arg(port.to_string());
    }
    if let Some(user) = &target.user {
        command.arg("-l").arg(user);
    }
    command.arg("--").arg(&target.host);
    command.stdin(Stdio::null()).stderr(Stdio::piped()).kill_on_drop(true);
    // A `Match exec` in the config runs a command of the user's: bounded.
    let out = match tokio::time::timeout(RESOLVE_TIMEOUT, command.output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Ok(Err(e)) => return Some(Err(format!("cannot run ssh -G: {e}"))),
        Err(_) => {
            return Some(Err(format!(
                "ssh -G {} did not answer within {}s",
                target.host,
                RESOLVE_TIMEOUT.as_secs()
            )));
        }
    };
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Some(Err(format!(
            "ssh -G {} failed: {}",
            target.host,
            crate::text::bounded(why.trim(), 300)
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(Ok(parse(&text, &target.host, home, account_home.as_deref())))
}

/// The config file to point `ssh` at: none when `home` is the account's
/// (ssh reads it, and the system's, by itself); `home/.ssh/config`, or no
/// file at all when there is none there, when `home` is another.
fn config_file(home: &Path) -> Option<PathBuf> {
    if account_home().as_deref() == Some(home) {
        return None;
    }
    let file = home.join(".ssh/config");
    Some(if file.exists() {
        file
    } else {
        PathBuf::from("/dev/null")
    })
}

/// The user's home in the password database: where `ssh` looks for
/// `~/.ssh` whatever `HOME` says.
fn account_home() -> Option<PathBuf> {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.dir)
}

/// Reads `ssh -G`'s `keyword value…` lines. Paths under the account's home
/// (which ssh expands `~` to) are taken under `home` instead, as `~` is
/// everywhere else in agents.
fn parse(text: &str, alias: &str, home: &Path, account_home: Option<&Path>) -> Resolved {
    let path = |p: &str| -> PathBuf {
        if let Some(rest) = p.strip_prefix("~/") {
            return home.join(rest);
        }
        match account_home.and_then(|a| Path::new(p).strip_prefix(a).ok()) {
            Some(rest) if account_home != Some(home) => home.join(rest),
            _ => PathBuf::from(p),
        }
    };
    let mut r = Resolved {
        hostname: alias.to_string(),
        port: 22,
        user: String::new(),
        identity_files: Vec::new(),
        known_hosts: Vec::new(),
        proxy: None,
        alias: alias.to_string(),
    };
    for line in text.lines() {
        let Some((keyword, value)) = line.split_once(' ') else {
            continue;
        };
        let value = value.trim();
        match keyword.to_ascii_lowercase().as_str() {
            "hostname" => r.hostname = value.to_string(),
            "user" => r.user = value.to_string(),
            "port" => r.port = value.parse().unwrap_or(22),
            "identityfile" => r.identity_files.push(path(value)),
            "userknownhostsfile" => r.known_hosts = value.split_whitespace().map(path).collect(),
            "proxyjump" if value != "none" => r.proxy = Some(Proxy::Jump(value.to_string())),
            "proxycommand" if value != "none" => r.proxy = Some(Proxy::Command(value.to_string())),
            _ => {}
        }
    }
    if r.known_hosts.is_empty() {
        r.known_hosts.push(home.join(".ssh/known_hosts"));
    }
    r
}

/// The stream to `r` through its proxy, and the tail of what the proxy
/// wrote to stderr (why a jump failed). The proxy process ends with the
/// stream.
pub fn through(proxy: &Proxy, r: &Resolved, home: &Path) -> Result<(DuplexStream, StderrTail), RemoteError> {
    let mut command = match proxy {
        Proxy::Jump(hops) => jump_command(hops, r, home),
        Proxy::Command(line) => {
            let mut command = tokio::process::Command::new("sh");
            command.arg("-c").arg(expand(line, r));
            command
        }
    };
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| RemoteError::Unreachable {
        name: r.alias.clone(),
        address: r.address(),
        why: format!("cannot start its proxy: {e}"),
    })?;
    let (stdin, stdout) = (child.stdin.take().expect("piped"), child.stdout.take().expect("piped"));
    let stderr = Arc::new(Mutex::new(Vec::new()));
    tokio::spawn(super::command::keep_tail(
        child.stderr.take().expect("piped"),
        stderr.clone(),
    ));
    let (ours, mut theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let mut proxy = tokio::io::join(stdout, stdin);
        let _ = tokio::io::copy_bidirectional(&mut theirs, &mut proxy).await;
        // Dropping `child` kills a proxy still running.
        drop(child);
    });
    Ok((ours, stderr))
}

/// `ssh -W HOST:PORT LAST` for `ProxyJump a,b,LAST` (the hops before the
/// last as its own `-J`), never prompting: there is no terminal to ask on.
fn jump_command(hops: &str, r: &Resolved, home: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("ssh");
    if let Some(file) = config_file(home) {
        command.arg("-F").arg(file);
    }
    let hops: Vec<&str> = hops.split(',').map(str::trim).collect();
    let (last, before) = hops.split_last().expect("split gives one at least");
    if !before.is_empty() {
        command.arg("-J").arg(before.join(","));
    }
    let host = if r.hostname.contains(':') {
        format!("[{}]", r.hostname)
    } else {
        r.hostname.clone()
    };
    command
        .args(["-o", "BatchMode=yes", "-W"])
        .arg(format!("{host}:{}", r.port))
        .arg("--")
        .arg(last);
    command
}

/// ProxyCommand's tokens: `%h` host, `%p` port, `%r` user, `%n` the name
/// as given, `%%` a percent sign.
fn expand(line: &str, r: &Resolved) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('h') => out.push_str(&r.hostname),
            Some('p') => out.push_str(&r.port.to_string()),
            Some('r') => out.push_str(&r.user),
            Some('n') => out.push_str(&r.alias),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRINTED: &str = "user bob\nhostname 10.0.0.5\nport 2222\nidentityfile ~/.ssh/id_ed25519\n\
        identityfile /keys/lab\nuserknownhostsfile /root/.ssh/known_hosts /root/.ssh/known_hosts2\n\
        proxyjump admin@bastion:2200,edge\nproxycommand none\n";

    #[test]
    fn ssh_g_output_is_read_with_home_for_the_accounts_home() {
        let r = parse(PRINTED, "inner", Path::new("/t/home"), Some(Path::new("/root")));
        assert_eq!(
            (r.user.as_str(), r.hostname.as_str(), r.port),
            ("bob", "10.0.0.5", 2222)
        );
        assert_eq!(
            r.identity_files,
            [PathBuf::from("/t/home/.ssh/id_ed25519"), PathBuf::from("/keys/lab")]
        );
        assert_eq!(
            r.known_hosts,
            [
                PathBuf::from("/t/home/.ssh/known_hosts"),
                PathBuf::from("/t/home/.ssh/known_hosts2")
            ]
        );
        assert_eq!(r.proxy, Some(Proxy::Jump("admin@bastion:2200,edge".into())));
        // HOME is the account's: its paths stay as ssh printed them.
        let r = parse(PRINTED, "inner", Path::new("/root"), Some(Path::new("/root")));
        assert_eq!(r.known_hosts[0], PathBuf::from("/root/.ssh/known_hosts"));
    }

    #[test]
    fn a_proxy_command_gets_its_tokens() {
        let r = parse(
            "hostname 10.1.1.1\nport 22\nuser me\nproxycommand nc -X 5 -x %r@proxy %h %p # 100%%\n",
            "vm",
            Path::new("/h"),
            None,
        );
        let Some(Proxy::Command(line)) = &r.proxy else {
            panic!("{r:?}");
        };
        assert_eq!(expand(line, &r), "nc -X 5 -x me@proxy 10.1.1.1 22 # 100%");
    }

    #[test]
    fn a_jump_of_several_hops_goes_through_the_last_with_the_others_before_it() {
        let r = parse(PRINTED, "inner", Path::new("/root"), Some(Path::new("/root")));
        let command = jump_command("admin@bastion:2200,edge", &r, Path::new("/root"));
        let args: Vec<String> = command
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let tail = [
            "-J",
            "admin@bastion:2200",
            "-o",
            "BatchMode=yes",
            "-W",
            "10.0.0.5:2222",
            "--",
            "edge",
        ];
        assert!(args.ends_with(&tail.map(String::from)), "{args:?}");
    }
}
