//! Sandboxed runs (`--sandbox`): the harness started under bubblewrap
//! (`bwrap`), which the supervisor spawns in its place on the run's PTY.
//!
//! Inside, the file system is the machine's system directories read-only
//! (`/usr`, `/etc`, `/opt` and the like), a private `/tmp` and `/run`, and
//! an empty home that cannot be written; then, written through, the run's cwd (or
//! worktree) and the harness's own config home, and read-only the folder
//! its program lives in when that is outside the system directories. Not
//! visible at all: the rest of the home (`~/.ssh`, `~/.aws`,
//! `~/.config/gcloud`, `~/.kube`, `~/.gnupg`, other repositories), `/root`,
//! `/home`, `/srv`, `/mnt`, `/media`, `/var` and the agents state
//! directory. Processes, IPC and the host name are the box's own; the
//! network is the machine's (`on`: the agent must reach its model) or none
//! at all (`offline`). A start that asks for a box and cannot have one is
//! blocked before anything is spawned, saying what to install or enable —
//! never run without it.

use std::path::{Path, PathBuf};

use crate::values::sandbox::Sandbox;

/// What the machine keeps its programs and their settings in: read-only
/// inside the box.
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/gnu",
];

/// Where a run's box is made.
pub struct Box<'a> {
    pub mode: Sandbox,
    /// `bwrap`, as found.
    pub bwrap: &'a Path,
    /// The run's cwd, where the harness starts.
    pub cwd: &'a Path,
    /// What it writes through: the git work tree it is in, else its cwd
    /// ([`writable_root`]).
    pub root: &'a Path,
    /// The user's home, shown empty and read-only.
    pub home: Option<&'a Path>,
    /// Also written through: the harness's own config home.
    pub writable: Vec<PathBuf>,
    /// The harness's program as found on PATH (its folder is shown
    /// read-only when it is outside the system directories).
    pub program: Option<PathBuf>,
    /// The run's hook socket, bound at [`HOOK_SOCKET`] inside.
    pub hook_socket: Option<&'a Path>,
    /// This agents binary, shown read-only for the hooks to run.
    pub agents_bin: Option<&'a Path>,
    /// Files of the run's own folder its launch names (Claude's per-run
    /// settings, Copilot's plugin), outside and where the box shows them
    /// read-only ([`show_run_files`]): never the rest of that folder, whose
    /// supervisor socket answers for the run.
    pub run_files: Vec<(PathBuf, String)>,
}

/// Where a box shows the run's files its launch names: under its own
/// `/run`, so no path of the state directory appears in the box at all.
pub const RUN_FILES: &str = "/run/agents/run";

/// Points each word of `argv` that names a file in `run_dir` (`FILE`, or
/// `--flag=FILE`) at [`RUN_FILES`] instead; returns each file, outside and
/// inside, for [`Box::run_files`].
pub fn show_run_files(argv: &mut [String], run_dir: &Path) -> Vec<(PathBuf, String)> {
    let mut shown = Vec::new();
    for word in argv.iter_mut() {
        let (flag, value) = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => (Some(flag.to_string()), value.to_string()),
            _ => (None, word.clone()),
        };
        let outside = PathBuf::from(&value);
        let Ok(inner) = outside.strip_prefix(run_dir) else {
            continue;
        };
        if inner.as_os_str().is_empty() {
            continue;
        }
        let inside = format!("{RUN_FILES}/{}", inner.display());
        *word = match flag {
            Some(flag) => format!("{flag}={inside}"),
            None => inside.clone(),
        };
        shown.push((outside, inside));
    }
    shown
}

/// Links followed from a program to its real file, at most (as the
/// kernel's own limit of 40 is for a path, far more than any install uses).
const MAX_LINKS: usize = 16;

/// Where a boxed run finds its hook socket (a tmpfs of the box's own).
pub const HOOK_SOCKET: &str = "/run/agents/hook.sock";
/// The harness's variable naming it (`agents hook` writes there).
pub const HOOK_SOCKET_VAR: &str = "AGENTS_HOOK_SOCKET";

