//! Where the state lives (docs/design.md §3): `AGENTS_HOME`, the database, the
//! sockets, and each run's folder.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// `sun_path` is 108 bytes on Linux including the NUL; stay clear of it.
const MAX_SOCKET_PATH: usize = 100;

#[derive(Debug, Clone)]
pub struct Paths {
    pub home: PathBuf,
    /// Where sockets go when `home` is too deep for a Unix socket path.
    socket_dir: Option<PathBuf>,
}

/// The environment the daemon and supervisors keep of the one they were
/// started from: where things are, the locale, the ssh-agent the remote
/// links use, and their own log level. Nothing else: a token exported in
/// the shell that happened to start the daemon would otherwise be readable
/// in `/proc/<pid>/environ` of it and of every supervisor for as long as
/// they live. A run's environment is built from what its request carried.
pub fn process_env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| {
            is_place_or_locale(k)
                || matches!(
                    k.as_str(),
                    "AGENTS_HOME" | "AGENTS_LOG" | "SSH_AUTH_SOCK" | crate::clock::TEST_CLOCK_VAR
                )
        })
        .collect()
}

/// Where things are and the locale: what every process of ours keeps and
/// every harness is given (`engine::start`), here or on a host
/// (`remote::link`).
pub const PLACE_AND_LOCALE: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR",
];

/// A name of [`PLACE_AND_LOCALE`], or a `LC_*` locale category.
pub fn is_place_or_locale(name: &str) -> bool {
    PLACE_AND_LOCALE.contains(&name) || name.starts_with("LC_")
}

/// The umask of the daemon and supervisors: every file and folder they
/// create (the database and its WAL, run folders, logs) is owner-only, not
/// only the home that holds them.
pub const OWNER_ONLY: u32 = 0o077;

/// Makes this process create owner-only files from now on; returns the
/// umask it had (the user's), for the harnesses it starts.
pub fn create_owner_only() -> u32 {
    use nix::sys::stat::{Mode, umask};
    umask(Mode::from_bits_truncate(OWNER_ONLY as _)).bits() as u32
}

impl Paths {
    /// The last valid revision of the config file, kept by the daemon.
    pub fn kept_config(&self) -> PathBuf {
        self.home.join("config.valid.toml")
    }

    /// The last valid revision of each of the user's screen-rule files.
    pub fn kept_screen_rules(&self) -> PathBuf {
        self.home.join("screens.valid")
    }

    /// An empty (or missing) `agents.db` beside run folders: the records
    /// of those runs were lost. How many run folders there are.
    pub fn lost_database(&self) -> Option<usize> {
        let empty = std::fs::metadata(self.db()).map_or(true, |m| m.len() == 0);
        let runs = std::fs::read_dir(self.home.join("runs")).map_or(0, |d| d.flatten().count());
        (empty && runs > 0).then_some(runs)
    }

