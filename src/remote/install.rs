//! `hosts.install` (DESIGN §8): copy this daemon's own binary to a host
//! whose OS and architecture match, into a versioned directory that is
//! never changed once complete, then point a `current` symlink at it.
//!
//! On the host:
//!
//! ```text
//! BASE/<version>-<sha256 prefix>/agents     the binary
//! BASE/<version>-<sha256 prefix>/complete   written last: the directory is whole
//! BASE/current -> <version>-<sha256 prefix> switched atomically (ln -s tmp; mv -T)
//! ```
//!
//! `BASE` is `<remote home>/bin` when the host has `--remote-home` (the
//! agents state there), else `${XDG_DATA_HOME:-~/.local/share}/agents/bin`.
//! A directory without `complete` is a failed or interrupted copy: it is
//! never used, and the next install replaces it. The copy goes over a
//! plain exec channel (`cat > file`), so the host needs no SFTP; it is
//! checked with the host's `sha256sum` and by running `--version` there.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::hosts::{DEFAULT_REMOTE_BIN, stored};
use super::link::resolve_host;
use super::ssh::{self, Ssh, shell_quote};
use super::store as host_store;
use crate::api::{ApiError, ErrorCode, HostInstallResult};
use crate::daemon::Daemon;

/// Hex digits of the SHA-256 in a version directory's name: 48 bits tell
/// builds of one version apart; the full hash is checked and kept in
/// `complete`.
const HASH_PREFIX: usize = 12;
/// The name of the marker written last into a complete directory.
const MARKER: &str = "complete";
/// Room kept free beside the binary when checking space (logs, the
/// remote daemon's database).
const SPARE_BYTES: u64 = 16 << 20;
/// A copy gets a minute plus one second per MiB (loopback copies run at
/// hundreds of MiB/s; a slow WAN link at one still finishes).
const UPLOAD_BASE: Duration = Duration::from_secs(60);

/// The running binary: `/proc/self/exe` is the file this process runs even
/// if a rebuild has replaced the path since.
fn own_binary() -> std::path::PathBuf {
    let proc_exe = std::path::PathBuf::from("/proc/self/exe");
    if proc_exe.exists() {
        proc_exe
    } else {
        std::env::current_exe().unwrap_or(proc_exe)
    }
}