impl Box<'_> {
    /// `argv` as it runs in the box: bubblewrap's arguments, then `argv`.
    pub fn wrap(&self, argv: &[String]) -> Vec<String> {
        let mut out: Vec<String> = vec![self.bwrap.display().to_string()];
        let mut arg = |words: &[&str]| out.extend(words.iter().map(|w| w.to_string()));
        arg(&[
            "--die-with-parent",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]);
        if self.mode == Sandbox::Offline {
            arg(&["--unshare-net"]);
        }
        for dir in SYSTEM.iter().filter(|d| Path::new(d).exists()) {
            arg(&["--ro-bind", dir, dir]);
        }
        arg(&["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"]);
        if let Some(socket) = self.hook_socket {
            arg(&["--bind", &socket.display().to_string(), HOOK_SOCKET]);
        }
        // /run holds the resolver's socket on some systems, /etc links there.
        for resolver in ["/run/systemd/resolve", "/run/resolvconf"] {
            if Path::new(resolver).exists() {
                arg(&["--ro-bind", resolver, resolver]);
            }
        }
        // The home: an empty folder of its own, made read-only below once
        // what is bound inside it (a cwd under it) has its place.
        let home = self.home.map(|h| h.display().to_string());
        if let Some(home) = &home {
            arg(&["--tmpfs", home]);
        }
        for folder in self.program_folders() {
            let folder = folder.display().to_string();
            arg(&["--ro-bind", &folder, &folder]);
        }
        // This agents, which the harness's hooks run (it may live in the
        // home, as `~/.cargo/bin/agents` does).
        if let Some(bin) = self.agents_bin.filter(|b| b.is_file()) {
            let bin = bin.display().to_string();
            arg(&["--ro-bind", &bin, &bin]);
        }
        for (outside, inside) in self.run_files.iter().filter(|(f, _)| f.exists()) {
            arg(&["--ro-bind", &outside.display().to_string(), inside]);
        }
        for dir in self.writable.iter().filter(|d| d.is_dir()) {
            let dir = dir.display().to_string();
            arg(&["--bind", &dir, &dir]);
        }
        let root = self.root.display().to_string();
        arg(&["--bind", &root, &root]);
        if let Some(shared) = linked_repository(self.root) {
            let shared = shared.display().to_string();
            arg(&["--bind", &shared, &shared]);
        }
        let cwd = self.cwd.display().to_string();
        arg(&["--chdir", &cwd]);
        // Everything not bound above (the empty home included) is read-only.
        if let Some(home) = &home {
            arg(&["--remount-ro", home]);
        }
        arg(&["--remount-ro", "/", "--"]);
        out.extend(argv.iter().cloned());
        out
    }

    /// The folders of a program outside the system directories (an npm
    /// package's, a user's `~/.local/bin`): the one it was found in on
    /// PATH, each one a link on the way to its real file passes through
    /// (`~/.local/bin/claude` → `…/node_modules/.bin/claude` → the
    /// package's file: each must be found in the box), and its real file's.
    fn program_folders(&self) -> Vec<PathBuf> {
        let Some(program) = self.program.clone() else {
            return Vec::new();
        };
        let mut folders = Vec::new();
        let mut at = program.clone();
        for _ in 0..MAX_LINKS {
            let Some(folder) = at.parent() else { break };
            folders.push(std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf()));
            match std::fs::read_link(&at) {
                Ok(target) => at = folder.join(target),
                Err(_) => break,
            }
        }
        if let Some(real) = std::fs::canonicalize(&program)
            .ok()
            .and_then(|r| r.parent().map(Path::to_path_buf))
        {
            folders.push(real);
        }
        let mut seen = std::collections::HashSet::new();
        folders.retain(|f| f.is_absolute() && !SYSTEM.iter().any(|d| f.starts_with(d)) && seen.insert(f.clone()));
        folders
    }
}

/// What a run in `cwd` may write: the git work tree it is in (its `.git`
/// included, and a linked worktree's shared repository), else `cwd`.
pub fn writable_root(cwd: &Path) -> PathBuf {
    let top = cwd.ancestors().find(|dir| dir.join(".git").exists());
    top.unwrap_or(cwd).to_path_buf()
}

/// A linked worktree's repository (its `.git` file says `gitdir:
/// REPO/.git/worktrees/NAME`): the shared `.git`, which its commits
/// write.
fn linked_repository(root: &Path) -> Option<PathBuf> {
    let file = std::fs::read_to_string(root.join(".git")).ok()?;
    let gitdir = PathBuf::from(file.trim().strip_prefix("gitdir:")?.trim());
    let shared = gitdir.parent()?.parent()?;
    (shared.file_name()? == ".git" && shared.is_dir()).then(|| shared.to_path_buf())
}

