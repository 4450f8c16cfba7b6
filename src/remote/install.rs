//! `hosts.install` (docs/design.md §8): copy this daemon's own binary to a host
//! whose OS and architecture match, into a versioned directory that is
//! never changed once complete, then point a `current` symlink at it.
//!
//! On the host:
//!
//! ```text
//! BASE/<version>-<sha256 prefix>/agents     the binary
//! BASE/<version>-<sha256 prefix>/complete   written last: the directory is whole;
//!                                           its manifest (version, the binary's SHA-256)
//! BASE/current -> <version>-<sha256 prefix> switched atomically (symlink, rename(2))
//! ```
//!
//! A complete directory is made read-only, and its binary is checked
//! against the manifest at every switch (by the switch itself) and at
//! every install that finds it already there (by the host's own tool): a
//! copy changed since is never switched to, and is copied again.
//!
//! `BASE` is `<remote home>/bin` when the host has `--remote-home` (the
//! agents state there), else `${XDG_DATA_HOME:-~/.local/share}/agents/bin`.
//! A directory without `complete` is a failed or interrupted copy: it is
//! never used, and the next install replaces it. The copy goes over a
//! plain exec channel (`cat > file`), so the host needs no SFTP; it is
//! checked with the host's `sha256sum` (or `shasum -a 256` where coreutils are
//! missing, as on macOS) and by running `--version` there.
//! The switch is made by that verified binary (`agents hosts
//! switch-current`, hidden): a temporary symlink renamed onto `current`,
//! which needs no GNU tool on the host.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::Here;
use super::hosts::{DEFAULT_REMOTE_BIN, stored};
use super::ssh::shell_quote;
use super::transport::Transport;
use crate::api::{ApiError, ErrorCode, HostInstallResult, method};
use crate::store::hosts::HostRow;

/// Hex digits of the SHA-256 in a version directory's name: 48 bits tell
/// builds of one version apart; the full hash is checked and kept in
/// `complete`.
const HASH_PREFIX: usize = 12;
/// How `hosts switch-current` names the binary `current` leads to.
pub const EXE_TAG: &str = "agents-exe=";
/// A host's daemon stopped for a new build gets this long to answer again:
/// an SSH connection, the probe, and `serve` starting the daemon (≤ 10 s
/// by the client's bound), with room for one failed attempt.
const DAEMON_BACK: Duration = Duration::from_secs(40);
/// How often the link is asked meanwhile.
const DAEMON_POLL: Duration = Duration::from_millis(100);
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
        Ok((crate::text::hex(&hasher.finalize()), bytes))
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(|e| ApiError::internal(format!("cannot read this agents binary: {e}")))?;
    Ok(DIGEST.get_or_init(|| digest).clone())
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
    /// The command that prints a file's SHA-256, if the host has one.
    sha256: Option<&'static str>,
}