/// SHA-256 (hex) and size of the running binary, computed once: the file
/// a process runs does not change under it.
async fn own_digest() -> Result<(String, u64), ApiError> {
    static DIGEST: OnceLock<(String, u64)> = OnceLock::new();
    if let Some(d) = DIGEST.get() {
        return Ok(d.clone());
    }
    let digest = tokio::task::spawn_blocking(|| -> std::io::Result<(String, u64)> {
        let mut file = std::fs::File::open(own_binary())?;
        let mut hasher = Sha256::new();
        let bytes = std::io::copy(&mut file, &mut hasher)?;
        Ok((hex(&hasher.finalize()), bytes))
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(|e| ApiError::internal(format!("cannot read this agents binary: {e}")))?;
    Ok(DIGEST.get_or_init(|| digest).clone())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `uname -sm` output names the OS and architecture this binary
/// was built for (`os`, `arch` as in `std::env::consts`).
fn target_matches(uname: &str, os: &str, arch: &str) -> bool {
    let mut words = uname.split_whitespace();
    let (sys, machine) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let os_ok = match os {
        "linux" => sys == "Linux",
        "macos" => sys == "Darwin",
        other => sys.eq_ignore_ascii_case(other),
    };
    let arch_ok = match arch {
        "x86_64" => matches!(machine, "x86_64" | "amd64"),
        "aarch64" => matches!(machine, "aarch64" | "arm64"),
        "x86" => matches!(machine, "i386" | "i486" | "i586" | "i686"),
        "arm" => machine.starts_with("armv"),
        other => machine == other,
    };
    os_ok && arch_ok
}

/// What a failed write to the host said, as one line.
fn write_failure(host: &str, dir: &str, bytes: u64, stderr: &str) -> ApiError {
    if stderr.contains("No space left") || stderr.contains("Disk quota exceeded") {
        return no_space(host, dir, bytes);
    }
    ApiError::new(
        ErrorCode::RemoteUnavailable,
        format!(
            "copying agents to {host}:{dir} failed: {}",
            crate::text::bounded(&one_line(stderr), 300)
        ),
    )
}

fn no_space(host: &str, dir: &str, bytes: u64) -> ApiError {
    ApiError::new(
        ErrorCode::RemoteUnavailable,
        format!(
            "no space left on {host} for agents in {dir} (it needs {} MiB); free some and install again",
            (bytes + SPARE_BYTES).div_ceil(1 << 20)
        ),
    )
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The facts an install needs from the host, each on a tagged line so a
/// login script that prints cannot be mistaken for them.
struct HostFacts {
    uname: String,
    home: String,
    xdg_data_home: String,
    has_sha256sum: bool,
}

const FACTS: &str = "printf 'agents-uname=%s\\n' \"$(uname -sm)\"; \
     printf 'agents-home=%s\\n' \"$HOME\"; \
     printf 'agents-data=%s\\n' \"${XDG_DATA_HOME:-}\"; \
     if command -v sha256sum >/dev/null 2>&1; then echo agents-sha256sum=yes; fi";

fn parse_facts(stdout: &str) -> HostFacts {
    let get = |tag: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(tag))
            .unwrap_or("")
            .trim()
            .to_string()
    };
    HostFacts {
        uname: get("agents-uname="),
        home: get("agents-home="),
        xdg_data_home: get("agents-data="),
        has_sha256sum: get("agents-sha256sum=") == "yes",
    }
}

/// Where versioned binaries live on the host (see the module comment).
fn base_dir(remote_home: Option<&str>, facts: &HostFacts) -> String {
    let under_home = |p: &str| format!("{}/{}", facts.home.trim_end_matches('/'), p);
    match remote_home {
        Some(h) if h.starts_with('/') => format!("{}/bin", h.trim_end_matches('/')),
        Some(h) => format!("{}/bin", under_home(h.trim_start_matches("~/").trim_end_matches('/'))),
        None if facts.xdg_data_home.starts_with('/') => {
            format!("{}/agents/bin", facts.xdg_data_home.trim_end_matches('/'))
        }
        None => under_home(".local/share/agents/bin"),
    }
}

/// A one-shot command that must succeed; its stdout, or `fail(stderr)`.
async fn run(ssh: &Ssh, command: &str, fail: impl FnOnce(String) -> ApiError) -> Result<String, ApiError> {
    let out = ssh.exec(command).await?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status != Some(0) {
        return Err(fail(stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Streams the running binary into `cat > path` on the host.
async fn upload(ssh: &Ssh, path: &str, bytes: u64, host: &str, dir: &str) -> Result<(), ApiError> {
    let mut stream = ssh.stream(&format!("cat > {}", shell_quote(path))).await?;
    let mut file = tokio::fs::File::open(own_binary())
        .await
        .map_err(|e| ApiError::internal(format!("cannot read this agents binary: {e}")))?;
    let send = async {
        let sent = tokio::io::copy(&mut file, &mut stream.writer).await;
        let _ = stream.writer.shutdown().await;
        sent
    };
    // Drained so the channel's reader task keeps going until the exit status.
    let mut sink = Vec::new();
    let drain = stream.reader.read_to_end(&mut sink);
    let limit = UPLOAD_BASE + Duration::from_secs(bytes >> 20);
    let (sent, _) = tokio::time::timeout(limit, async { tokio::join!(send, drain) })
        .await
        .map_err(|_| {
            ApiError::new(
                ErrorCode::HostUnreachable,
                format!("copying agents to {host} took longer than {}s", limit.as_secs()),
            )
        })?;
    let mut exited = stream.exited.clone();
    let status = tokio::time::timeout(Duration::from_secs(10), exited.wait_for(|s| s.is_some()))
        .await
        .ok()
        .and_then(|r| r.ok().and_then(|s| *s));
    let stderr = String::from_utf8_lossy(&stream.stderr.lock().unwrap_or_else(|p| p.into_inner())).into_owned();
    match (sent, status) {
        (Ok(n), Some(0)) if n == bytes => Ok(()),
        _ if !stderr.trim().is_empty() => Err(write_failure(host, dir, bytes, &stderr)),
        (_, Some(code)) => Err(write_failure(host, dir, bytes, &format!("cat exited {code}"))),
        (_, None) => Err(ApiError::new(
            ErrorCode::HostUnreachable,
            format!("the link to {host} ended while copying agents"),
        )),
    }
}

/// Installs this daemon's binary on host `name` (see the module comment).
pub async fn install(daemon: &Arc<Daemon>, name: &str) -> Result<HostInstallResult, ApiError> {
    let host = stored(daemon, name).await?;
    let resolved = resolve_host(&host)?;
    let (sha256, bytes) = own_digest().await?;
    let ssh = ssh::connect(&host.name, &resolved).await?;
    let result = install_over(daemon, &ssh, &host, &sha256, bytes).await;
    ssh.disconnect().await;
    result
}

async fn install_over(
    daemon: &Arc<Daemon>,
    ssh: &Ssh,
    host: &host_store::HostRow,
    sha256: &str,
    bytes: u64,
) -> Result<HostInstallResult, ApiError> {
    let name = host.name.as_str();
    let unavailable = |why: String| ApiError::new(ErrorCode::RemoteUnavailable, why);
    let facts = parse_facts(&run(ssh, FACTS, |e| unavailable(format!("{name}: {}", one_line(&e)))).await?);
    let (os, arch) = (std::env::consts::OS, std::env::consts::ARCH);
    if !target_matches(&facts.uname, os, arch) {
        return Err(ApiError::new(
            ErrorCode::VersionMismatch,
            format!(
                "{name} is '{}' and this agents is built for {os} {arch}: build agents for that host and put it there yourself",
                facts.uname
            ),
        ));
    }
    if facts.home.is_empty() && !host.remote_home.as_deref().is_some_and(|h| h.starts_with('/')) {
        return Err(unavailable(format!("{name} has no HOME to install agents under")));
    }
    if !facts.has_sha256sum {
        return Err(unavailable(format!(
            "{name} has no sha256sum to verify the copy with; install coreutils there"
        )));
    }
    let version = env!("CARGO_PKG_VERSION");
    let base = base_dir(host.remote_home.as_deref(), &facts);
    let leaf = format!("{version}-{}", &sha256[..HASH_PREFIX]);
    let dir = format!("{base}/{leaf}");
    let (q_base, q_dir) = (shell_quote(&base), shell_quote(&dir));
    let binary = format!("{dir}/agents");
    let current = format!("{base}/current/agents");

    let state = run(
        ssh,
        &format!("if test -f {q_dir}/{MARKER}; then echo complete; elif test -e {q_dir}; then echo partial; else echo absent; fi"),
        |e| unavailable(format!("{name}: {}", one_line(&e))),
    )
    .await?;
    let installed = state.lines().all(|l| l.trim() != "complete");
    if installed {
        // An incomplete directory (no marker) is a failed copy: replace it.
        let room = run(
            ssh,
            &format!("rm -rf {q_dir} && mkdir -p {q_dir} && df -Pk {q_dir} | tail -n 1"),
            |e| write_failure(name, &dir, bytes, &e),
        )
        .await?;
        let available_kib = room.split_whitespace().nth(3).and_then(|n| n.parse::<u64>().ok());
        if available_kib.is_some_and(|kib| kib.saturating_mul(1024) < bytes + SPARE_BYTES) {
            let _ = ssh.exec(&format!("rm -rf {q_dir}")).await;
            return Err(no_space(name, &dir, bytes));
        }
        let part = format!("{dir}/agents.part");
        upload(ssh, &part, bytes, name, &dir).await?;
        let q_part = shell_quote(&part);
        let summed = run(ssh, &format!("sha256sum {q_part}"), |e| {
            unavailable(format!("sha256sum on {name} failed: {}", one_line(&e)))
        })
        .await?;
        let theirs = summed.split_whitespace().next().unwrap_or("");
        if theirs != sha256 {
            let _ = ssh.exec(&format!("rm -rf {q_dir}")).await;
            return Err(unavailable(format!(
                "the copy on {name} has SHA-256 {}, not {sha256}: it was damaged on the way; nothing was switched, install again",
                crate::text::bounded(theirs, 64)
            )));
        }
        let q_binary = shell_quote(&binary);
        let out = ssh
            .exec(&format!(
                "chmod 0755 {q_part} && mv -f {q_part} {q_binary} && {q_binary} --version"
            ))
            .await?;
        let printed = String::from_utf8_lossy(&out.stdout);
        let ran = printed.lines().find(|l| l.starts_with("agents ")).map(str::trim);
        if out.status != Some(0) || ran != Some(format!("agents {version}").as_str()) {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(unavailable(format!(
                "the copy on {name} does not run: '{binary} --version' {}",
                match out.status {
                    Some(0) => format!("printed '{}'", crate::text::bounded(&one_line(&printed), 120)),
                    Some(code) => format!("exited {code}: {}", crate::text::bounded(&one_line(&stderr), 300)),
                    None => "was killed".to_string(),
                }
            )));
        }
        // The marker last: from here on the directory is whole and never changes.
        run(
            ssh,
            &format!("printf '%s\\n' {sha256} > {q_dir}/{MARKER}.tmp && mv -f {q_dir}/{MARKER}.tmp {q_dir}/{MARKER}"),
            |e| write_failure(name, &dir, bytes, &e),
        )
        .await?;
    }
    // `current` is switched with a rename, so it is never missing or half made.
    let link_tmp = format!(".current.{}", ulid::Ulid::new());
    run(
        ssh,
        &format!(
            "cd {q_base} && ln -s {leaf} {link_tmp} && mv -T {link_tmp} current",
            leaf = shell_quote(&leaf)
        ),
        |e| unavailable(format!("switching {base}/current on {name} failed: {}", one_line(&e))),
    )
    .await?;

    // The host follows `current` unless the user named a binary themselves.
    let follow = host.remote_bin == DEFAULT_REMOTE_BIN || host.remote_bin == current;
    let mut remote_bin = host.remote_bin.clone();
    if follow && host.remote_bin != current {
        let (key, bin) = (name.to_string(), current.clone());
        daemon
            .store
            .call(move |c| host_store::set_remote_bin(c, &key, &bin))
            .await
            .map_err(ApiError::internal)?;
        let mut row = host.clone();
        row.remote_bin = current.clone();
        daemon.hosts.for_host(&row);
        remote_bin = current.clone();
    }
    Ok(HostInstallResult {
        name: name.to_string(),
        version: format!("agents {version}"),
        sha256: sha256.to_string(),
        bytes,
        path: binary,
        current,
        installed,
        remote_bin_changed: remote_bin != host.remote_bin,
        remote_bin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_must_have_this_builds_os_and_architecture() {
        assert!(target_matches("Linux x86_64", "linux", "x86_64"));
        assert!(target_matches("Linux aarch64\n", "linux", "aarch64"));
        assert!(target_matches("Darwin arm64", "macos", "aarch64"));
        assert!(!target_matches("Darwin x86_64", "linux", "x86_64"));
        assert!(!target_matches("Linux aarch64", "linux", "x86_64"));
        assert!(!target_matches("", "linux", "x86_64"));
    }

    #[test]
    fn a_full_disk_is_said_plainly() {
        let e = write_failure(
            "box",
            "/x/bin/0.1.0-abc",
            100 << 20,
            "cat: write error: No space left on device",
        );
        assert!(e.message.starts_with("no space left on box"), "{}", e.message);
        assert!(e.message.contains("116 MiB"), "{}", e.message);
        let e = write_failure("box", "/x", 1, "sh: 1: cannot create /x/agents.part: Permission denied");
        assert!(e.message.contains("Permission denied"), "{}", e.message);
        assert!(!e.message.contains('\n'));
    }

    #[test]
    fn binaries_go_under_the_remote_home_or_the_data_directory() {
        let facts = |data: &str| HostFacts {
            uname: "Linux x86_64".into(),
            home: "/home/u".into(),
            xdg_data_home: data.into(),
            has_sha256sum: true,
        };
        assert_eq!(base_dir(Some("/srv/agents/"), &facts("")), "/srv/agents/bin");
        assert_eq!(base_dir(Some("~/state"), &facts("")), "/home/u/state/bin");
        assert_eq!(base_dir(None, &facts("/data")), "/data/agents/bin");
        assert_eq!(base_dir(None, &facts("")), "/home/u/.local/share/agents/bin");
    }

    #[test]
    fn facts_are_read_from_tagged_lines_only() {
        let f = parse_facts(
            "welcome!\nagents-uname=Linux x86_64\nagents-home=/home/u\nagents-data=\nagents-sha256sum=yes\n",
        );
        assert_eq!(f.uname, "Linux x86_64");
        assert_eq!(f.home, "/home/u");
        assert!(f.has_sha256sum && f.xdg_data_home.is_empty());
        assert!(!parse_facts("agents-uname=Linux x86_64\n").has_sha256sum);
    }
}
