//! An upgrade loses nothing: when the file this daemon was started from is
//! replaced (`cargo install`, a package upgrade, a rebuild), the daemon
//! re-executes itself on the new binary. Runs live on in their
//! supervisors, which the new image re-adopts as after any restart, and
//! which it keeps talking to through the versioned protocol; clients
//! reconnect. Without this, every new run would be blocked: a running
//! binary whose file was replaced can no longer start `agents supervise`
//! from its own path as it was.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Daemon;
use crate::api::SupervisorBuild;

/// How often the daemon looks at its binary's file. A `stat` every two
/// seconds costs nothing, and a run started right after an upgrade waits
/// at most this long for the new daemon.
pub const CHECK_EVERY: Duration = Duration::from_secs(2);

/// How long a replaced binary has to answer `--version` before it is
/// trusted with the daemon (a copy still being written fails, and is tried
/// again at the next check).
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// How long requests in flight are given to finish before the re-exec.
pub const DRAIN: Duration = Duration::from_secs(3);

/// Which file a path named when it was stamped: replaced files differ in
/// inode, size or modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
}

impl Stamp {
    pub fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(path).ok()?;
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
        })
    }
}

/// The binary this daemon runs, and what its file was when it started.
pub struct Binary {
    pub path: PathBuf,
    started: Option<Stamp>,
    /// A replacement that failed its check, not tried again until the file
    /// changes once more.
    refused: Option<Stamp>,
}

impl Binary {
    pub fn new(path: PathBuf) -> Binary {
        let started = Stamp::of(&path);
        Binary {
            path,
            started,
            refused: None,
        }
    }

    /// The file at our path is another one, and it runs: the binary to
    /// re-execute on.
    pub fn replaced(&mut self) -> Option<&Path> {
        let now = Stamp::of(&self.path)?;
        if self.started.as_ref() == Some(&now) || self.refused.as_ref() == Some(&now) {
            return None;
        }
        if !answers_version(&self.path) {
            tracing::warn!(
                "{} was replaced but does not answer --version; staying on the running build",
                self.path.display()
            );
            self.refused = Some(now);
            return None;
        }
        Some(&self.path)
    }
}

/// `PATH --version` exits 0 within `VERSION_TIMEOUT`.
fn answers_version(path: &Path) -> bool {
    let Ok(mut child) = std::process::Command::new(path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    else {
        return false;
    };
    let deadline = std::time::Instant::now() + VERSION_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// Replaces this process with `agents daemon run` from `binary`: same pid,
/// the same `AGENTS_HOME`, stderr still `daemon.log`. Every descriptor the
/// daemon opened is close-on-exec, so the lock, the socket and the links to
/// supervisors go with the old image. Returns only on failure.
pub fn exec(binary: &Path, home: &Path) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(binary);
    cmd.args(["daemon", "run"])
        .env_clear()
        .envs(crate::paths::process_env())
        .env("AGENTS_HOME", home)
        .env(crate::engine::UMASK_VAR, format!("{:o}", crate::engine::user_umask()));
    if let Some(soft) = crate::engine::limits::user_open_files() {
        cmd.env(crate::engine::limits::OPEN_FILES_VAR, soft.to_string());
    }
    cmd.exec()
}

/// Which binary each of `runs`' supervisors runs (read from `/proc`),
/// counted by binary, most runs first.
pub async fn supervisor_builds(daemon: &Daemon, runs: Vec<String>) -> Vec<SupervisorBuild> {
    let pids = daemon
        .engine
        .store
        .runs()
        .supervisor_pids(runs)
        .await
        .unwrap_or_default();
    let mut builds: Vec<SupervisorBuild> = Vec::new();
    for pid in pids {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "unknown".into());
        match builds.iter_mut().find(|b| b.exe == exe) {
            Some(b) => b.runs += 1,
            None => builds.push(SupervisorBuild { exe, runs: 1 }),
        }
    }
    builds.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.exe.cmp(&b.exe)));
    builds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_replaced_by_rename_is_noticed_and_one_that_does_not_run_is_refused_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agents");
        let script = |body: &str| {
            let tmp = dir.path().join("agents.new");
            std::fs::write(&tmp, format!("#!/bin/sh\n{body}\n")).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::rename(&tmp, &path).unwrap();
        };
        script("exit 0");
        let mut binary = Binary::new(path.clone());
        assert_eq!(binary.replaced(), None, "the file it started from");

        script("exit 1");
        assert_eq!(binary.replaced(), None, "a binary that fails --version is not taken");
        assert!(binary.refused.is_some());
        assert_eq!(binary.replaced(), None);

        script("exit 0");
        assert_eq!(binary.replaced(), Some(path.as_path()));
    }
}