/// `bwrap` on `path` (a `PATH` value), if it makes a box here; else what
/// to install or enable, in a line.
pub fn usable(path: Option<&str>) -> Result<PathBuf, String> {
    let found = path
        .unwrap_or("/usr/local/bin:/usr/bin:/bin")
        .split(':')
        .map(|dir| Path::new(dir).join("bwrap"))
        .find(|p| p.is_file());
    let Some(bwrap) = found else {
        return Err("--sandbox needs bubblewrap (bwrap), which is not on PATH: install it \
                    (apt install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap)"
            .into());
    };
    let tried = std::process::Command::new(&bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--unshare-pid",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "true",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("--sandbox: {} does not run: {e}", bwrap.display()))?;
    if !tried.status.success() {
        let said = String::from_utf8_lossy(&tried.stderr);
        return Err(format!(
            "--sandbox: bubblewrap cannot make a box here ({}): user namespaces may be off \
             (sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0)",
            crate::text::bounded(said.trim(), 200)
        ));
    }
    Ok(bwrap)
}

/// The program `argv[0]` names, as `PATH` finds it.
pub fn program(argv0: &str, path: Option<&str>) -> Option<PathBuf> {
    if argv0.contains('/') {
        return Some(PathBuf::from(argv0));
    }
    path?
        .split(':')
        .map(|dir| Path::new(dir).join(argv0))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_files_a_launch_names_are_shown_under_the_boxes_own_run() {
        let mut argv: Vec<String> = [
            "claude",
            "--settings",
            "/s/runs/R/claude-settings.json",
            "--plugin-dir=/s/runs/R/plugin",
            "/s/runs/R",
            "/elsewhere/x",
        ]
        .map(String::from)
        .to_vec();
        let shown = show_run_files(&mut argv, Path::new("/s/runs/R"));
        assert_eq!(
            argv,
            [
                "claude",
                "--settings",
                "/run/agents/run/claude-settings.json",
                "--plugin-dir=/run/agents/run/plugin",
                "/s/runs/R",
                "/elsewhere/x"
            ]
        );
        assert_eq!(
            shown,
            [
                (
                    PathBuf::from("/s/runs/R/claude-settings.json"),
                    "/run/agents/run/claude-settings.json".to_string()
                ),
                (PathBuf::from("/s/runs/R/plugin"), "/run/agents/run/plugin".to_string()),
            ]
        );
    }

    #[test]
    fn a_box_shows_the_system_read_only_and_writes_only_its_cwd_and_config_home() {
        let cwd = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        let made = Box {
            mode: Sandbox::Offline,
            bwrap: Path::new("/usr/bin/bwrap"),
            cwd: cwd.path(),
            root: cwd.path(),
            home: Some(Path::new("/home/u")),
            writable: vec![config.path().to_path_buf(), PathBuf::from("/no/such/dir")],
            program: None,
            hook_socket: Some(Path::new("/state/runs/R/hook.sock")),
            agents_bin: None,
            run_files: Vec::new(),
        };
        let argv = made.wrap(&["sh".into(), "-c".into(), "true".into()]);
        let line = argv.join(" ");
        assert!(line.starts_with("/usr/bin/bwrap --die-with-parent"), "{line}");
        assert!(line.contains("--unshare-net"), "offline: {line}");
        assert!(
            line.contains("--ro-bind /usr /usr") && line.contains("--tmpfs /tmp"),
            "{line}"
        );
        assert!(line.contains("--tmpfs /home/u"), "an empty home: {line}");
        assert!(
            line.contains(&format!("--tmpfs /run --bind /state/runs/R/hook.sock {HOOK_SOCKET}")),
            "the run's hook socket: {line}"
        );
        let config = config.path().display().to_string();
        assert!(line.contains(&format!("--bind {config} {config}")), "{line}");
        assert!(!line.contains("/no/such/dir"), "{line}");
        let cwd = cwd.path().display().to_string();
        assert!(
            line.ends_with(&format!(
                "--bind {cwd} {cwd} --chdir {cwd} --remount-ro /home/u --remount-ro / -- sh -c true"
            )),
            "{line}"
        );
        let on = Box {
            mode: Sandbox::On,
            ..made
        };
        assert!(!on.wrap(&["true".into()]).contains(&"--unshare-net".to_string()));
    }
}
