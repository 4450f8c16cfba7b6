//! Prompts to a busy agent wait their turn (docs/design.md §4), and the one writer
//! of a live run's activity status: it fuses hooks, the screen and output
//! (`harness::status`) and stores each change with its evidence.

use std::sync::Arc;
use std::time::Instant;

use super::Engine;
use super::live::{HeldPrompt, LiveRun, PromptHow, Typed};
use crate::api::{ActivityStatus, ApiError, ErrorCode, SendResult};
use crate::harness::status::{self, Rules, Verdict};
use crate::protocol::supervisor as wire;
use crate::store::approvals::StatusChange;
use crate::store::runs;

/// What `sup.answer` types for `agents answer` to a run of this harness
/// family: `yes` / `no` are the one key a permission prompt takes (`1`,
/// Esc); other text is typed the way a prompt is — as one paste when the
/// adapter says the harness takes prompts so (`text` + `paste`: the
/// supervisor pastes only if the screen asked for bracketed paste), else
/// keystrokes then Enter. `bytes` is always given: a supervisor older than
/// text answers types those.
/// `yes`/`y` or `no`/`n`, any case: a choice, not words to type.
pub fn choice(answer: &str) -> Option<bool> {
    match answer.to_ascii_lowercase().as_str() {
        "yes" | "y" => Some(true),
        "no" | "n" => Some(false),
        _ => None,
    }
}

pub fn answer_input(family: &str, answer: &str) -> wire::Answer {
    let keys = |bytes: Vec<u8>| wire::Answer {
        id: None,
        bytes,
        text: None,
        paste: false,
        wait_ms: 0,
        enter_ms: 0,
        settle_ms: crate::harness::adapter_for(family).map_or(0, |a| a.answer_settle_ms()),
    };
    let choose = |yes: bool| {
        crate::harness::adapter_for(family)
            .map_or_else(|| if yes { b"1".to_vec() } else { vec![0x1b] }, |a| a.answer_keys(yes))
    };
    match choice(answer) {
        Some(yes) => keys(choose(yes)),
        None => {
            let mut typed = keys(format!("{answer}\r").into_bytes());
            let adapter = crate::harness::adapter_for(family);
            let paste = adapter.is_some_and(|a| a.pastes_prompts());
            let enter_ms = adapter.map_or(0, |a| a.enter_delay_ms());
            if paste || enter_ms > 0 {
                typed.text = Some(answer.into());
                typed.paste = paste;
                typed.enter_ms = enter_ms;
            }
            typed
        }
    }
}

/// Queues a prompt (idempotent by id) and wakes the run's delivery loop.
pub async fn enqueue(engine: &Arc<Engine>, run: &str, prompt_id: &str, text: &str) -> Result<SendResult, ApiError> {
    let (r, p, t) = (run.to_string(), prompt_id.to_string(), text.to_string());
    let prompt = engine
        .store
        .prompts()
        .enqueue(&r, &p, &t)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    if prompt.run_id != run {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("prompt id {prompt_id} belongs to another run"),
        ));
    }
    if let Some(live) = engine.live(run) {
        live.wake.notify_waiters();
        // Give an agent at rest its prompt before answering, so the answer
        // can say `delivered`.
        if prompt.state == "queued" {
            let rules = rules(engine);
            // At rest but for output of the last moment (often the echo of
            // the user's own keys): once it is quiet, so the answer says
            // whether the prompt went in or why it is held.
            if !deliver_next(engine, &live, &rules).await
                && verdict(&live, &rules).status.takes_prompts()
                && let Some(wait) = live.quiet_for(rules.quiet).filter(|_| !live.is_busy())
            {
                tokio::time::sleep(wait).await;
                deliver_next(engine, &live, &rules).await;
            }
        }
    }
    let id = prompt.id.clone();
    let state = engine
        .store
        .prompts()
        .get(&id)
        .await
        .ok()
        .flatten()
        .map(|p| p.state)
        .unwrap_or(prompt.state);
    let held = engine.live(run).and_then(|live| {
        let held = live.held.lock();
        held.as_ref()
            .filter(|h| h.prompt_id == prompt.id)
            .map(|h| h.why.clone())
    });
    Ok(SendResult {
        prompt_id: prompt.id,
        state: if state == "queued" && held.is_some() {
            "held".into()
        } else {
            state
        },
        why: held,
    })
}

