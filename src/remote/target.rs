//! Where a host is: an SSH target (`user@host[:port]` or a `Host` alias)
//! resolved through `~/.ssh/config`. `ssh -G` resolves it where OpenSSH's
//! client is installed (`ssh_config`); without it, this reads the keywords
//! most configs use (HostName, User, Port, IdentityFile,
//! UserKnownHostsFile, ProxyJump, ProxyCommand). Pure: text in, values out.

use std::path::{Path, PathBuf};

/// A target as the user typed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub user: Option<String>,
    /// A host name, an address, or an alias from `~/.ssh/config`.
    pub host: String,
    pub port: Option<u16>,
}

/// Parses `[user@]host[:port]`; an IPv6 address with a port is `[addr]:port`.
pub fn parse_target(text: &str) -> Result<Target, String> {
    let bad = |why: &str| format!("bad SSH target '{text}': {why} (expected user@host[:port] or an ssh config alias)");
    let text_trim = text.trim();
    if text_trim.is_empty() || text_trim.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("empty or contains spaces"));
    }
    let (user, rest) = match text_trim.rsplit_once('@') {
        Some((u, r)) if !u.is_empty() => (Some(u.to_string()), r),
        Some(_) => return Err(bad("empty user")),
        None => (None, text_trim),
    };
    let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
        let (addr, after) = inner.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
        match after.strip_prefix(':') {
            Some(p) => (addr.to_string(), Some(p)),
            None if after.is_empty() => (addr.to_string(), None),
            None => return Err(bad("junk after ']'")),
        }
    } else if rest.matches(':').count() > 1 {
        // A bare IPv6 address, no port.
        (rest.to_string(), None)
    } else {
        match rest.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (rest.to_string(), None),
        }
    };
    if host.is_empty() || host.starts_with('-') {
        return Err(bad("empty host"));
    }
    let port = match port {
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| bad("port must be 1-65535"))?,
        ),
        None => None,
    };
    Ok(Target { user, host, port })
}

/// A target after `~/.ssh/config`: what to connect to and with what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub hostname: String,
    pub port: u16,
    pub user: String,
    /// Key files to offer, in order (those that exist are tried).
    pub identity_files: Vec<PathBuf>,
    /// known_hosts files to verify against (the first is where trust writes).
    pub known_hosts: Vec<PathBuf>,
    /// Reached through a bastion or a command, not a TCP connection.
    pub proxy: Option<Proxy>,
    /// The host as the target named it (ProxyCommand's `%n`).
    pub alias: String,
}

/// How a host behind something is reached (`ssh_config::through`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proxy {
    /// `ProxyJump`: `[user@]host[:port]`, hops separated by commas.
    Jump(String),
    /// `ProxyCommand`: a line for `sh -c`, with its `%` tokens.
    Command(String),
}

impl Resolved {
    /// `user@host:port`, for messages.
    pub fn address(&self) -> String {
        if self.hostname.contains(':') {
            format!("{}@[{}]:{}", self.user, self.hostname, self.port)
        } else {
            format!("{}@{}:{}", self.user, self.hostname, self.port)
        }
    }

    /// The host field of a known_hosts entry for this host, as OpenSSH
    /// writes it: `host` on port 22, `[host]:port` otherwise.
    pub fn known_hosts_entry(&self) -> String {
        if self.port == 22 {
            self.hostname.clone()
        } else {
            format!("[{}]:{}", self.hostname, self.port)
        }
    }
}

/// The values `~/.ssh/config` gives one host: the first value of each
/// keyword wins, as in ssh; IdentityFile accumulates.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct HostConfig {
    hostname: Option<String>,
    user: Option<String>,
    port: Option<u16>,
    identity_files: Vec<String>,
    known_hosts: Option<Vec<String>>,
    proxy: Option<Proxy>,
}

