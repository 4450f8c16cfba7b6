//! Typing into a run: a prompt (its text, bracketed if the program asked,
//! and its Enter, held back for a harness that takes a quick Enter as a
//! newline) and an answer, typed only while the screen shows a question.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::server::{ParsedScreen, Supervised};
use crate::harness::input_line::InputLine;
use crate::protocol::rpc::Request;
use crate::protocol::supervisor as wire;

/// The longest Enter is held back after a prompt's text.
const ENTER_DELAY_MAX: Duration = Duration::from_millis(2000);

/// `enter_ms` of a prompt or answer (`Adapter::enter_delay_ms`), bounded.
pub(super) fn enter_delay(enter_ms: u64) -> Duration {
    Duration::from_millis(enter_ms).min(ENTER_DELAY_MAX)
}

/// Types a prompt and its Enter: at once, or, for a harness that takes a
/// quick Enter as a newline, once the text has been echoed and the screen
/// has then been quiet for `enter` — a gap measured from when the harness
/// took the text, so a harness slowed down by a busy machine still sees it.
/// The Enter never waits more than `ENTER_DELAY_MAX` in all. An Enter the
/// harness dropped is pressed again (`enter_dropped`).
pub(super) fn type_prompt(run: &Arc<Supervised>, text: &str, bracketed: bool, enter: Duration) {
    let mut bytes = prompt_bytes(text, bracketed);
    let return_key = bytes.pop().map(|b| vec![b]).unwrap_or_default();
    let mut parsed = run.parsed.subscribe();
    if enter.is_zero() {
        bytes.extend_from_slice(&return_key);
    }
    run.write_input(bytes);
    let (run, text) = (run.clone(), text.to_string());
    tokio::spawn(async move {
        if !enter.is_zero() {
            let deadline = tokio::time::Instant::now() + ENTER_DELAY_MAX;
            // The echo: the harness has read the text.
            let _ = tokio::time::timeout_at(deadline, parsed.changed()).await;
            // Then quiet for `enter`.
            while tokio::time::Instant::now() < deadline {
                match tokio::time::timeout(enter, parsed.changed()).await {
                    Ok(Ok(())) => continue,
                    _ => break,
                }
            }
            run.write_input(return_key.clone());
        }
        let typed_at = Instant::now();
        for _ in 0..ENTER_AGAIN_MAX {
            if !enter_dropped(&run, &text, typed_at, &mut parsed).await {
                break;
            }
            run.write_input(return_key.clone());
        }
    });
}

/// How many times an Enter the program dropped is pressed again.
const ENTER_AGAIN_MAX: usize = 2;
/// How long the screen stands still, the text still in the input line,
/// before its Enter is taken as dropped.
const ENTER_DROPPED_AFTER: Duration = Duration::from_millis(1500);

/// Whether the Enter typed after `text` was dropped: the screen has stood
/// still `ENTER_DROPPED_AFTER` with the input line holding `text` alone
/// (spaces and line breaks aside), and nobody typed into the run since
/// `typed_at`. A program still starting up drops an Enter now and then
/// (Gemini CLI did, on a busy machine), leaving the prompt unsent in its
/// box; a user presses Enter again, and so does this. A screen that keeps
/// moving is a program at work, which took the Enter.
async fn enter_dropped(
    run: &Supervised,
    text: &str,
    typed_at: Instant,
    parsed: &mut tokio::sync::watch::Receiver<u64>,
) -> bool {
    let squeezed = |s: &str| s.split_whitespace().collect::<String>();
    let want = squeezed(text);
    if want.is_empty() {
        return false;
    }
    loop {
        match tokio::time::timeout(ENTER_DROPPED_AFTER, parsed.changed()).await {
            Ok(Ok(())) => {
                if typed_at.elapsed() > ENTER_DROPPED_AFTER * 4 {
                    return false;
                }
            }
            Ok(Err(_)) => return false,
            Err(_) => break,
        }
    }
    if run.keyed_at.lock().is_some_and(|at| at > typed_at) {
        return false;
    }
    matches!(run.screen.lock().input_line(), InputLine::Draft(d) if squeezed(&d) == want)
}

/// How soon a prompt held for a draft asks again: the draft may be erased
/// any moment, and a look is one screen read.
const DRAFT_RECHECK: Duration = Duration::from_millis(1000);
/// How soon a prompt held for its harness's input line asks again: the
/// line is drawn the moment a turn ends.
const PROMPT_RECHECK: Duration = Duration::from_millis(300);

