//! `prompts.*`: a run's waiting prompts, listed with why each waits,
//! rewritten, dropped, or typed in now on purpose. A prompt typed in or
//! dropped is no longer waiting, and none of these change it.

use std::sync::Arc;

use crate::api::{ApiError, ErrorCode, PromptChanged, PromptParams, SendResult};
use crate::engine::Engine;
use crate::engine::live::Typed;
use crate::store::prompts::Change;
use crate::store::runs::RunRow;

/// The prompt a change names, or why it names none.
fn named(params: &PromptParams) -> Result<String, ApiError> {
    params
        .prompt
        .clone()
        .ok_or_else(|| ApiError::bad_request("which prompt? (its id: agents prompts RUN)"))
}

/// `prompts.edit`: the waiting prompt's text rewritten.
pub(super) async fn edit(engine: &Arc<Engine>, row: RunRow, params: PromptParams) -> Result<PromptChanged, ApiError> {
    let prompt = named(&params)?;
    let text = params
        .text
        .ok_or_else(|| ApiError::bad_request("the prompt's new text is missing"))?;
    change(engine, &row, &prompt, "PROMPT_EDITED", Change::Edit(text)).await
}

/// `prompts.drop`: the waiting prompt never typed in.
pub(super) async fn drop(engine: &Arc<Engine>, row: RunRow, params: PromptParams) -> Result<PromptChanged, ApiError> {
    let prompt = named(&params)?;
    let dropped = change(engine, &row, &prompt, "PROMPT_DROPPED", Change::Drop).await?;
    if let Some(live) = engine.live(&row.id) {
        let mut held = live.held.lock();
        if held.as_ref().is_some_and(|h| h.prompt_id == prompt) {
            *held = None;
        }
    }
    engine.changed(&row.id);
    Ok(dropped)
}

/// `prompts.send`: the waiting prompt typed in now, on purpose.
pub(super) async fn send(engine: &Arc<Engine>, row: RunRow, params: PromptParams) -> Result<SendResult, ApiError> {
    let prompt = named(&params)?;
    send_now(engine, row, prompt).await
}

/// The run's waiting prompts, each with why it waits (none for an ended
/// run: nothing will be typed into it).
pub(super) async fn list(engine: &Arc<Engine>, row: &RunRow) -> Result<Vec<crate::api::WaitingPrompt>, ApiError> {
    let Some(live) = engine.live(&row.id).filter(|_| row.state.is_live()) else {
        return Ok(Vec::new());
    };
    let id = row.id.clone();
    let mut waiting = engine
        .store
        .prompts()
        .waiting(vec![id])
        .await
        .map_err(ApiError::internal)?;
    let queued = waiting.remove(&row.id).unwrap_or_default();
    Ok(crate::engine::queue::waiting(
        &live,
        &crate::engine::queue::rules(engine),
        queued,
    ))
}

/// Applies `change` to a waiting prompt and records `event` on the run;
/// a prompt no longer waiting is refused.
async fn change(
    engine: &Arc<Engine>,
    row: &RunRow,
    prompt: &str,
    event: &'static str,
    change: Change,
) -> Result<PromptChanged, ApiError> {
    let changed = engine
        .store
        .prompts()
        .change(&row.id, prompt, change, event)
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
async fn send_now(engine: &Arc<Engine>, row: RunRow, prompt: String) -> Result<SendResult, ApiError> {
    let Some(live) = engine.live(&row.id).filter(|_| row.state.is_live()) else {
        return Err(crate::engine::start::ended_state_error(&row));
    };
    let id = prompt.clone();
    let found = engine
        .store
        .prompts()
        .get(&id)
        .await
        .map_err(ApiError::internal)?
        .filter(|p| p.run_id == row.id && p.state == "queued")
        .ok_or_else(|| not_waiting(&row, &prompt))?;
    let question = live.screen.lock().as_ref().is_some_and(|f| !f.is_login_problem());
    if question {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "run {} has a question on its screen: answer it first (agents answer {} …)",
                row.name, row.name
            ),
        ));
    }
    match crate::engine::queue::type_now(engine, &live, &found, &row).await? {
        Typed::Held(held) => Err(ApiError::internal(format!("held: {}", held.held))),
        Typed::Now | Typed::Before => Ok(SendResult {
            prompt_id: found.id,
            state: "delivered".into(),
            why: None,
        }),
    }
}