    /// The database and its WAL owner-only, also in a home an older build
    /// created them world-readable in.
    pub fn make_database_owner_only(&self) {
        use std::os::unix::fs::PermissionsExt;
        let db = self.db();
        for suffix in ["", "-wal", "-shm"] {
            let file = std::path::PathBuf::from(format!("{}{suffix}", db.display()));
            let _ = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600));
        }
    }

    /// Resolves `AGENTS_HOME`, else `$XDG_STATE_HOME/agents`, else
    /// `~/.local/state/agents`.
    pub fn from_env() -> Result<Paths> {
        let home = match std::env::var_os("AGENTS_HOME") {
            Some(h) if !h.is_empty() => PathBuf::from(h),
            _ => dirs::state_dir()
                .or_else(|| dirs::home_dir().map(|h| h.join(".local/state")))
                .context("cannot find a state directory: set AGENTS_HOME")?
                .join("agents"),
        };
        Ok(Paths::at(home))
    }

    pub fn at(home: PathBuf) -> Paths {
        let home = std::path::absolute(&home).unwrap_or(home);
        // The longest socket we place under home: runs/<26-char ulid>/run.sock.
        let longest = home.as_os_str().len() + "/runs/".len() + 26 + "/run.sock".len();
        let socket_dir = (longest > MAX_SOCKET_PATH).then(|| short_socket_dir(&home));
        Paths { home, socket_dir }
    }

    /// Creates the state directory (0700) and the runs folder.
    pub fn ensure(&self) -> Result<()> {
        create_private_dir(&self.home)?;
        create_private_dir(&self.home.join("runs"))?;
        if let Some(dir) = &self.socket_dir {
            // Both levels are ours and private: a shared /tmp must not let
            // another user plant or watch the sockets. Checked before (a
            // link is never followed into) and after (one planted between).
            self.trust_socket_dir().map_err(anyhow::Error::msg)?;
            if let Some(parent) = dir.parent() {
                create_private_dir(parent)?;
            }
            create_private_dir(dir)?;
            self.trust_socket_dir().map_err(anyhow::Error::msg)?;
        }
        Ok(())
    }

    /// Whether the sockets' folder outside the state directory (when the
    /// state directory is too deep for them) can be trusted: each of its
    /// two levels a directory, not a link, and ours. A level not made yet
    /// is trusted: [`Paths::ensure`] makes it. The error names the folder
    /// and what is wrong, for every command and `agents doctor`.
    pub fn trust_socket_dir(&self) -> Result<(), String> {
        use std::os::unix::fs::MetadataExt;
        let Some(dir) = &self.socket_dir else {
            return Ok(());
        };
        for level in [dir.parent(), Some(dir.as_path())].into_iter().flatten() {
            let meta = match std::fs::symlink_metadata(level) {
                Ok(meta) => meta,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(format!("cannot read the socket folder {}: {e}", level.display())),
            };
            let wrong = if meta.file_type().is_symlink() {
                "is a symbolic link".to_string()
            } else if !meta.is_dir() {
                "is not a directory".to_string()
            } else if meta.uid() != nix::unistd::getuid().as_raw() {
                format!("belongs to another user (uid {})", meta.uid())
            } else {
                continue;
            };
            return Err(format!(
                "the socket folder {} {wrong}: someone else may have put it there; remove it if it is yours to remove, or set XDG_RUNTIME_DIR or a shorter AGENTS_HOME",
                level.display()
            ));
        }
        Ok(())
    }

    /// What the TUI showed when it was last closed (`tui::kept`).
    pub fn tui_state(&self) -> PathBuf {
        self.home.join("tui.json")
    }

    pub fn db(&self) -> PathBuf {
        self.home.join("agents.db")
    }

    pub fn daemon_socket(&self) -> PathBuf {
        match &self.socket_dir {
            Some(dir) => dir.join("daemon.sock"),
            None => self.home.join("daemon.sock"),
        }
    }

    pub fn daemon_pid(&self) -> PathBuf {
        self.home.join("daemon.pid")
    }

    pub fn daemon_lock(&self) -> PathBuf {
        self.home.join("daemon.lock")
    }

    pub fn daemon_log(&self) -> PathBuf {
        self.home.join("daemon.log")
    }

    /// `daemon.log`, opened to append the daemon's stderr: owner-only, and
    /// never through a link planted in its place (the daemon would append
    /// to whatever file it names). An error says which file and why.
    pub fn open_daemon_log(&self) -> Result<std::fs::File, String> {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let path = self.daemon_log();
        let refused = |why: String| format!("cannot open {}: {why}", path.display());
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            // Not through a link; and a FIFO in its place fails at once
            // (no reader) instead of blocking the start.
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(&path)
            .map_err(|e| match e.raw_os_error() {
                Some(nix::libc::ELOOP) => refused("it is a symbolic link; remove it".into()),
                _ => refused(e.to_string()),
            })?;
        let meta = file.metadata().map_err(|e| refused(e.to_string()))?;
        if !meta.is_file() {
            return Err(refused("it is not a regular file; remove it".into()));
        }
        // One written by an older build was 0644.
        if meta.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| refused(e.to_string()))?;
        }
        Ok(file)
    }

    pub fn run_dir(&self, run: &str) -> PathBuf {
        self.home.join("runs").join(run)
    }

    pub fn run_socket(&self, run: &str) -> PathBuf {
        match &self.socket_dir {
            Some(dir) => dir.join(format!("{run}.sock")),
            None => self.run_dir(run).join("run.sock"),
        }
    }

    pub fn output_log(&self, run: &str) -> PathBuf {
        self.run_dir(run).join("output.log")
    }

    pub fn output_index(&self, run: &str) -> PathBuf {
        self.run_dir(run).join("output.idx")
    }

    /// Written by the supervisor when the run ends: the evidence of how.
    pub fn exit_evidence(&self, run: &str) -> PathBuf {
        self.run_dir(run).join("exit.json")
    }

    pub fn checkpoints(&self, run: &str) -> PathBuf {
        self.run_dir(run).join("checkpoints")
    }

    /// The screen's size from each offset on (`protocol::run_files::SizeChange`).
    pub fn sizes(&self, run: &str) -> PathBuf {
        self.run_dir(run).join("sizes")
    }

    pub fn supervisor_log(&self, run: &str) -> PathBuf {
        self.run_dir(run).join("supervise.log")
    }

    /// The key runs' proofs are made with (`crate::proof`).
    pub fn proof_key(&self) -> PathBuf {
        self.home.join("run-proof.key")
    }

    pub fn worktrees(&self) -> PathBuf {
        self.home.join("worktrees")
    }

    /// Where sockets live when `AGENTS_HOME` is too deep, for `agents doctor`.
    pub fn socket_dir(&self) -> Option<&Path> {
        self.socket_dir.as_deref()
    }

    /// The user's own screen rules (`harness::screen_rules`), beside the
    /// config file.
    pub fn screen_rules_dir() -> Option<PathBuf> {
        Some(Self::config_file()?.parent()?.join("screens"))
    }

    pub fn config_file() -> Option<PathBuf> {
        match std::env::var_os("XDG_CONFIG_HOME") {
            Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir).join("agents/config.toml")),
            _ => dirs::home_dir().map(|h| h.join(".config/agents/config.toml")),
        }
    }
}