/// What a box means for a run's tools, in words `explain` gives.
fn boxed_words(mode: crate::values::sandbox::Sandbox) -> String {
    let network = match mode {
        crate::values::sandbox::Sandbox::On => "its network on",
        crate::values::sandbox::Sandbox::Offline => "no network: a connection fails with 'Network is unreachable'",
    };
    format!(
        "in a bubblewrap box, {network}; a tool that writes outside its work tree fails with \
         'Read-only file system' (EROFS), and one that reads the home's files or the agents state \
         finds nothing there ('No such file or directory') — the box, not the agent"
    )
}

pub(crate) fn rules(engine: &Engine) -> Rules {
    engine.config().engine.status_rules()
}

/// `runs.explain` of a live run: from the evidence in memory.
pub(crate) fn explain(engine: &Engine, row: &runs::RunRow) -> Result<crate::api::StatusExplanation, ApiError> {
    let live = engine.live(&row.id).filter(|_| row.state.is_live()).ok_or_else(|| {
        let why = match (row.state.is_live(), queued_behind(engine, &row.id)) {
            (true, Some(behind)) => format!("is queued behind run {behind}: it has no status until it starts"),
            (true, None) => "has not started yet: it has no status until it does".to_string(),
            (false, _) => format!("has ended ({}): no status is kept for it", row.state.as_str()),
        };
        ApiError::new(ErrorCode::NotRunning, format!("run {} {why}", row.name))
    })?;
    let (now, rules) = (Instant::now(), rules(engine));
    let (verdict, evidence, next) = status::explain(&live.evidence(), &rules, now);
    let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    Ok(crate::api::StatusExplanation {
        run: row.id.clone(),
        name: row.name.clone(),
        status: verdict.status,
        why: verdict.why,
        rule: verdict.rule.as_str().into(),
        rule_words: verdict.rule.words().into(),
        evidence: evidence
            .into_iter()
            .map(|(kind, said, age)| crate::api::EvidenceSeen {
                kind: kind.into(),
                said,
                age_ms: age.map(ms),
            })
            .collect(),
        recheck_ms: verdict.recheck.map(ms),
        next: next.map(|n| crate::api::NextStatus {
            status: n.status,
            rule: n.rule.as_str().into(),
            why: n.why,
        }),
        prompts: Some(prompt_guard(engine, &row.harness)),
        sandbox: row.sandbox.map(boxed_words),
    })
}

/// The name of the run a run queued behind another waits for
/// (`start::start_after`).
pub(crate) fn queued_behind(engine: &Engine, run: &str) -> Option<String> {
    engine.queued.lock().get(run).map(|(_, name)| name.clone())
}

/// What keeps a prompt off the user's draft in a run of `family` (the
/// built-in rules and the user's files, as a new run's supervisor reads
/// them).
fn prompt_guard(engine: &Engine, family: &str) -> String {
    let window = crate::api::ago(std::time::Duration::from_millis(
        engine.engine_as_read().hold_after_typing_ms,
    ));
    let kept = crate::harness::screen_rules::Kept {
        dir: &engine.paths.kept_screen_rules(),
        keeps: false,
    };
    let dir = crate::paths::Paths::screen_rules_dir();
    let (files, _) = dir
        .map(|d| crate::harness::screen_rules::read_user_files_kept(&d, kept))
        .unwrap_or_default();
    let rules = crate::harness::screen_rules::ScreenRules::with_files(&files)
        .unwrap_or_else(|_| crate::harness::screen_rules::ScreenRules::built_in().clone());
    match rules.input_of(family) {
        Some(_) => format!(
            "held while {family}'s input line has text (read from its screen) or a key was typed into it in the last {window}"
        ),
        None => {
            format!("no input-line rule for {family}: held only while a key was typed into it in the last {window}")
        }
    }
}

fn verdict(live: &LiveRun, rules: &Rules) -> Verdict {
    status::fuse(&live.evidence(), &run_rules(live, *rules), Instant::now())
}

/// The configured rules with the run's own quiet window (`rhythm.rs`):
/// every verdict on a live run is made by these.
fn run_rules(live: &LiveRun, configured: Rules) -> Rules {
    Rules {
        quiet: live.rhythm.quiet(configured.quiet),
        ..configured
    }
}