/// Why a prompt must not be typed now, if it must not: the input line
/// holds text (the user's draft, or a prompt the harness put back after
/// an interrupt), or is not drawn for a harness that drops keys typed
/// before it is (`[input] waits`), or a person typed into the run within `typing` (a
/// family whose input line cannot be read is guarded by this alone).
pub(super) fn held(run: &Supervised, screen: &ParsedScreen, typing: Duration) -> Option<wire::Held> {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    match screen.input_line() {
        InputLine::Draft(_) => {
            return Some(wire::Held {
                held: "the input has text the user typed".into(),
                retry_ms: ms(DRAFT_RECHECK),
            });
        }
        InputLine::Unknown if screen.input_waits() => {
            return Some(wire::Held {
                held: "the harness shows no input line to type into yet".into(),
                retry_ms: ms(PROMPT_RECHECK),
            });
        }
        _ => {}
    }
    let since = (*run.keyed_at.lock())?.elapsed();
    (since < typing).then(|| wire::Held {
        held: format!("the user typed into the run in the last {}", crate::api::ago(typing)),
        retry_ms: ms(typing - since).max(1),
    })
}

/// A prompt as typed into a program, Enter included: the text as one
/// bracketed paste, or as bare keystrokes (see `Adapter::pastes_prompts`).
fn prompt_bytes(text: &str, bracketed: bool) -> Vec<u8> {
    let mut bytes = if bracketed {
        crate::protocol::input::encode_paste(text, true)
    } else {
        text.as_bytes().to_vec()
    };
    bytes.push(b'\r');
    bytes
}

/// The longest an answer waits for its question to be drawn: a harness's
/// hook can announce a permission prompt a moment before the screen shows it.
const ANSWER_WAIT_MAX: Duration = Duration::from_millis(2000);
/// The longest a question must stand before its answer is typed.
const ANSWER_SETTLE_MAX: Duration = Duration::from_millis(3000);

/// Types an answer only if the screen shows a question, read under the
/// emulator's lock at that moment: an answer to a question that is gone must
/// never be typed into whatever is there now. With `wait_ms`, a question
/// still being drawn gets that long to appear. A `text` answer is typed as
/// a prompt is (`paste`: as one bracketed paste if the screen asked for
/// it); else the `bytes` as they are. An answer with an id is typed once:
/// asked again (a daemon that typed it died before recording so), it says
/// so and types nothing — the question on screen now may be the next one.
pub(super) async fn answer(run: &Arc<Supervised>, req: &Request) -> Result<Value, String> {
    let wire::Answer {
        id,
        bytes,
        text,
        paste,
        wait_ms,
        enter_ms,
        settle_ms,
    } = wire::params(req)?;
    let once = id.map(|id| format!("answer {id}"));
    if once.as_deref().is_some_and(|id| run.was_typed(id)) {
        return Ok(json!({ "answered": "typed before under this answer id", "again": true }));
    }
    let wait = Duration::from_millis(wait_ms).min(ANSWER_WAIT_MAX);
    let settle = Duration::from_millis(settle_ms).min(ANSWER_SETTLE_MAX);
    let deadline = tokio::time::Instant::now() + wait;
    let mut parsed = run.parsed.subscribe();
    // When this answer first saw the question (at least that long ago it
    // was drawn); it is typed once the question has stood `settle`.
    let mut seen: Option<tokio::time::Instant> = None;
    loop {
        let found = {
            let screen = run.screen.lock();
            // A question to answer; a login problem is not one.
            let found = screen.waiting_on().filter(|f| !f.is_login_problem());
            let stood = found.is_some() && seen.get_or_insert_with(tokio::time::Instant::now).elapsed() >= settle;
            if found.is_none() {
                seen = None;
            }
            if stood {
                if let Some(id) = &once {
                    run.note_typed(id);
                }
                match &text {
                    Some(text) => type_prompt(run, text, paste && screen.term.bracketed_paste(), enter_delay(enter_ms)),
                    None => run.write_input(bytes.clone()),
                }
            }
            found.filter(|_| stood)
        };
        if let Some(found) = found {
            return Ok(json!({ "answered": found.why }));
        }
        // A question seen, not yet stood long enough: looked at again then.
        if let Some(seen) = seen {
            tokio::time::sleep_until(seen + settle).await;
            continue;
        }
        if tokio::time::timeout_at(deadline, parsed.changed()).await.is_err() {
            return Err("no question is waiting on the run's screen; the answer was not typed".into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::prompt_bytes;

    #[test]
    fn a_prompt_is_pasted_only_into_a_program_that_asked_for_bracketed_paste() {
        assert_eq!(prompt_bytes("hi there", true), b"\x1b[200~hi there\x1b[201~\r");
        assert_eq!(prompt_bytes("a\x1b[201~b", true), b"\x1b[200~ab\x1b[201~\r");
        assert_eq!(prompt_bytes("hi there", false), b"hi there\r");
    }
}
