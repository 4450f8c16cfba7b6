//! `prompts.*`: a run's waiting prompts, listed with why each waits,
//! rewritten, dropped, or typed in now on purpose. A prompt typed in or
//! dropped is no longer waiting, and none of these change it.

use std::sync::Arc;

use super::Daemon;
use super::link::Typed;
use crate::api::{ApiError, ErrorCode, PromptChanged, PromptParams, SendResult};
use crate::store::prompts;
use crate::store::runs::{self, RunRow};

/// The prompt a change names, or why it names none.
fn named(params: &PromptParams) -> Result<String, ApiError> {
    params
        .prompt
        .clone()
        .ok_or_else(|| ApiError::bad_request("which prompt? (its id: agents prompts RUN)"))
}

/// `prompts.edit`: the waiting prompt's text rewritten.
pub(super) async fn edit(daemon: &Arc<Daemon>, row: RunRow, params: PromptParams) -> Result<PromptChanged, ApiError> {
    let prompt = named(&params)?;
    let text = params
        .text
        .ok_or_else(|| ApiError::bad_request("the prompt's new text is missing"))?;
    let (run, id) = (row.id.clone(), prompt.clone());
    change(daemon, &row, &prompt, "PROMPT_EDITED", move |c| {
        prompts::edit(c, &run, &id, &text)
    })
    .await
}

/// `prompts.drop`: the waiting prompt never typed in.
pub(super) async fn drop(daemon: &Arc<Daemon>, row: RunRow, params: PromptParams) -> Result<PromptChanged, ApiError> {
    let prompt = named(&params)?;
    let (run, id) = (row.id.clone(), prompt.clone());
    let dropped = change(daemon, &row, &prompt, "PROMPT_DROPPED", move |c| {
        prompts::drop_waiting(c, &run, &id)
    })
    .await?;
    if let Some(live) = daemon.live(&row.id) {
        let mut held = live.held.lock().unwrap_or_else(|p| p.into_inner());
        if held.as_ref().is_some_and(|h| h.prompt_id == prompt) {
            *held = None;
        }
    }
    daemon.changed(&row.id);
    Ok(dropped)
}

/// `prompts.send`: the waiting prompt typed in now, on purpose.
pub(super) async fn send(daemon: &Arc<Daemon>, row: RunRow, params: PromptParams) -> Result<SendResult, ApiError> {
    let prompt = named(&params)?;
    send_now(daemon, row, prompt).await
}

/// The run's waiting prompts, each with why it waits (none for an ended
/// run: nothing will be typed into it).
pub(super) async fn list(daemon: &Arc<Daemon>, row: &RunRow) -> Result<Vec<crate::api::WaitingPrompt>, ApiError> {
    let Some(live) = daemon.live(&row.id).filter(|_| row.state.is_live()) else {
        return Ok(Vec::new());
    };
    let id = row.id.clone();
    let mut waiting = daemon
        .store
        .call(move |c| prompts::waiting(c, &[id.as_str()]))
        .await
        .map_err(ApiError::internal)?;
    let queued = waiting.remove(&row.id).unwrap_or_default();
    Ok(super::queue::waiting(&live, &super::queue::rules(daemon), queued))
}

/// Applies `change` to a waiting prompt and records `event` on the run;
/// a prompt no longer waiting is refused.
async fn change(
    daemon: &Arc<Daemon>,
    row: &RunRow,
    prompt: &str,
    event: &'static str,
    change: impl FnOnce(&rusqlite::Connection) -> Result<bool, crate::store::StoreError> + Send + 'static,
) -> Result<PromptChanged, ApiError> {
    let (run, id) = (row.id.clone(), prompt.to_string());
    let changed = daemon
        .store
        .call(move |c| {
            let changed = change(c)?;
            if changed {
                runs::append_event(c, &run, event, &serde_json::json!({ "prompt_id": id }))?;
            }
            Ok(changed)
        })
        .await
        .map_err(ApiError::internal)?;
    if !changed {
        return Err(not_waiting(row, prompt));
    }
    Ok(PromptChanged {
        prompt: prompt.to_string(),
        run: row.id.clone(),
    })
}

fn not_waiting(row: &RunRow, prompt: &str) -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        format!(
            "prompt {prompt} is not waiting for run {} (typed in, dropped, or another run's): agents prompts {}",
            row.name, row.name
        ),
    )
}

/// Types a waiting prompt now: the user's choice, past their draft and
/// the agent's turn; never into a question.
async fn send_now(daemon: &Arc<Daemon>, row: RunRow, prompt: String) -> Result<SendResult, ApiError> {
    let Some(live) = daemon.live(&row.id).filter(|_| row.state.is_live()) else {
        return Err(super::start::ended_state_error(&row));
    };
    let id = prompt.clone();
    let found = daemon
        .store
        .call(move |c| prompts::get_prompt(c, &id))
        .await
        .map_err(ApiError::internal)?
        .filter(|p| p.run_id == row.id && p.state == "queued")
        .ok_or_else(|| not_waiting(&row, &prompt))?;
    let question = live
        .screen
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .is_some_and(|f| !f.is_login_problem());
    if question {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "run {} has a question on its screen: answer it first (agents answer {} …)",
                row.name, row.name
            ),
        ));
    }
    match super::queue::type_now(daemon, &live, &found, &row).await? {
        Typed::Held(held) => Err(ApiError::internal(format!("held: {}", held.held))),
        Typed::Now | Typed::Before => Ok(SendResult {
            prompt_id: found.id,
            state: "delivered".into(),
            why: None,
        }),
    }
}