/// What a live run's status rests on now, with how old it is, for
/// `runs.show` and `runs.list` (read from memory: nothing is stored per
/// output to keep an age fresh).
pub fn status_evidence(live: &LiveRun, rules: &Rules, record: &mut crate::api::RunRecord) {
    let v = verdict(live, rules);
    let now = Instant::now();
    let wall = |t: Instant| {
        let ms = crate::clock::now_ms() - now.saturating_duration_since(t).as_millis() as i64;
        crate::store::format_ms(ms)
    };
    record.evidence = Some(v.why);
    record.evidence_at = v.evidence_at.map(wall);
    let since = live.status_since_ms.load(std::sync::atomic::Ordering::Relaxed);
    record.status_since = (since > 0).then(|| crate::store::format_ms(since));
}

/// A live run's queued prompts as listed (`runs.show`, `runs.list`,
/// `prompts.list`), each with why it waits.
pub fn waiting(
    live: &LiveRun,
    rules: &Rules,
    queued: Vec<crate::store::prompts::Waiting>,
) -> Vec<crate::api::WaitingPrompt> {
    if queued.is_empty() {
        return Vec::new();
    }
    let held = live.held.lock().clone();
    let status = verdict(live, rules).status;
    queued
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let held = held.as_ref().filter(|h| i == 0 && h.prompt_id == p.id);
            let why = match (held, i) {
                (Some(h), _) => format!("held: {}", h.why),
                (None, 0) => first_waits_for(status).to_string(),
                (None, 1) => "behind 1 earlier prompt".to_string(),
                (None, n) => format!("behind {n} earlier prompts"),
            };
            crate::api::WaitingPrompt {
                id: p.id,
                text: p.text,
                queued_at: crate::store::format_ms(p.queued_at),
                why,
                held: held.is_some(),
                checked_at: held.map(|h| crate::store::format_ms(h.checked_ms)),
            }
        })
        .collect()
}

/// Why the next prompt of a run in `status` is not typed in yet.
fn first_waits_for(status: ActivityStatus) -> &'static str {
    match status {
        ActivityStatus::Working => "the agent is working",
        ActivityStatus::Stalled => "the agent is working (stalled)",
        ActivityStatus::NeedsApproval => "a question on its screen waits for an answer",
        ActivityStatus::WaitingInput => "the agent waits for something else (a login?)",
        ActivityStatus::Unknown => "its status is unknown",
        _ => "next, once its output is quiet",
    }
}

