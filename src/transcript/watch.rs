//! File-change notification for transcripts (inotify through `notify`):
//! directories are watched, not files, because a harness creates its
//! transcript (and a subagent's folder) only once there is something to
//! write. Every event is reduced to the paths it names and handed on; what
//! to read is the caller's business.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use notify::{EventKind, RecursiveMode, Watcher as _};

/// Watches directories; calls `on_change` with each path an event names.
pub struct Watcher {
    inner: notify::RecommendedWatcher,
    dirs: HashSet<PathBuf>,
}

/// At most this many directories are watched at once; past it the oldest
/// watches give way (inotify's default limit per user is 8192 and is shared
/// with every other program).
pub const MAX_DIRS: usize = 1024;

impl Watcher {
    pub fn new(on_change: impl Fn(PathBuf) + Send + 'static) -> notify::Result<Watcher> {
        let inner = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            // Access events (open, close without writing) change nothing.
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            for path in event.paths {
                on_change(path);
            }
        })?;
        Ok(Watcher {
            inner,
            dirs: HashSet::new(),
        })
    }

    /// Watches `dir` (not its subfolders). Idempotent; a missing directory
    /// is an error the caller may ignore and retry when it appears.
    pub fn watch_dir(&mut self, dir: &Path) -> notify::Result<()> {
        if self.dirs.contains(dir) {
            return Ok(());
        }
        if self.dirs.len() >= MAX_DIRS
            && let Some(old) = self.dirs.iter().next().cloned()
        {
            let _ = self.inner.unwatch(&old);
            self.dirs.remove(&old);
        }
        self.inner.watch(dir, RecursiveMode::NonRecursive)?;
        self.dirs.insert(dir.to_path_buf());
        Ok(())
    }

    /// Stops watching `dir`; nothing if it was not watched.
    pub fn unwatch_dir(&mut self, dir: &Path) {
        if self.dirs.remove(dir) {
            // A directory deleted meanwhile lost its watch already.
            let _ = self.inner.unwatch(dir);
        }
    }

    pub fn is_watching(&self, dir: &Path) -> bool {
        self.dirs.contains(dir)
    }

    /// The directories watched now.
    pub fn watched(&self) -> impl Iterator<Item = &Path> {
        self.dirs.iter().map(PathBuf::as_path)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn an_append_to_a_file_in_a_watched_directory_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, b"{}\n").unwrap();
        let (tx, rx) = mpsc::channel();
        let mut w = Watcher::new(move |p| {
            let _ = tx.send(p);
        })
        .unwrap();
        w.watch_dir(dir.path()).unwrap();
        w.watch_dir(dir.path()).unwrap();
        assert!(w.is_watching(dir.path()));
        assert_eq!(w.watched().count(), 1);
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{}\n").unwrap();
        f.flush().unwrap();
        let got = rx.recv_timeout(Duration::from_secs(10)).expect("a change event");
        assert_eq!(got.file_name(), path.file_name());
    }
}