const FACTS: &str = "printf 'agents-uname=%s\\n' \"$(uname -sm)\"; \
     printf 'agents-home=%s\\n' \"$HOME\"; \
     printf 'agents-data=%s\\n' \"${XDG_DATA_HOME:-}\"; \
     if command -v sha256sum >/dev/null 2>&1; then echo agents-sha256=sha256sum; \
     elif command -v shasum >/dev/null 2>&1; then echo agents-sha256=shasum; fi";

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
        sha256: match get("agents-sha256=").as_str() {
            "sha256sum" => Some("sha256sum"),
            "shasum" => Some("shasum -a 256"),
            _ => None,
        },
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
async fn run(there: &Transport, command: &str, fail: impl FnOnce(String) -> ApiError) -> Result<String, ApiError> {
    let out = there.exec(command).await?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status != Some(0) {
        return Err(fail(stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Streams the running binary into `cat > path` on the host.
async fn upload(there: &Transport, path: &str, bytes: u64, host: &str, dir: &str) -> Result<(), ApiError> {
    let mut stream = there.stream(&format!("cat > {}", shell_quote(path))).await?;
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
    let stderr = String::from_utf8_lossy(&stream.stderr.lock()).into_owned();
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

/// On the host: points `base/current` at `base/leaf`, a complete version
/// directory, by renaming a new symlink onto it (rename(2) replaces the old
/// link in one step, so `current` is never missing or half made).
/// Returns the binary `current` now leads to, every symlink resolved: what
/// a daemon started through it reports as its `exe`.
pub fn switch_current(base: &std::path::Path, leaf: &str) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::{Context, bail};
    let plain = !leaf.is_empty() && !leaf.starts_with('.') && !leaf.contains('/');
    if !plain {
        bail!("'{leaf}' is not a version directory name");
    }
    let dir = base.join(leaf);
    let Ok(manifest) = std::fs::read_to_string(dir.join(MARKER)) else {
        bail!(
            "{} is not a complete install (no '{MARKER}' marker); not switching to it",
            dir.display()
        );
    };
    let Some(want) = manifest_hash(&manifest) else {
        bail!(
            "{} has no binary hash in its manifest; not switching to it",
            dir.display()
        );
    };
    let mut hasher = Sha256::new();
    let binary = dir.join("agents");
    std::fs::File::open(&binary)
        .and_then(|mut file| std::io::copy(&mut file, &mut hasher))
        .with_context(|| format!("cannot read {}", binary.display()))?;
    let have = crate::text::hex(&hasher.finalize());
    if have != want.to_ascii_lowercase() {
        bail!(
            "{} does not match its manifest (SHA-256 {have}, not {want}); not switching to it",
            binary.display()
        );
    }
    let tmp = base.join(format!(".current.{}", ulid::Ulid::new()));
    std::os::unix::fs::symlink(leaf, &tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let current = base.join("current");
    if let Err(e) = std::fs::rename(&tmp, &current) {
        let _ = std::fs::remove_file(&tmp);
        bail!("cannot rename a link onto {}: {e}", current.display());
    }
    // The rename is durable once the directory is: a crash right after an
    // install then finds the new `current`, not the old one.
    std::fs::File::open(base)
        .and_then(|dir| dir.sync_all())
        .with_context(|| format!("cannot sync {}", base.display()))?;
    let dir = std::fs::canonicalize(&current).with_context(|| format!("cannot resolve {}", current.display()))?;
    Ok(dir.join("agents"))
}

/// Installs this daemon's binary on host `name` (see the module comment).
pub async fn install(daemon: &Here, name: &str) -> Result<HostInstallResult, ApiError> {
    let host = stored(daemon, name).await?;
    let (sha256, bytes) = own_digest().await?;
    let there = Transport::open(&host).await?;
    let result = install_over(daemon, &there, &host, &sha256, bytes).await;
    there.disconnect().await;
    result
}

async fn install_over(
    daemon: &Here,
    there: &Transport,
    host: &HostRow,
    sha256: &str,
    bytes: u64,
) -> Result<HostInstallResult, ApiError> {
    let name = host.name.as_str();
    let unavailable = |why: String| ApiError::new(ErrorCode::RemoteUnavailable, why);
    let (facts, sha256_tool) = host_facts(there, host).await?;
    let version = env!("CARGO_PKG_VERSION");
    let base = base_dir(host.remote_home.as_deref(), &facts);
    let leaf = format!("{version}-{}", &sha256[..HASH_PREFIX]);
    let dir = format!("{base}/{leaf}");
    let (q_base, q_dir) = (shell_quote(&base), shell_quote(&dir));
    let binary = format!("{dir}/agents");
    let current = format!("{base}/current/agents");

    let state = run(
        there,
        &format!("if test -f {q_dir}/{MARKER}; then echo complete; elif test -e {q_dir}; then echo partial; else echo absent; fi"),
        |e| unavailable(format!("{name}: {}", one_line(&e))),
    )
    .await?;
    let complete = state.lines().any(|l| l.trim() == "complete");
    // Whole once; changed since (a damaged disk, a hand edit)? Copied again.
    let intact = complete && matches_hash(there, &binary, sha256, sha256_tool).await;
    let installed = !intact;
    if installed {
        copy_verified(there, name, &dir, sha256, sha256_tool, bytes).await?;
    }
    // The verified binary itself renames a new link onto `current`: no
    // host tool has a portable way to (`mv -T` is GNU and BusyBox only).
    let switched = run(
        there,
        &format!(
            "{} hosts switch-current {q_base} {}",
            shell_quote(&binary),
            shell_quote(&leaf)
        ),
        |e| unavailable(format!("switching {base}/current on {name} failed: {}", one_line(&e))),
    )
    .await?;
    let exe = switched
        .lines()
        .find_map(|l| l.strip_prefix(EXE_TAG))
        .unwrap_or(&binary)
        .to_string();

    let (remote_bin, moved) = follow_current(daemon, host, &current, &exe).await?;
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
        daemon_restarted: moved.previous_pid.is_some() && moved.problem.is_none(),
        daemon_pid: moved.pid,
        previous_daemon_pid: moved.previous_pid,
        daemon_live_runs: moved.live_runs,
        daemon_problem: moved.problem,
    })
}

/// What the host is and has, checked: its system matches this build, it
/// has a home to install under and a tool to verify the copy with.
async fn host_facts(there: &Transport, host: &HostRow) -> Result<(HostFacts, &'static str), ApiError> {
    let name = host.name.as_str();
    let unavailable = |why: String| ApiError::new(ErrorCode::RemoteUnavailable, why);
    let facts = parse_facts(&run(there, FACTS, |e| unavailable(format!("{name}: {}", one_line(&e)))).await?);
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
    let Some(sha256_tool) = facts.sha256 else {
        return Err(unavailable(format!(
            "{name} has neither sha256sum nor shasum to verify the copy with; install coreutils there"
        )));
    };
    Ok((facts, sha256_tool))
}

/// Copies this binary into `dir` on the host (replacing an incomplete
/// copy), checks its SHA-256 and that it runs, then marks the directory
/// whole.
async fn copy_verified(
    there: &Transport,
    name: &str,
    dir: &str,
    sha256: &str,
    sha256_tool: &str,
    bytes: u64,
) -> Result<(), ApiError> {
    let unavailable = |why: String| ApiError::new(ErrorCode::RemoteUnavailable, why);
    let version = env!("CARGO_PKG_VERSION");
    let q_dir = shell_quote(dir);
    let binary = format!("{dir}/agents");
    // An incomplete directory (no marker) is a failed copy, and a complete
    // one whose binary changed is damaged: either is replaced (made
    // writable first: a released one is read-only).
    let room = run(
        there,
        &format!(
            "{{ chmod -R u+w {q_dir} 2>/dev/null; rm -rf {q_dir}; }} && mkdir -p {q_dir} && df -Pk {q_dir} | tail -n 1"
        ),
        |e| write_failure(name, dir, bytes, &e),
    )
    .await?;
    let available_kib = room.split_whitespace().nth(3).and_then(|n| n.parse::<u64>().ok());
    if available_kib.is_some_and(|kib| kib.saturating_mul(1024) < bytes + SPARE_BYTES) {
        let _ = there.exec(&format!("rm -rf {q_dir}")).await;
        return Err(no_space(name, dir, bytes));
    }
    let part = format!("{dir}/agents.part");
    upload(there, &part, bytes, name, dir).await?;
    let q_part = shell_quote(&part);
    let summed = run(there, &format!("{sha256_tool} {q_part}"), |e| {
        unavailable(format!("{sha256_tool} on {name} failed: {}", one_line(&e)))
    })
    .await?;
    let theirs = summed.split_whitespace().next().unwrap_or("");
    if theirs != sha256 {
        let _ = there.exec(&format!("rm -rf {q_dir}")).await;
        return Err(unavailable(format!(
            "the copy on {name} has SHA-256 {}, not {sha256}: it was damaged on the way; nothing was switched, install again",
            crate::text::bounded(theirs, 64)
        )));
    }
    let q_binary = shell_quote(&binary);
    let out = there
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
    // The manifest last: from here on the directory is whole, and
    // read-only so that nothing changes it by mistake.
    let manifest = shell_quote(&manifest(version, sha256));
    let q_marker = shell_quote(&format!("{dir}/{MARKER}"));
    run(
        there,
        &format!(
            "printf '%s' {manifest} > {q_marker}.tmp && mv -f {q_marker}.tmp {q_marker} \
             && chmod 0555 {q_binary} && chmod 0444 {q_marker} && chmod 0555 {q_dir}"
        ),
        |e| write_failure(name, dir, bytes, &e),
    )
    .await?;
    Ok(())
}

/// A complete directory's manifest: the version, and the binary's SHA-256.
fn manifest(version: &str, sha256: &str) -> String {
    format!("agents {version}\nsha256 {sha256} agents\n")
}

/// The binary's SHA-256 a manifest holds (or, from an install older than
/// manifests, the bare hash the marker held).
fn manifest_hash(manifest: &str) -> Option<&str> {
    manifest.lines().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[..] {
            ["sha256", hash, "agents"] => Some(hash),
            [hash] if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => Some(hash),
            _ => None,
        }
    })
}

/// Whether `binary` on the host still hashes to `sha256`, by the host's
/// own tool.
async fn matches_hash(there: &Transport, binary: &str, sha256: &str, sha256_tool: &str) -> bool {
    let summed = there.exec(&format!("{sha256_tool} {}", shell_quote(binary))).await;
    summed.is_ok_and(|out| {
        out.status == Some(0) && String::from_utf8_lossy(&out.stdout).split_whitespace().next() == Some(sha256)
    })
}

/// The host's `remote_bin` moved onto `current` unless the user named one
/// themselves, and its daemon moved onto the new build if it follows
/// `current`.
async fn follow_current(
    daemon: &Here,
    host: &HostRow,
    current: &str,
    exe: &str,
) -> Result<(String, DaemonMove), ApiError> {
    let name = host.name.as_str();
    // The host follows `current` unless the user named a binary themselves.
    let follow = host.remote_bin == DEFAULT_REMOTE_BIN || host.remote_bin == current;
    let mut remote_bin = host.remote_bin.clone();
    if follow && host.remote_bin != current {
        daemon
            .store()
            .hosts()
            .set_remote_bin(name, current)
            .await
            .map_err(ApiError::internal)?;
        let mut row = host.clone();
        row.remote_bin = current.to_string();
        daemon.hosts().for_host(&row);
        remote_bin = current.to_string();
    }
    // A host that runs what it is told to keeps its daemon: only one that
    // follows `current` would start this build again.
    let moved = if follow {
        let mut row = host.clone();
        row.remote_bin = current.to_string();
        move_daemon(daemon, &row, exe).await
    } else {
        DaemonMove::default()
    };
    Ok((remote_bin, moved))
}

/// What became of the host's daemon after an install.
#[derive(Default)]
struct DaemonMove {
    pid: Option<u32>,
    previous_pid: Option<u32>,
    live_runs: Option<usize>,
    problem: Option<String>,
}

/// After the switch: a daemon on the host that runs another build is asked
/// to stop (`daemon.stop` ends the daemon only; supervisors keep their
/// runs), and the link's next connection runs `serve` from `current`, which
/// starts this build there; it re-adopts every run before it listens. A
/// host with no daemon gets this build's from the first connection.
async fn move_daemon(daemon: &Here, row: &HostRow, exe: &str) -> DaemonMove {
    let link = daemon.hosts().for_host(row);
    let status =
        |link: Arc<super::link::HostLink>| async move { link.ask::<method::DaemonStatus>(crate::api::NoParams).await };
    let problem = |why: String| DaemonMove {
        problem: Some(why),
        ..DaemonMove::default()
    };
    let old = match status(link.clone()).await {
        Ok(old) => old,
        Err(e) => return problem(format!("its daemon was not reached: {}", e.message)),
    };
    if old.exe == exe {
        return DaemonMove {
            pid: Some(old.pid),
            live_runs: Some(old.live_runs),
            ..DaemonMove::default()
        };
    }
    tracing::info!(
        "host {}: its daemon (pid {}) runs '{}', not '{exe}': restarting it",
        row.name,
        old.pid,
        old.exe
    );
    if let Err(e) = link.ask::<method::DaemonStop>(crate::api::NoParams).await {
        return problem(format!(
            "its daemon (pid {}) runs another build and did not stop: {}",
            old.pid, e.message
        ));
    }
    let deadline = tokio::time::Instant::now() + DAEMON_BACK;
    loop {
        let last = match status(link.clone()).await {
            Ok(new) if new.pid != old.pid && new.exe == exe => {
                return DaemonMove {
                    pid: Some(new.pid),
                    previous_pid: Some(old.pid),
                    live_runs: Some(new.live_runs),
                    problem: None,
                };
            }
            Ok(new) if new.pid != old.pid => {
                return DaemonMove {
                    pid: Some(new.pid),
                    previous_pid: Some(old.pid),
                    live_runs: Some(new.live_runs),
                    problem: Some(format!("its daemon came back running '{}', not '{exe}'", new.exe)),
                };
            }
            // The old daemon, answering on its way out.
            Ok(_) => format!("pid {} still answers", old.pid),
            Err(e) => e.message,
        };
        if tokio::time::Instant::now() >= deadline {
            return DaemonMove {
                previous_pid: Some(old.pid),
                problem: Some(format!(
                    "its daemon (pid {}) was stopped and none answered within {}s ({}); the next connection starts it",
                    old.pid,
                    DAEMON_BACK.as_secs(),
                    crate::text::bounded(&one_line(&last), 300)
                )),
                ..DaemonMove::default()
            };
        }
        tokio::time::sleep(DAEMON_POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_gives_its_binarys_hash_as_does_an_older_bare_marker() {
        let hash = "ab".repeat(32);
        assert_eq!(manifest_hash(&manifest("0.1.0", &hash)), Some(hash.as_str()));
        assert_eq!(
            manifest_hash(&format!("{hash}\n")),
            Some(hash.as_str()),
            "an older install's marker"
        );
        assert_eq!(manifest_hash("agents 0.1.0\n"), None);
        assert_eq!(manifest_hash("sha256 abc agents-other\n"), None);
    }

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
            sha256: Some("sha256sum"),
        };
        assert_eq!(base_dir(Some("/srv/agents/"), &facts("")), "/srv/agents/bin");
        assert_eq!(base_dir(Some("~/state"), &facts("")), "/home/u/state/bin");
        assert_eq!(base_dir(None, &facts("/data")), "/data/agents/bin");
        assert_eq!(base_dir(None, &facts("")), "/home/u/.local/share/agents/bin");
    }

    #[test]
    fn current_is_switched_by_rename_and_only_to_a_complete_directory() {
        let base = tempfile::tempdir().unwrap();
        let make = |leaf: &str, complete: bool| {
            let dir = base.path().join(leaf);
            std::fs::create_dir_all(&dir).unwrap();
            let binary = format!("binary of {leaf}");
            std::fs::write(dir.join("agents"), &binary).unwrap();
            if complete {
                let hash = crate::text::hex(&Sha256::digest(binary.as_bytes()));
                std::fs::write(dir.join(MARKER), manifest("0.1.0", &hash)).unwrap();
            }
        };
        make("0.1.0-aaa", true);
        make("0.1.0-bbb", true);
        make("0.1.0-ccc", false);
        let current = base.path().join("current");
        let names = || {
            let mut n: Vec<String> = std::fs::read_dir(base.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            n.sort();
            n
        };
        let exe = switch_current(base.path(), "0.1.0-aaa").unwrap();
        assert_eq!(std::fs::read_link(&current).unwrap().to_str(), Some("0.1.0-aaa"));
        let real = std::fs::canonicalize(base.path()).unwrap();
        assert_eq!(
            exe,
            real.join("0.1.0-aaa/agents"),
            "what a daemon started through it reports"
        );
        // Over an existing link: replaced, not followed into the directory.
        switch_current(base.path(), "0.1.0-bbb").unwrap();
        assert_eq!(std::fs::read_link(&current).unwrap().to_str(), Some("0.1.0-bbb"));
        assert!(!base.path().join("0.1.0-aaa/0.1.0-bbb").exists());
        assert_eq!(
            names(),
            ["0.1.0-aaa", "0.1.0-bbb", "0.1.0-ccc", "current"],
            "no temporary link left"
        );

        let e = switch_current(base.path(), "0.1.0-ccc").unwrap_err().to_string();
        assert!(e.contains("not a complete install"), "{e}");
        for bad in ["", "..", ".current.x", "a/b"] {
            assert!(switch_current(base.path(), bad).is_err(), "{bad:?}");
        }
        assert_eq!(std::fs::read_link(&current).unwrap().to_str(), Some("0.1.0-bbb"));

        // A real directory named `current` is never replaced or written into.
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(other.path().join("current/x")).unwrap();
        std::fs::create_dir_all(other.path().join("0.1.0-aaa")).unwrap();
        std::fs::write(other.path().join("0.1.0-aaa").join(MARKER), "x\n").unwrap();
        assert!(switch_current(other.path(), "0.1.0-aaa").is_err());
        assert!(other.path().join("current/x").is_dir());
        assert_eq!(
            std::fs::read_dir(other.path()).unwrap().count(),
            2,
            "the temporary link is removed"
        );
    }

    #[test]
    fn facts_are_read_from_tagged_lines_only() {
        let f = parse_facts(
            "welcome!\nagents-uname=Linux x86_64\nagents-home=/home/u\nagents-data=\nagents-sha256=sha256sum\n",
        );
        assert_eq!(f.uname, "Linux x86_64");
        assert_eq!(f.home, "/home/u");
        assert_eq!(f.sha256, Some("sha256sum"));
        assert!(f.xdg_data_home.is_empty());
        assert_eq!(parse_facts("agents-sha256=shasum\n").sha256, Some("shasum -a 256"));
        assert_eq!(parse_facts("agents-uname=Linux x86_64\n").sha256, None);
    }
}
