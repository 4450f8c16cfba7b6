//! Exactly once across a lost answer (issue #5): a caller that did not hear
//! back — the SSH link to this host dropped mid-call — asks again with the
//! same id, and the repeat gets the first attempt's outcome instead of
//! acting a second time. Prompts carry a prompt id (`queue::enqueue`),
//! starts a launch id (`start::start`), and so do resumes and forks of a
//! session (`sessions::resume`, recorded on the run they start), answers an
//! answer id (here).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::Engine;
use crate::api::{ApiError, ErrorCode, SendResult};
use crate::store::runs::RunRow;

/// Ids a caller mints: ULIDs in practice; anything short and plain is taken.
pub fn validate_id(what: &str, id: &str) -> Result<(), ApiError> {
    if !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "bad {what} '{}': use up to 64 letters, digits or '-'",
            crate::text::bounded(id, 80)
        )))
    }
}

/// Starts in progress by launch id: a retry that arrives while the first
/// attempt is still spawning waits for it, then finds its run.
#[derive(Default)]
pub struct Starts {
    held: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Held while a start with a caller's launch id runs.
pub struct StartGuard<'a> {
    starts: &'a Starts,
    launch_id: String,
    lock: Option<tokio::sync::OwnedMutexGuard<()>>,
    entry: Arc<tokio::sync::Mutex<()>>,
}

impl Starts {
    pub async fn hold(&self, launch_id: &str) -> StartGuard<'_> {
        let entry = self.held.lock().entry(launch_id.to_string()).or_default().clone();
        let lock = entry.clone().lock_owned().await;
        StartGuard {
            starts: self,
            launch_id: launch_id.to_string(),
            lock: Some(lock),
            entry,
        }
    }
}

impl Drop for StartGuard<'_> {
    fn drop(&mut self) {
        self.lock.take();
        let mut held = self.starts.held.lock();
        // Ours and the map's: nobody else waits on this id, forget it.
        if Arc::strong_count(&self.entry) == 2 {
            held.remove(&self.launch_id);
        }
    }
}

/// The run a start with this launch id already created.
pub async fn started(engine: &Engine, launch_id: &str) -> Result<Option<RunRow>, ApiError> {
    let key = launch_id.to_string();
    engine.store.runs().by_launch_id(&key).await.map_err(ApiError::internal)
}

/// A `sessions.resume` / `sessions.fork` with a caller's launch id: the
/// run an earlier attempt started (`Err`), or the hold to keep while this
/// one starts it (`Ok`). Held under a key of its own, since the start it
/// makes holds the launch id itself (`start::start`).
pub async fn resuming<'a>(engine: &'a Engine, launch_id: &str) -> Result<Result<StartGuard<'a>, RunRow>, ApiError> {
    validate_id("launch id", launch_id)?;
    let guard = engine.starts.hold(&format!("resume {launch_id}")).await;
    match started(engine, launch_id).await? {
        Some(run) => Ok(Err(run)),
        None => Ok(Ok(guard)),
    }
}

/// A prompt id this run already holds: its state, whatever the run's state
/// is now (a retry after the run ended still learns it was delivered).
pub async fn known_prompt(engine: &Engine, run: &str, prompt_id: &str) -> Result<Option<SendResult>, ApiError> {
    let key = prompt_id.to_string();
    let prompt = engine.store.prompts().get(&key).await.map_err(ApiError::internal)?;
    match prompt {
        None => Ok(None),
        Some(p) if p.run_id != run => Err(ApiError::new(
            ErrorCode::Conflict,
            format!("prompt id {prompt_id} belongs to another run"),
        )),
        Some(p) => Ok(Some(SendResult {
            prompt_id: p.id,
            state: p.state,
            why: p.reason,
        })),
    }
}

/// The outcome an earlier attempt of this answer had: its result, or the
/// refusal again.
pub async fn answered(engine: &Engine, run: &str, answer_id: &str) -> Option<Result<Value, ApiError>> {
    let (r, a) = (run.to_string(), answer_id.to_string());
    let event = engine.store.runs().answer_outcome(&r, &a).await.ok().flatten()?;
    Some(match event.kind.as_str() {
        "ANSWERED" => Ok(event.data.get("result").cloned().unwrap_or(Value::Null)),
        _ => Err(ApiError::new(
            ErrorCode::Conflict,
            event.data["why"]
                .as_str()
                .unwrap_or("the answer was refused")
                .to_string(),
        )),
    })
}

/// Records what became of an answer, so a repeat of its id gets the same.
/// Its words are a message to the agent and are not kept: the event says
/// only which kind of answer it was (`yes`, `no`, or `text`).
pub async fn record_answer(
    engine: &Engine,
    run: &str,
    answer: &str,
    answer_id: Option<&str>,
    outcome: &Result<Value, ApiError>,
) {
    let given = match super::queue::choice(answer) {
        Some(true) => "yes",
        Some(false) => "no",
        None => "text",
    };
    let (kind, data) = match outcome {
        Ok(result) => (
            "ANSWERED",
            json!({ "answer": given, "answer_id": answer_id, "result": result }),
        ),
        Err(e) => (
            "ANSWER_REFUSED",
            json!({ "answer": given, "answer_id": answer_id, "why": e.message }),
        ),
    };
    let id = run.to_string();
    if let Err(e) = engine.store.runs().append_event(&id, kind, data).await {
        // A repeat of its id will not find it: said where an operator looks.
        tracing::error!("run {run}: the outcome of an answer was not recorded: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caller_ids_are_short_and_plain() {
        assert!(validate_id("launch id", "01JDXV3Q7R6Z9M0000000000AB").is_ok());
        assert!(validate_id("launch id", "").is_err());
        assert!(validate_id("launch id", "a b").is_err());
        assert!(validate_id("launch id", "../x").is_err());
        assert!(validate_id("launch id", &"a".repeat(65)).is_err());
    }

    #[tokio::test]
    async fn a_second_start_with_the_same_launch_id_waits_for_the_first() {
        let starts = Arc::new(Starts::default());
        let first = starts.hold("L1").await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let waiter = {
            let starts = starts.clone();
            tokio::spawn(async move {
                let _second = starts.hold("L1").await;
                let _ = tx.send(());
            })
        };
        // Another id is not held up.
        drop(starts.hold("L2").await);
        tokio::task::yield_now().await;
        assert!(rx.try_recv().is_err(), "the retry waits while the first start runs");
        drop(first);
        rx.recv().await.expect("the retry goes on once the first is done");
        waiter.await.unwrap();
        assert!(starts.held.lock().is_empty(), "nothing kept once both are done");
    }
}
