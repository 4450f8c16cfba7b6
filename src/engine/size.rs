//! Who sets a run's size: the viewer (a client connection: a TUI, an
//! `agents attach`) that last resized it or typed into it, as tmux's
//! `window-size latest`. When a viewer leaves (detaches, or its connection
//! ends), the run takes the size of the latest viewer still holding one, and
//! once none does, the size it started at (`--size`, the first record of its
//! `sizes` file). So a pane and its run's screen agree while the pane is the
//! latest, and a run nobody shows is back at its own size.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Engine;
use super::live::LiveRun;
use crate::api::ApiError;
use crate::protocol::run_files::SizeChange;

/// A client connection, as far as sizes go.
pub type ViewerId = u64;

pub fn new_viewer() -> ViewerId {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The viewers holding a size for one run, the latest last, and the size
/// last applied.
#[derive(Debug, Default)]
pub struct Holders {
    held: Vec<(ViewerId, (u16, u16))>,
    applied: Option<(u16, u16)>,
}

impl Holders {
    /// `viewer` asks for `size` and is the latest now: the size to apply,
    /// unless it is already the run's.
    pub fn hold(&mut self, viewer: ViewerId, size: (u16, u16)) -> Option<(u16, u16)> {
        self.held.retain(|(v, _)| *v != viewer);
        self.held.push((viewer, size));
        self.apply(size)
    }

    /// `viewer` typed into the run and is the latest now, if it holds a
    /// size: the size to apply, unless it is already the run's.
    pub fn touch(&mut self, viewer: ViewerId) -> Option<(u16, u16)> {
        let at = self.held.iter().position(|(v, _)| *v == viewer)?;
        let held = self.held.remove(at);
        self.held.push(held);
        self.apply(held.1)
    }

    /// `viewer` left: the latest remaining holder's size, else `home`, to
    /// apply unless it is already the run's. Nothing when `viewer` held none.
    pub fn release(&mut self, viewer: ViewerId, home: Option<(u16, u16)>) -> Option<(u16, u16)> {
        let before = self.held.len();
        self.held.retain(|(v, _)| *v != viewer);
        if self.held.len() == before {
            return None;
        }
        let next = self.held.last().map(|(_, s)| *s).or(home)?;
        self.apply(next)
    }

    /// The size last applied, if any was.
    pub fn applied(&self) -> Option<(u16, u16)> {
        self.applied
    }

    /// Whether `viewer` holds a size (then `release` needs the home size).
    pub fn is_held_by(&self, viewer: ViewerId) -> bool {
        self.held.iter().any(|(v, _)| *v == viewer)
    }

    fn apply(&mut self, size: (u16, u16)) -> Option<(u16, u16)> {
        (self.applied != Some(size)).then(|| {
            self.applied = Some(size);
            size
        })
    }
}

/// Resizes the run's PTY and screen (the supervisor records the size in the
/// log), has every screen subscription sent the supervisor's screen at it,
/// and stores it as the run's size.
pub async fn apply(engine: &Engine, live: &LiveRun, (rows, cols): (u16, u16)) -> Result<(), ApiError> {
    live.link.resize(rows, cols).await?;
    // Screens resized their own copies when they asked, at whatever offset
    // they stood; the supervisor's screen is the one to show.
    live.resized.send_modify(|n| *n += 1);
    let _ = engine.store.runs().set_size(&live.id, rows, cols).await;
    Ok(())
}

/// `viewer` asks for a size for the run.
pub async fn hold(engine: &Engine, live: &LiveRun, viewer: ViewerId, size: (u16, u16)) -> Result<(), ApiError> {
    let apply_now = holders(live).hold(viewer, size);
    match apply_now {
        Some(size) => apply(engine, live, size).await,
        None => Ok(()),
    }
}

/// `viewer` typed into the run: its size, if it holds one, is the run's now.
pub async fn touch(engine: &Engine, live: &LiveRun, viewer: ViewerId) {
    let apply_now = holders(live).touch(viewer);
    if let Some(size) = apply_now {
        let _ = apply(engine, live, size).await;
    }
}

/// `viewer` no longer shows the run.
pub async fn release(engine: &Engine, live: &LiveRun, viewer: ViewerId) {
    if !holders(live).is_held_by(viewer) {
        return;
    }
    let home = home_size(engine, &live.id);
    let apply_now = holders(live).release(viewer, home);
    if let Some(size) = apply_now {
        let _ = apply(engine, live, size).await;
    }
}

/// A connection ended: each of `runs` it held a size for is released.
pub async fn release_all(engine: &Arc<Engine>, viewer: ViewerId, runs: &[String]) {
    for run in runs.iter().filter_map(|id| engine.live(id)) {
        release(engine, &run, viewer).await;
    }
}

fn holders(live: &LiveRun) -> parking_lot::MutexGuard<'_, Holders> {
    live.holders.lock()
}

/// The size the run started at: the first of its `sizes` (none for a run
/// from a build that did not keep them).
fn home_size(engine: &Engine, run: &str) -> Option<(u16, u16)> {
    let bytes = std::fs::read(engine.paths.sizes(run)).ok()?;
    SizeChange::decode_all(&bytes).first().map(|c| (c.rows, c.cols))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_viewer_sets_the_size_and_the_run_goes_home_when_all_have_left() {
        let home = Some((24, 80));
        let mut h = Holders::default();
        assert_eq!(h.hold(1, (30, 100)), Some((30, 100)));
        assert_eq!(h.hold(2, (40, 120)), Some((40, 120)));
        assert_eq!(h.hold(2, (40, 120)), None, "already the run's size");
        // Viewer 1 types: it is the latest again.
        assert_eq!(h.touch(1), Some((30, 100)));
        assert_eq!(h.touch(1), None);
        assert_eq!(h.touch(3), None, "a viewer holding no size changes nothing");
        // The latest leaves: the one before it.
        assert_eq!(h.release(1, home), Some((40, 120)));
        assert_eq!(h.release(1, home), None, "released once");
        // The last leaves: the run's own size.
        assert_eq!(h.release(2, home), Some((24, 80)));
        assert!(!h.is_held_by(2));
    }
}