/// A short per-home folder for sockets: `$XDG_RUNTIME_DIR/agents-<uid>/<hash>`
/// or `/tmp/agents-<uid>/<hash>`.
fn short_socket_dir(home: &Path) -> PathBuf {
    let uid = nix::unistd::getuid();
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.as_os_str().len() < 40)
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    let digest = Sha256::digest(home.as_os_str().as_encoded_bytes());
    let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    base.join(format!("agents-{uid}")).join(hash)
}

fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let meta = std::fs::metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    if meta.uid() != nix::unistd::getuid().as_raw() {
        anyhow::bail!("{} belongs to another user", dir.display());
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} private", dir.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deep_home_moves_sockets_to_a_short_directory() {
        let deep = PathBuf::from("/tmp").join("d".repeat(120));
        let paths = Paths::at(deep.clone());
        let sock = paths.run_socket("01JABCDEFGHJKMNPQRSTVWXYZ0");
        assert!(sock.as_os_str().len() <= MAX_SOCKET_PATH, "{}", sock.display());
        assert!(paths.daemon_socket().as_os_str().len() <= MAX_SOCKET_PATH);
        assert!(paths.output_log("x").starts_with(&deep));

        let shallow = Paths::at(PathBuf::from("/tmp/h"));
        assert_eq!(shallow.daemon_socket(), PathBuf::from("/tmp/h/daemon.sock"));
    }
}
