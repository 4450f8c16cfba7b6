//! Ends the database refused to take (a full disk): held in memory, shown by
//! every answer about the run, and written again until the write holds.
//!
//! Without this a run whose end could not be stored stayed `running` for
//! good: `wait` never returned, `cancel` said "still starting", and after a
//! restart the reason became "supervisor died". The supervisor keeps its
//! evidence until the end is stored (it is told so, `sup.ack_exit`), so a
//! daemon restarted meanwhile hears the end again.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use super::Engine;
use crate::store::runs::{Ending, RunRow};

/// The first retry waits this long, each next one twice as long.
const RETRY_FIRST: Duration = Duration::from_secs(1);
/// Space freed on the disk is noticed within this long.
const RETRY_MAX: Duration = Duration::from_secs(30);

/// Ends waiting to be stored, by run id.
#[derive(Default)]
pub struct HeldEnds(Mutex<HashMap<String, Ending>>);

impl HeldEnds {
    /// The row as it stands once its held end (if any) is written.
    pub fn apply(&self, mut row: RunRow) -> RunRow {
        let held = self.0.lock();
        if let Some(ending) = held.get(&row.id)
            && row.state.is_live()
        {
            row.state = ending.state;
            row.exit_code = ending.exit_code;
            row.signal = ending.signal.clone();
            row.reason = ending.reason.clone();
            row.ended_at = ending.ended_at;
            row.output_bytes = ending.output_bytes.unwrap_or(row.output_bytes);
        }
        row
    }

    fn release(&self, id: &str) {
        self.0.lock().remove(id);
    }
}

/// Holds an end the database refused and writes it again, with backoff,
/// until it is stored; the returned task ends then.
pub fn hold(engine: &Arc<Engine>, id: &str, mut ending: Ending) -> JoinHandle<()> {
    // Shown, and stored when it is, with the time the run ended, not of
    // the write.
    ending.ended_at.get_or_insert_with(crate::store::now_ms);
    engine.held_ends.0.lock().insert(id.to_string(), ending.clone());
    let (engine, id) = (engine.clone(), id.to_string());
    tokio::spawn(async move {
        let mut wait = RETRY_FIRST;
        let mut tries = 1u32;
        loop {
            tokio::time::sleep(wait).await;
            tries += 1;
            if super::adopt::store_end(&engine, &id, ending.clone()).await.is_ok() {
                break;
            }
            wait = (wait * 2).min(RETRY_MAX);
        }
        engine.held_ends.release(&id);
        tracing::info!("recorded the end of run {id} (try {tries})");
        engine.changed(&id);
    })
}
