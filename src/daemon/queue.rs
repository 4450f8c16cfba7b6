//! Prompts to a busy agent wait their turn (DESIGN §4), and the engine's
//! activity status. The busy rule, until harness hooks refine it: an agent
//! is busy while its last output is younger than `engine.quiet_ms`.

use std::sync::Arc;
use std::time::Duration;

use super::Daemon;
use super::link::LiveRun;
use crate::api::{ActivityStatus, ApiError, ErrorCode, SendResult};
use crate::store::runs;

/// Queues a prompt (idempotent by id) and wakes the run's delivery loop.
pub async fn enqueue(daemon: &Arc<Daemon>, run: &str, prompt_id: &str, text: &str) -> Result<SendResult, ApiError> {
    let (r, p, t) = (run.to_string(), prompt_id.to_string(), text.to_string());
    let prompt = daemon
        .store
        .call(move |c| {
            let fresh = runs::get_prompt(c, &p)?.is_none();
            let prompt = runs::enqueue_prompt(c, &p, &r, &t)?;
            if fresh {
                runs::append_event(c, &r, "PROMPT_QUEUED", &serde_json::json!({ "prompt_id": p }))?;
            }
            Ok(prompt)
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    if prompt.run_id != run {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("prompt id {prompt_id} belongs to another run"),
        ));
    }
    if let Some(live) = daemon.live(run) {
        live.wake.notify_waiters();
        // Give an idle agent its prompt before answering, so the answer can
        // say `delivered`.
        if prompt.state == "queued" && live.quiet_for(quiet(daemon)).is_none() {
            deliver_next(daemon, &live).await;
        }
    }
    let id = prompt.id.clone();
    let state = daemon
        .store
        .call(move |c| runs::get_prompt(c, &id))
        .await
        .ok()
        .flatten()
        .map(|p| p.state)
        .unwrap_or(prompt.state);
    Ok(SendResult {
        prompt_id: prompt.id,
        state,
    })
}

fn quiet(daemon: &Daemon) -> Duration {
    Duration::from_millis(daemon.config().engine.quiet_ms)
}

/// One task per live run: delivers queued prompts when the agent is quiet,
/// and records working/idle transitions.
pub fn spawn(daemon: Arc<Daemon>, live: Arc<LiveRun>) {
    tokio::spawn(async move {
        let mut ended = live.ended.subscribe();
        let mut status = ActivityStatus::Unknown;
        loop {
            if *ended.borrow() {
                return;
            }
            let quiet = quiet(&daemon);
            let screen = live.screen.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let (now, why) = match (&screen, live.quiet_for(quiet)) {
                (Some(found), _) => (found.status, found.why.clone()),
                (None, Some(_)) => (ActivityStatus::Working, "output in the last moment".to_string()),
                (None, None) => (ActivityStatus::Idle, "no output for a while".to_string()),
            };
            if now != status {
                let was = status;
                status = now;
                let id = live.id.clone();
                let _ = daemon
                    .store
                    .call(move |c| {
                        runs::set_status(c, &id, now, &why)?;
                        // An agent stopped for an answer: INTERRUPT, then
                        // RUN_PAUSED; answered: RUN_RESUMED (DESIGN §4).
                        if now == ActivityStatus::NeedsApproval {
                            runs::append_event(c, &id, "INTERRUPT", &serde_json::json!({ "why": why }))?;
                            runs::append_event(c, &id, "RUN_PAUSED", &serde_json::json!({}))?;
                        } else if was == ActivityStatus::NeedsApproval {
                            runs::append_event(c, &id, "RUN_RESUMED", &serde_json::json!({}))?;
                        }
                        Ok(())
                    })
                    .await;
                daemon.changed(&live.id);
            }
            if status == ActivityStatus::Idle {
                deliver_next(&daemon, &live).await;
            }
            // Sleep until the agent could turn quiet, or until woken by
            // output, a new prompt, or the end.
            let wait = live.quiet_for(quiet);
            let woken = live.wake.notified();
            tokio::select! {
                _ = woken => {}
                _ = ended.changed() => {}
                _ = async {
                    match wait {
                        Some(d) => tokio::time::sleep(d).await,
                        None => std::future::pending().await,
                    }
                } => {}
            }
        }
    });
}

/// Types the oldest queued prompt into the run, then Enter.
async fn deliver_next(daemon: &Arc<Daemon>, live: &Arc<LiveRun>) {
    let _delivering = live.delivery.lock().await;
    // Never type a prompt into a permission question, or while the agent works.
    if live.quiet_for(quiet(daemon)).is_some() || live.screen.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
        return;
    }
    let id = live.id.clone();
    let Ok(queued) = daemon.store.call(move |c| runs::queued_prompts(c, &id)).await else {
        return;
    };
    let Some(prompt) = queued.into_iter().next() else {
        return;
    };
    let mut bytes = prompt.text.clone().into_bytes();
    bytes.push(b'\r');
    if live.link.input(&live.id, bytes).await.is_err() {
        return;
    }
    // Count the delivery as output-to-come, so the next prompt waits for the
    // agent to take this one and fall quiet again.
    *live.last_output.lock().unwrap_or_else(|p| p.into_inner()) = Some(std::time::Instant::now());
    let (run, pid) = (live.id.clone(), prompt.id.clone());
    let _ = daemon
        .store
        .call(move |c| {
            runs::set_prompt_state(c, &pid, "delivered")?;
            runs::append_event(c, &run, "PROMPT_DELIVERED", &serde_json::json!({ "prompt_id": pid }))
        })
        .await;
}