/// Resolves `target` with the text of `~/.ssh/config` (if any). `home` is
/// the local home directory, `local_user` the local user name.
pub fn resolve(target: &Target, ssh_config: Option<&str>, home: &Path, local_user: &str) -> Resolved {
    let config = ssh_config
        .map(|text| host_config(text, &target.host))
        .unwrap_or_default();
    let hostname = config
        .hostname
        .map(|h| h.replace("%h", &target.host).replace("%%", "%"))
        .unwrap_or_else(|| target.host.clone());
    let user = target
        .user
        .clone()
        .or(config.user)
        .unwrap_or_else(|| local_user.to_string());
    let port = target.port.or(config.port).unwrap_or(22);
    let expand = |p: &str| {
        let p = p
            .replace("%d", &home.to_string_lossy())
            .replace("%u", local_user)
            .replace("%r", &user)
            .replace("%h", &hostname)
            .replace("%p", &port.to_string())
            .replace("%%", "%");
        match p.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None if p == "~" => home.to_path_buf(),
            None => PathBuf::from(p),
        }
    };
    let identity_files = if config.identity_files.is_empty() {
        ["id_ed25519", "id_ecdsa", "id_rsa"]
            .iter()
            .map(|f| home.join(".ssh").join(f))
            .collect()
    } else {
        config.identity_files.iter().map(|p| expand(p)).collect()
    };
    let known_hosts = match config.known_hosts {
        Some(files) if !files.is_empty() => files.iter().map(|p| expand(p)).collect(),
        _ => vec![home.join(".ssh/known_hosts")],
    };
    let proxy = config
        .proxy
        .filter(|p| !matches!(p, Proxy::Jump(h) | Proxy::Command(h) if h.is_empty() || h == "none"));
    Resolved {
        hostname,
        port,
        user,
        identity_files,
        known_hosts,
        proxy,
        alias: target.host.clone(),
    }
}

/// Walks the config: global lines and every `Host` block whose patterns
/// match `alias`. `Match` blocks are not understood and are skipped whole;
/// `Include` is not followed (`ssh -G` does both, where there is `ssh`).
fn host_config(text: &str, alias: &str) -> HostConfig {
    let mut out = HostConfig::default();
    let mut active = true;
    for line in text.lines() {
        let Some((keyword, args)) = split_line(line) else {
            continue;
        };
        match keyword.as_str() {
            "host" => active = host_matches(&args, alias),
            "match" => active = false,
            _ if !active => {}
            "hostname" if out.hostname.is_none() => out.hostname = args.first().cloned(),
            "user" if out.user.is_none() => out.user = args.first().cloned(),
            "port" if out.port.is_none() => out.port = args.first().and_then(|p| p.parse().ok()),
            "identityfile" => out.identity_files.extend(args.first().cloned()),
            "userknownhostsfile" if out.known_hosts.is_none() => out.known_hosts = Some(args.clone()),
            "proxyjump" if out.proxy.is_none() => {
                out.proxy = Some(Proxy::Jump(args.first().cloned().unwrap_or_default()))
            }
            "proxycommand" if out.proxy.is_none() => out.proxy = Some(Proxy::Command(args.join(" "))),
            _ => {}
        }
    }
    out
}

/// `Keyword args…` or `Keyword=args…`; comments and blank lines are `None`.
/// Double quotes group an argument with spaces.
fn split_line(line: &str) -> Option<(String, Vec<String>)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let split_at = line.find(|c: char| c.is_whitespace() || c == '=')?;
    let keyword = line[..split_at].to_ascii_lowercase();
    let rest = line[split_at..].trim_start_matches(|c: char| c.is_whitespace() || c == '=');
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut has = false;
    for c in rest.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                has = true;
            }
            c if c.is_whitespace() && !quoted => {
                if has {
                    args.push(std::mem::take(&mut current));
                    has = false;
                }
            }
            c => {
                current.push(c);
                has = true;
            }
        }
    }
    if has {
        args.push(current);
    }
    Some((keyword, args))
}

