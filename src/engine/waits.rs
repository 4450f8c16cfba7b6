//! Waiting for runs to end: `runs.wait` for one run, `runs.wait_children`
//! until every child a run has accepted has ended, with each child's
//! outcome (synthesis only once all of its work is done). While a wait
//! lasts, the runs it waits on count as awaited: their results go to the
//! waiter, not to their parent as a task result.

use std::sync::Arc;
use std::time::Duration;

use super::Engine;
use super::start::record;
use crate::api::{ApiError, ChildrenOutcome, RunRecord};
use crate::store::runs::RunRow;

/// Each attempt of a run is its own live run (account fallback): between
/// two, the run is live with no supervisor for a moment.
const BETWEEN: Duration = Duration::from_secs(10);

/// How often a wait looks again without a change having been told.
const LOOK_AGAIN: Duration = Duration::from_millis(500);

/// Until the run has ended: its final record. `takes_result`: the run
/// counts as awaited meanwhile (its result goes to this waiter, not to its
/// parent).
pub async fn wait(engine: &Arc<Engine>, run: &str, takes_result: bool) -> Result<RunRecord, ApiError> {
    let _awaiting = takes_result.then(|| Awaiting::new(engine, run));
    let mut between = tokio::time::Instant::now() + BETWEEN;
    loop {
        let mut changes = engine.changes.subscribe();
        if let Some(live) = engine.live(run).filter(|l| !*l.ended.borrow()) {
            let mut ended = live.ended.subscribe();
            let _ = ended.wait_for(|e| *e).await;
            between = tokio::time::Instant::now() + BETWEEN;
            continue;
        }
        let now = record(engine, run).await?;
        // A run queued behind another is waited for as long as it waits.
        let queued = engine.queued.lock().contains_key(run);
        if !now.state.is_live() || (!queued && tokio::time::Instant::now() >= between) {
            return Ok(now);
        }
        let _ = tokio::time::timeout(LOOK_AGAIN, changes.recv()).await;
    }
}

/// Until every child of `parent` — those started while waiting too — has
/// ended: the parent's record as it is then, and each child's.
pub async fn children(engine: &Arc<Engine>, parent: &RunRow) -> Result<ChildrenOutcome, ApiError> {
    let mut awaiting: Vec<Awaiting> = Vec::new();
    loop {
        let mut changes = engine.changes.subscribe();
        let rows = engine
            .store
            .runs()
            .children(&parent.id)
            .await
            .map_err(ApiError::internal)?;
        for child in &rows {
            if !awaiting.iter().any(|a| a.run == child.id) {
                awaiting.push(Awaiting::new(engine, &child.id));
            }
        }
        let mut children = Vec::with_capacity(rows.len());
        for child in &rows {
            children.push(record(engine, &child.id).await?);
        }
        if children.iter().all(|c| !c.state.is_live()) {
            return Ok(ChildrenOutcome {
                run: record(engine, &parent.id).await?,
                children,
            });
        }
        let _ = tokio::time::timeout(LOOK_AGAIN, changes.recv()).await;
    }
}

/// A `runs.wait` in flight on a run, counted while it lasts.
struct Awaiting {
    engine: Arc<Engine>,
    run: String,
}

impl Awaiting {
    fn new(engine: &Arc<Engine>, run: &str) -> Awaiting {
        *engine.awaited.lock().entry(run.to_string()).or_default() += 1;
        Awaiting {
            engine: engine.clone(),
            run: run.to_string(),
        }
    }
}

impl Drop for Awaiting {
    fn drop(&mut self) {
        let mut awaited = self.engine.awaited.lock();
        if let Some(n) = awaited.get_mut(&self.run) {
            *n -= 1;
            if *n == 0 {
                awaited.remove(&self.run);
            }
        }
    }
}
