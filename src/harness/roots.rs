//! Where a run's harness keeps its sessions' files (issue #34). A hook's
//! report is the word of a process inside the run, and an agent can run
//! `agents hook` itself: a transcript path it names is taken only inside
//! the folders its family keeps sessions in, as the run was launched (its
//! config home), and `sessions rm --purge-transcripts` deletes only files
//! inside them. The folders are written into the run's folder at start
//! (paths, no values of the environment's secrets); a run started before
//! had the family's default folders under the user's home.

use std::path::{Component, Path, PathBuf};

use super::SessionQuery;

/// The file in a run's folder that lists its session folders, one a line.
const FILE: &str = "session-roots";

/// Writes `roots` into the run's folder (nothing when there are none).
pub fn keep(run_dir: &Path, roots: &[PathBuf]) -> Result<(), String> {
    if roots.is_empty() {
        return Ok(());
    }
    let mut text = String::new();
    for root in roots {
        let root = root.to_string_lossy();
        if root.contains('\n') {
            return Err(format!("a session folder's path holds a newline: {root:?}"));
        }
        text.push_str(&root);
        text.push('\n');
    }
    let file = run_dir.join(FILE);
    std::fs::create_dir_all(run_dir)
        .and_then(|()| std::fs::write(&file, text))
        .map_err(|e| format!("cannot write {}: {e}", file.display()))
}

/// The session folders of a run of `family` in `cwd`: as its start wrote
/// them, else the family's defaults under the user's home.
pub fn of_run(run_dir: &Path, family: &str, cwd: &str) -> Vec<PathBuf> {
    if let Ok(text) = std::fs::read_to_string(run_dir.join(FILE)) {
        return text.lines().filter(|l| !l.is_empty()).map(PathBuf::from).collect();
    }
    defaults(family, cwd)
}

/// The family's session folders with no config home of its own.
pub fn defaults(family: &str, cwd: &str) -> Vec<PathBuf> {
    let Some(adapter) = super::adapter_for(family) else {
        return Vec::new();
    };
    adapter.session_roots(&SessionQuery {
        cwd: cwd.into(),
        started: std::time::SystemTime::now(),
        config_home: None,
        home: dirs::home_dir(),
    })
}

/// Whether `path` lies inside one of `roots` (below it, not it), links
/// resolved as far as the path exists: a link planted in a session
/// folder does not lead out of it.
pub fn inside(path: &Path, roots: &[PathBuf]) -> bool {
    let plain = path.is_absolute()
        && !path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir));
    if !plain {
        return false;
    }
    let real = resolved(path);
    roots.iter().any(|root| {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
        real.starts_with(&root) && real != root
    })
}

/// `path` with its longest existing part's links resolved.
fn resolved(path: &Path) -> PathBuf {
    for ancestor in path.ancestors() {
        if let Ok(real) = std::fs::canonicalize(ancestor) {
            let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
            return if rest.as_os_str().is_empty() {
                real
            } else {
                real.join(rest)
            };
        }
    }
    path.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_counts_inside_only_below_a_root_and_not_through_a_link_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(".claude/projects");
        std::fs::create_dir_all(root.join("-w")).unwrap();
        let roots = vec![root.clone()];
        assert!(inside(&root.join("-w/s1.jsonl"), &roots));
        assert!(inside(&root.join("-new/s2/subagents/agent-a.jsonl"), &roots));
        assert!(!inside(&root, &roots));
        assert!(!inside(&root.join("-w/../../settings.json"), &roots));
        assert!(!inside(Path::new("relative/s.jsonl"), &roots));
        assert!(!inside(&dir.path().join("config/settings.json"), &roots));
        std::os::unix::fs::symlink(dir.path(), root.join("out")).unwrap();
        assert!(!inside(&root.join("out/settings.json"), &roots));
    }

    #[test]
    fn the_roots_a_start_wrote_are_read_back_else_the_familys_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("runs/01RUN");
        let own = vec![PathBuf::from("/cfg/claude-work/projects")];
        keep(&run_dir, &own).unwrap();
        assert_eq!(of_run(&run_dir, "claude", "/w"), own);
        let other = tempfile::tempdir().unwrap();
        let defaults = of_run(other.path(), "claude", "/w");
        assert!(defaults.iter().all(|d| d.ends_with(".claude/projects")), "{defaults:?}");
        assert!(of_run(other.path(), "shell", "/w").is_empty());
    }
}