/// One task per live run: keeps its activity status (the only writer of
/// it), from `status` as stored, and delivers queued prompts when the
/// agent is at rest.
pub fn spawn(engine: Arc<Engine>, live: Arc<LiveRun>, mut status: ActivityStatus) {
    tokio::spawn(async move {
        let mut ended = live.ended.subscribe();
        let mut said_by = status::Rule::Quiet;
        loop {
            if *ended.borrow() {
                return;
            }
            // Listen before looking, so evidence that lands while we look
            // (a hook, output) wakes the wait below instead of being missed.
            let woken = live.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let rules = engine.engine_as_read().status_rules();
            let quiet = live.rhythm.quiet(rules.quiet).as_millis() as u64;
            live.quiet_ms.store(quiet, std::sync::atomic::Ordering::Relaxed);
            let Verdict {
                status: now,
                why,
                recheck,
                rule,
                ..
            } = verdict(&live, &rules);
            // The screen said a turn ended (an Esc), and the turn's `Stop`
            // came after all (a slow hook on a busy machine): the same
            // status, now on the hook's word, recorded as such.
            let confirmed = now == status
                && now == ActivityStatus::Idle
                && rule == status::Rule::Hook
                && said_by == status::Rule::Screen;
            said_by = rule;
            if now != status || confirmed {
                live.status_since_ms
                    .store(crate::clock::now_ms(), std::sync::atomic::Ordering::Relaxed);
                let was = status;
                status = now;
                // A run at work in a slow rhythm gets a longer window, and
                // its supervisor is paced by it.
                if live.rhythm.changed(was, now, rule, rules.quiet) {
                    let quiet = live.rhythm.quiet(rules.quiet).as_millis() as u64;
                    live.quiet_ms.store(quiet, std::sync::atomic::Ordering::Relaxed);
                    live.pace_if_unwatched();
                }
                let question = live.screen.lock().as_ref().and_then(|f| f.question.clone());
                // A stop for an answer is recorded with the mail that
                // asks a team's leader, when the team routes it there.
                let change = StatusChange {
                    run: live.id.clone(),
                    was,
                    now,
                    why,
                    question,
                };
                let asked = engine.store.approvals().status_changed(change).await;
                engine.changed(&live.id);
                if let Ok(Some(asked)) = asked {
                    engine.approval_asked(asked).await;
                }
            }
            // A delivered prompt changes the verdict at once (the agent
            // works on it): looked at again now, not at the next output,
            // which may come too soon after the last one to wake this loop.
            if status.takes_prompts() && deliver_next(&engine, &live, &rules).await {
                continue;
            }
            // Sleep until the verdict could change by itself (a hook
            // decays), output falls quiet (a queued prompt may go in then,
            // whatever the status), or until woken by new evidence, a new
            // prompt, or the end.
            // While the supervisor says output goes on, its word that it
            // paused wakes the loop; no timer need look.
            let falls_quiet = live.quiet_for(rules.quiet).filter(|_| !live.is_busy());
            let wait = recheck.into_iter().chain(falls_quiet).chain(held_retry(&live)).min();
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

/// Types the oldest queued prompt into the run, then Enter; says whether it
/// did.
async fn deliver_next(engine: &Arc<Engine>, live: &Arc<LiveRun>, rules: &Rules) -> bool {
    let _delivering = live.delivery.lock().await;
    // Nothing more goes into a run being cancelled: what waits is
    // undelivered when it ends.
    if live.cancelling.load(std::sync::atomic::Ordering::Acquire) {
        return false;
    }
    // Never type a prompt into a question, or while the agent works: not
    // while hooks say it works, nor while its output is still moving. Nor
    // into a harness that says it is not logged in: it would refuse the
    // prompt; it is held until a login clears the complaint.
    if !verdict(live, rules).status.takes_prompts() || live.quiet_for(rules.quiet).is_some() {
        return false;
    }
    let login = live.screen.lock().as_ref().is_some_and(|f| f.is_login_problem());
    if login {
        return false;
    }
    let id = live.id.clone();
    let Ok((queued, run)) = engine.store.prompts().queued_with_run(&id).await else {
        return false;
    };
    let Some(prompt) = queued.into_iter().next() else {
        return false;
    };
    let hold = Some(engine.engine_as_read().hold_after_typing_ms);
    matches!(
        type_in(engine, live, &prompt, run.as_ref(), hold).await,
        Ok(Typed::Now | Typed::Before)
    )
}

/// Types `prompt` into the run now, past its draft and the user's typing,
/// whatever the agent is doing (never into a question): a user's choice
/// (`prompts.send`).
pub(crate) async fn type_now(
    engine: &Arc<Engine>,
    live: &Arc<LiveRun>,
    prompt: &crate::store::prompts::Prompt,
    run: &runs::RunRow,
) -> Result<Typed, ApiError> {
    let _delivering = live.delivery.lock().await;
    type_in(engine, live, prompt, Some(run), None).await
}

/// Has the supervisor type `prompt` (or hold it, with `hold`), and records
/// what became of it.
async fn type_in(
    engine: &Arc<Engine>,
    live: &Arc<LiveRun>,
    prompt: &crate::store::prompts::Prompt,
    run: Option<&runs::RunRow>,
    hold: Option<u64>,
) -> Result<Typed, ApiError> {
    // The run records its harness family; how that harness takes a prompt
    // is its adapter's to say.
    let adapter = run.and_then(|r| crate::harness::adapter_for(&r.harness));
    let how = PromptHow {
        paste: adapter.is_some_and(|a| a.pastes_prompts()),
        enter_ms: adapter.map_or(0, |a| a.enter_delay_ms()),
        hold_typing_ms: hold,
    };
    let typed = live.link.prompt(&live.id, &prompt.id, &prompt.text, &how).await?;
    match &typed {
        Typed::Held(held) => {
            note_held(engine, live, &prompt.id, held.clone()).await;
            return Ok(typed);
        }
        Typed::Now => took_prompt(live),
        // Typed before, by a daemon that could not record it (killed, or a
        // full disk): the agent took it long ago; only the record is missing.
        Typed::Before => {}
    }
    let was_held = live.held.lock().take().is_some();
    let (id, pid) = (live.id.clone(), prompt.id.clone());
    let on_purpose = hold.is_none();
    let _ = engine.store.prompts().delivered(&id, &pid, on_purpose).await;
    // A delivery by `runs.send` (not this run's status loop) wakes the loop
    // to record `working`: a turn that ends before anything else wakes it
    // (a quick reply's hook) would otherwise leave no sign it ever worked.
    live.wake.notify_waiters();
    if was_held {
        engine.changed(&live.id);
    }
    Ok(typed)
}

/// Notes that the supervisor held the run's next prompt: a `PROMPT_HELD`
/// event when the prompt or the reason is new, and the run said changed
/// (the TUI marks it).
async fn note_held(engine: &Arc<Engine>, live: &LiveRun, prompt_id: &str, held: wire::Held) {
    let now = HeldPrompt {
        prompt_id: prompt_id.to_string(),
        why: held.held,
        retry_at: Instant::now() + std::time::Duration::from_millis(held.retry_ms),
        checked_ms: crate::clock::now_ms(),
    };
    let new = {
        let mut was = live.held.lock();
        let new = was
            .as_ref()
            .is_none_or(|w| w.prompt_id != now.prompt_id || w.why != now.why);
        *was = Some(now.clone());
        new
    };
    if new {
        let data = serde_json::json!({ "prompt_id": now.prompt_id, "why": now.why });
        let _ = engine.store.runs().append_event(&live.id, "PROMPT_HELD", data).await;
        engine.changed(&live.id);
    }
}

/// How long until a held prompt is tried again.
fn held_retry(live: &LiveRun) -> Option<std::time::Duration> {
    let held = live.held.lock();
    held.as_ref()
        .map(|h| h.retry_at.saturating_duration_since(Instant::now()))
}

/// A prompt just typed: the next waits for the agent to take this one and
/// fall quiet again, and a run that reports hooks is working from here
/// until a hook says otherwise.
fn took_prompt(live: &LiveRun) {
    let now = Instant::now();
    live.input_went_in();
    *live.last_output.lock() = Some(now);
    // A run that reports hooks is working from here until a hook says
    // otherwise; its last word (idle, waiting) is now out of date.
    if let Some(held) = live.hook.lock().as_mut() {
        *held = status::HookSeen::new(
            ActivityStatus::Working,
            "prompt delivered".into(),
            now,
            crate::store::now_ms(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::answer_input;
    use crate::protocol::supervisor::Answer;

    /// The keys `bytes`, and with `text` a prompt typed like `sup.prompt`'s.
    fn keys(bytes: &[u8], text: Option<(&str, bool, u64)>) -> Answer {
        Answer {
            id: None,
            bytes: bytes.to_vec(),
            text: text.map(|(t, ..)| t.to_string()),
            paste: text.is_some_and(|(_, paste, _)| paste),
            wait_ms: 0,
            enter_ms: text.map_or(0, |(.., enter_ms)| enter_ms),
            settle_ms: 0,
        }
    }

    #[test]
    fn yes_and_no_are_single_keys_for_every_harness() {
        for family in ["codex", "claude", "shell"] {
            let settled = |mut a: Answer| {
                a.settle_ms = 0;
                a
            };
            assert_eq!(settled(answer_input(family, "yes")), keys(b"1", None));
            assert_eq!(settled(answer_input(family, "N")), keys(&[0x1b], None));
        }
        // Claude Code's answer waits for its dialog to take keys.
        assert_eq!(answer_input("claude", "yes").settle_ms, 1000);
        assert_eq!(answer_input("codex", "yes").settle_ms, 0);
        // opencode's choices are on one row, the first selected: Enter.
        assert_eq!(answer_input("opencode", "yes"), keys(b"\r", None));
    }

    #[test]
    fn a_text_answer_is_pasted_like_a_prompt_only_for_a_harness_that_pastes_prompts() {
        let cache = "use the cache";
        assert_eq!(
            answer_input("codex", cache),
            keys(b"use the cache\r", Some((cache, true, 0)))
        );
        // Claude and Gemini type it, Enter held back until their paste or
        // newline window passed.
        for family in ["claude", "gemini"] {
            let mut typed = answer_input(family, cache);
            typed.settle_ms = 0;
            assert_eq!(typed, keys(b"use the cache\r", Some((cache, false, 100))));
        }
        assert_eq!(answer_input("no-such-family", "x"), keys(b"x\r", None));
    }
}