/// A `Host` line matches when a positive pattern matches and no negated one does.
fn host_matches(patterns: &[String], alias: &str) -> bool {
    let alias = alias.to_ascii_lowercase();
    let mut matched = false;
    for p in patterns {
        let p = p.to_ascii_lowercase();
        if let Some(neg) = p.strip_prefix('!') {
            if glob(neg.as_bytes(), alias.as_bytes()) {
                return false;
            }
        } else if glob(p.as_bytes(), alias.as_bytes()) {
            matched = true;
        }
    }
    matched
}

/// `*` and `?` wildcards, as in ssh_config PATTERNS.
pub(crate) fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|i| glob(rest, &text[i..])),
        Some((b'?', rest)) => !text.is_empty() && glob(rest, &text[1..]),
        Some((c, rest)) => text.first() == Some(c) && glob(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_and_without_user_and_port() {
        let t = parse_target("alice@example.org:2222").unwrap();
        assert_eq!(
            t,
            Target {
                user: Some("alice".into()),
                host: "example.org".into(),
                port: Some(2222)
            }
        );
        assert_eq!(parse_target("gpu1").unwrap().port, None);
        assert_eq!(parse_target("[::1]:22").unwrap().host, "::1");
        assert_eq!(parse_target("fe80::1").unwrap().port, None);
        for bad in ["", "@h", "u@", "h:0", "h:99999", "a b", "-oProxyCommand=x"] {
            assert!(parse_target(bad).is_err(), "{bad}");
        }
    }

    const CONFIG: &str = r#"
# global first: only a Port here
Host gpu1 gpu1.lab
    HostName 10.0.0.7
    User=alice
    Port 2222
    IdentityFile ~/.ssh/lab_key
    IdentityFile "/keys/with space"

Host *.lab !gpu1.lab
    User bob

Match host other
    User mallory

Host *
    User fallback
    IdentityFile ~/.ssh/%r_%h
"#;

    #[test]
    fn an_alias_takes_hostname_user_port_and_keys_from_the_config() {
        let home = Path::new("/home/me");
        let r = resolve(&parse_target("gpu1").unwrap(), Some(CONFIG), home, "me");
        assert_eq!(r.hostname, "10.0.0.7");
        assert_eq!(r.user, "alice");
        assert_eq!(r.port, 2222);
        assert_eq!(
            r.identity_files,
            vec![
                PathBuf::from("/home/me/.ssh/lab_key"),
                PathBuf::from("/keys/with space"),
                PathBuf::from("/home/me/.ssh/alice_10.0.0.7"),
            ]
        );
        assert_eq!(r.known_hosts_entry(), "[10.0.0.7]:2222");
        assert_eq!(r.known_hosts, vec![PathBuf::from("/home/me/.ssh/known_hosts")]);
    }

    #[test]
    fn the_target_overrides_the_config_and_first_values_win() {
        let home = Path::new("/h");
        let r = resolve(&parse_target("carol@gpu1:22").unwrap(), Some(CONFIG), home, "me");
        assert_eq!((r.user.as_str(), r.port), ("carol", 22));
        assert_eq!(r.known_hosts_entry(), "10.0.0.7");
        // Negated pattern: gpu1.lab is not bob's, and Match blocks are skipped.
        let r = resolve(&parse_target("x.lab").unwrap(), Some(CONFIG), home, "me");
        assert_eq!(r.user, "bob");
        let r = resolve(&parse_target("gpu1.lab").unwrap(), Some(CONFIG), home, "me");
        assert_eq!(r.user, "alice");
        let r = resolve(&parse_target("other").unwrap(), Some(CONFIG), home, "me");
        assert_eq!(r.user, "fallback");
    }

    #[test]
    fn without_a_config_the_defaults_are_sshs() {
        let r = resolve(&parse_target("example.org").unwrap(), None, Path::new("/h"), "me");
        assert_eq!(r.address(), "me@example.org:22");
        assert_eq!(r.identity_files[0], PathBuf::from("/h/.ssh/id_ed25519"));
    }
}
