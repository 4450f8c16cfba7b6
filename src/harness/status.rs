//! Status fusion (docs/design.md §7): what a live run's agent is doing, from every
//! piece of evidence the daemon holds, strongest first —
//!
//! 1. a **login problem** on the screen (only moving output is work then);
//! 2. output going on for `overrule` since a hook that said the agent
//!    stopped (idle, waiting, asking), with no question on screen: work
//!    began again with no hook saying so — a prompt typed into Codex in
//!    its terminal, a permission answered outside agents;
//! 3. a **hook** (the harness said so) newer than the last change of the
//!    screen's finding, younger than the decay limit, and — if it says
//!    working — with output within `stall` of it: a turn that went silent
//!    that long ended with no `Stop` (a login that expired, a tool that
//!    died) or hangs. A `Stop` with background work in flight is working
//!    off screen, and does not stall;
//! 4. the **screen** showing a question (a permission or trust prompt); a
//!    still screen that stopped showing a turn in progress after a hook
//!    said working (`[busy]`: an Esc, which fires no hook) outranks that
//!    hook: idle;
//! 5. **output** in the last `quiet` moment: working;
//! 6. a silent working hook: `unknown`, saying how long it has been;
//! 7. a run that reports hooks, whose last hook has decayed with nothing
//!    newer: `unknown` — a status nobody confirmed for that long is not
//!    claimed. A hook that said the agent stopped (idle) never decays: a
//!    quiet agent at its prompt is idle however long;
//! 8. otherwise quiet: idle.
//!
//! A working verdict whose screen (spinners and counters aside) and
//! transcript have been still for `stalled` is **stalled**, saying the
//! limit the screen shows if any (`harness::stall`); an idle one says
//! the limit its turn ended on.
//!
//! Output within `ECHO_WINDOW` of a key a person typed into the run is the
//! echo of that key, not work, and counts as no output at all.
//!
//! A screen change after the last hook outranks it when it ends what the
//! hook said: a question drawn after it, or the permission prompt the hook
//! announced answered (or dismissed, which fires no hook). A question that
//! merely went away hides no other hook. Pure: evidence and a clock in, a
//! verdict out.

use std::time::{Duration, Instant};

use crate::api::ActivityStatus;
use crate::harness::screen::ScreenFinding;

/// A status a hook reported, and when the hook ran.
#[derive(Debug, Clone, PartialEq)]
pub struct HookSeen {
    pub status: ActivityStatus,
    pub why: String,
    pub at: Instant,
    /// Wall-clock ms the hook ran at: hooks run as separate processes, and
    /// a late one must not overwrite a newer one.
    pub at_ms: i64,
    /// The main turn stopped with background work in flight (Claude's
    /// `Stop` naming `background_tasks`): working off screen.
    pub background: bool,
    /// The hook ran inside a subagent, not in the main conversation.
    pub from_subagent: bool,
}

impl HookSeen {
    pub fn new(status: ActivityStatus, why: String, at: Instant, at_ms: i64) -> HookSeen {
        HookSeen {
            status,
            why,
            at,
            at_ms,
            background: false,
            from_subagent: false,
        }
    }
}

/// Everything the daemon knows about a live run's activity.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub hook: Option<HookSeen>,
    pub screen: Option<ScreenFinding>,
    /// When the screen's finding last changed (appeared or went away).
    pub screen_at: Option<Instant>,
    pub last_output: Option<Instant>,
    /// When the stretch of output that `last_output` ends began (output
    /// less than `quiet` apart is one stretch).
    pub output_since: Option<Instant>,
    /// When a person last typed into the run: output just after it is the
    /// echo of their keys, not the agent at work.
    pub keyed_at: Option<Instant>,
    /// Whether the screen shows a turn in progress (a family with a
    /// `[busy]` rule: Claude's `esc to interrupt`), and since when.
    pub turn_shown: Option<(bool, Instant)>,
    /// What tells a stalled turn (`harness::stall`).
    pub stall: StallSeen,
    /// The run's supervisor says output goes on, and will say when it
    /// pauses: output-working needs no clock to fall quiet by (with
    /// thousands of runs at work, a wake-up each window apiece).
    pub output_going: bool,
}

/// What tells a turn that goes nowhere: a limit the screen says the
/// harness hit, a screen still for the stall limit, the transcript's last
/// growth.
#[derive(Debug, Clone, Default)]
pub struct StallSeen {
    pub limit: Option<crate::harness::stall::Limit>,
    /// Since when the screen (less its spinners and counters) has been
    /// still, once its supervisor says it has been for the stall limit.
    pub still_since: Option<Instant>,
    /// When the run's transcript last grew.
    pub transcript_at: Option<Instant>,
}

/// Output this soon after a key typed into the run is its echo (a program
/// redraws its input line within a frame or two; a busy machine's
/// scheduling adds some).
pub const ECHO_WINDOW: Duration = Duration::from_millis(750);

impl Evidence {
    /// The evidence less output that was only the echo of the user's keys.
    fn without_echo(&self) -> Evidence {
        let echo = match (self.keyed_at, self.last_output) {
            (Some(key), Some(out)) => out >= key && out.duration_since(key) <= ECHO_WINDOW,
            _ => false,
        };
        match echo {
            true => Evidence {
                last_output: None,
                output_since: None,
                ..self.clone()
            },
            false => self.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Output younger than this means working.
    pub quiet: Duration,
    /// A hook's word holds this long without confirmation.
    pub decay: Duration,
    /// A working hook with no output for this long is not believed.
    pub stall: Duration,
    /// Output going on this long since a hook that said the agent stopped
    /// overrules that hook.
    pub overrule: Duration,
    /// A working run whose screen and transcript were still this long is
    /// stalled (none: never).
    pub stalled: Option<Duration>,
}

/// Which rule of the fusion decided (the module's list, in its order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The screen says the harness is not logged in (output still moving
    /// is work even then).
    Login,
    /// Output going on since a hook that said the agent stopped.
    Overruled,
    /// A hook newer than the screen's last change, not yet decayed.
    Hook,
    /// The screen shows a question.
    Screen,
    /// Output in the last quiet moment.
    Output,
    /// A working hook with no output since for the stall limit.
    Silent,
    /// Working, but the screen and the transcript have been still for
    /// the stalled limit.
    Stalled,
    /// The last hook decayed, nothing newer: not claimed.
    Decayed,
    /// Nothing else: quiet.
    Quiet,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Login => "login",
            Rule::Overruled => "overruled",
            Rule::Hook => "hook",
            Rule::Screen => "screen",
            Rule::Output => "output",
            Rule::Silent => "silent",
            Rule::Stalled => "stalled",
            Rule::Decayed => "decayed",
            Rule::Quiet => "quiet",
        }
    }

    /// The rule in words, for `agents explain`.
    pub fn words(self) -> &'static str {
        match self {
            Rule::Login => "a login problem on the screen outranks every hook; only moving output is work then",
            Rule::Overruled => {
                "output going on since a hook that said the agent stopped, no question on screen: work began with no hook saying so"
            }
            Rule::Hook => "a hook newer than the screen's last change, younger than the decay limit",
            Rule::Screen => "the screen shows a question",
            Rule::Output => "output in the last quiet moment: working",
            Rule::Silent => {
                "a hook said working, but no output came for the stall limit: the turn ended with no Stop, or hangs"
            }
            Rule::Stalled => {
                "working, but neither the screen (spinners and counters aside) nor the transcript changed for the stalled limit"
            }
            Rule::Decayed => "the last hook decayed with nothing newer: the status is not claimed",
            Rule::Quiet => "no output for the quiet moment, no hook, no question: idle",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub status: ActivityStatus,
    pub why: String,
    pub rule: Rule,
    /// When the verdict could change with no new evidence (output falling
    /// quiet, a hook decaying): look again then.
    pub recheck: Option<Duration>,
    /// When the evidence behind it was seen: the hook ran, the screen's
    /// finding changed, the last output came (none: nothing seen yet).
    pub evidence_at: Option<Instant>,
}

/// Keeps the newer of the held hook and `seen`, by the time each ran. A
/// subagent at work while the main turn waits on background work confirms
/// that wait (it is the background work) rather than replacing it.
pub fn keep_newer(held: &mut Option<HookSeen>, seen: HookSeen) {
    if let Some(h) = held.as_mut()
        && h.background
        && seen.from_subagent
        && seen.status == ActivityStatus::Working
    {
        if seen.at_ms >= h.at_ms {
            (h.at, h.at_ms) = (seen.at, seen.at_ms);
        }
        return;
    }
    if held.as_ref().is_none_or(|h| seen.at_ms >= h.at_ms) {
        *held = Some(seen);
    }
}

/// How a hook stands against the output since it.
struct Standing {
    /// Output has gone on for `overrule` since a hook that said the agent
    /// stopped: how long.
    overruled_for: Option<Duration>,
    /// Until such output would overrule it.
    overrule_left: Option<Duration>,
    /// A working hook's time left before its silence stalls it (zero:
    /// stalled); none for a hook that cannot stall.
    stall_left: Option<Duration>,
}

fn standing(ev: &Evidence, h: &HookSeen, rules: &Rules, now: Instant) -> Standing {
    let age = |t: Instant| now.saturating_duration_since(t);
    let moving = ev.last_output.is_some_and(|t| age(t) < rules.quiet);
    let stretch = ev
        .output_since
        .filter(|since| moving && *since > h.at && ev.screen.is_none() && h.status != ActivityStatus::Working)
        .map(age);
    // The screen showing the turn in progress (`[busy]`) is evidence the
    // turn goes on however long output pauses: a busy machine may starve
    // the harness's redraws for seconds, but no turn ends while its sign
    // stays (an Esc takes it away, rule 4).
    let shown_going = matches!(ev.turn_shown, Some((true, _)));
    let stall_left = (h.status == ActivityStatus::Working && !h.background && !shown_going).then(|| {
        let silent_since = ev.last_output.map_or(h.at, |t| t.max(h.at));
        rules.stall.saturating_sub(age(silent_since))
    });
    Standing {
        overruled_for: stretch.filter(|d| *d >= rules.overrule),
        overrule_left: stretch
            .map(|d| rules.overrule.saturating_sub(d))
            .filter(|d| !d.is_zero()),
        stall_left,
    }
}

pub fn fuse(ev: &Evidence, rules: &Rules, now: Instant) -> Verdict {
    let verdict = judge(ev, rules, now);
    match verdict.status {
        ActivityStatus::Working => stalled(ev, rules, now, verdict),
        ActivityStatus::Idle => limited(ev, verdict),
        _ => verdict,
    }
}

/// A working verdict, stalled if neither the screen nor the transcript
/// changed for the limit; what it waits on, if the screen says a limit.
fn stalled(ev: &Evidence, rules: &Rules, now: Instant, working: Verdict) -> Verdict {
    let (Some(after), Some(still)) = (rules.stalled, ev.stall.still_since) else {
        return working;
    };
    let since = ev.stall.transcript_at.map_or(still, |t| t.max(still));
    let quiet = now.saturating_duration_since(since);
    if let Some(left) = after.checked_sub(quiet).filter(|d| !d.is_zero()) {
        // The transcript grew after the screen stood still: look again
        // once it has been quiet as long.
        let recheck = working.recheck.map_or(left, |r| r.min(left));
        return Verdict {
            recheck: Some(recheck),
            ..working
        };
    }
    let cause = match &ev.stall.limit {
        Some(limit) => format!("{}: {}; ", limit.kind.words(), limit.line),
        None => String::new(),
    };
    Verdict {
        status: ActivityStatus::Stalled,
        why: format!(
            "{cause}nothing on screen or in the transcript changed for {} ({})",
            crate::api::ago(quiet),
            working.why
        ),
        rule: Rule::Stalled,
        evidence_at: Some(since),
        ..working
    }
}

/// An idle verdict saying the limit the screen shows the turn ended on.
fn limited(ev: &Evidence, idle: Verdict) -> Verdict {
    match &ev.stall.limit {
        Some(limit) => Verdict {
            why: format!("{}; the screen says {}: {}", idle.why, limit.kind.words(), limit.line),
            ..idle
        },
        None => idle,
    }
}

/// The verdict of the evidence, before a stall or a limit is told.
fn judge(ev: &Evidence, rules: &Rules, now: Instant) -> Verdict {
    let ev = &ev.without_echo();
    let age = |t: Instant| now.saturating_duration_since(t);
    let quiet_left = ev
        .last_output
        .map(|t| rules.quiet.saturating_sub(age(t)))
        .filter(|d| !d.is_zero());
    let verdict = |status, why: String, rule, recheck, evidence_at| Verdict {
        status,
        why,
        rule,
        recheck,
        evidence_at,
    };
    let working = |rule, left| {
        verdict(
            ActivityStatus::Working,
            "output in the last moment".into(),
            rule,
            Some(left).filter(|_| !ev.output_going),
            ev.last_output,
        )
    };

    // A login problem on the screen outranks every hook: Claude Code says
    // "Not logged in" from the start, fires `UserPromptSubmit` for a prompt
    // it then refuses, and no `Stop`. Only output still moving is work.
    if let Some(found) = ev.screen.as_ref().filter(|f| f.is_login_problem()) {
        if let Some(left) = quiet_left {
            return working(Rule::Login, left);
        }
        return verdict(found.status, found.why.clone(), Rule::Login, None, ev.screen_at);
    }
    let hook = ev.hook.as_ref().filter(|h| !hidden_by_screen(ev, h));
    let standing = hook.map(|h| (h, standing(ev, h, rules, now)));
    if let Some((h, s)) = &standing {
        if let Some(lasted) = s.overruled_for {
            return verdict(
                ActivityStatus::Working,
                overruled_words(h, lasted),
                Rule::Overruled,
                quiet_left.filter(|_| !ev.output_going),
                ev.output_since,
            );
        }
        // Still for as long as output would take to overrule a hook: a
        // turn that ended the usual way has its `Stop` by then.
        let still_left = ev
            .last_output
            .map_or(Duration::ZERO, |t| rules.overrule.saturating_sub(age(t)));
        let ended = turn_ended_on_screen(ev, h);
        if let Some(at) = ended.filter(|_| still_left.is_zero()) {
            return verdict(
                ActivityStatus::Idle,
                format!(
                    "screen shows no turn in progress since {}: interrupted, no Stop came",
                    h.why
                ),
                Rule::Screen,
                None,
                Some(at),
            );
        }
        let left = decay_left(h, rules, now);
        if left.is_none_or(|d| !d.is_zero()) && s.stall_left.is_none_or(|d| !d.is_zero()) {
            let settles = ended.map(|_| still_left);
            let recheck = [left, s.stall_left, s.overrule_left, settles]
                .into_iter()
                .flatten()
                .min();
            return verdict(h.status, h.why.clone(), Rule::Hook, recheck, Some(h.at));
        }
    }
    if let Some(found) = &ev.screen {
        return verdict(found.status, found.why.clone(), Rule::Screen, None, ev.screen_at);
    }
    if let Some(left) = quiet_left {
        return working(Rule::Output, left);
    }
    if let Some((h, s)) = &standing {
        let decayed = age(h.at) >= rules.decay;
        if s.stall_left.is_some_and(|d| d.is_zero()) && !decayed {
            let silent_since = ev.last_output.map_or(h.at, |t| t.max(h.at));
            return verdict(
                ActivityStatus::Unknown,
                format!(
                    "{} {} ago, but no output for {} since",
                    h.why,
                    crate::api::ago(age(h.at)),
                    crate::api::ago(age(silent_since))
                ),
                Rule::Silent,
                Some(rules.decay.saturating_sub(age(h.at))),
                Some(silent_since),
            );
        }
        let mins = age(h.at).as_secs() / 60;
        return verdict(
            ActivityStatus::Unknown,
            format!("nothing confirmed for {mins} min (last: {})", h.why),
            Rule::Decayed,
            None,
            Some(h.at),
        );
    }
    verdict(
        ActivityStatus::Idle,
        "no output for a while".into(),
        Rule::Quiet,
        None,
        ev.last_output,
    )
}

/// When the screen stopped showing a turn in progress, if it did after
/// `h` said the agent works (and output has been quiet since, which the
/// caller checks): an Esc ends a turn with no hook. A working hook of a
/// turn that waits on background work, or of a subagent, is not ended so.
fn turn_ended_on_screen(ev: &Evidence, h: &HookSeen) -> Option<Instant> {
    if h.status != ActivityStatus::Working || h.background || h.from_subagent {
        return None;
    }
    match ev.turn_shown {
        Some((false, at)) if at > h.at => Some(at),
        _ => None,
    }
}

/// How long a hook's word holds unconfirmed (zero: decayed). An agent
/// that said it stopped and has been quiet at its prompt since is idle
/// however long: its silence confirms it, and only new evidence (output,
/// the screen, a hook) changes that. None: it never decays.
fn decay_left(h: &HookSeen, rules: &Rules, now: Instant) -> Option<Duration> {
    (h.status != ActivityStatus::Idle).then(|| rules.decay.saturating_sub(now.saturating_duration_since(h.at)))
}

/// "output for 4 s since hook Stop: work began with no hook saying so".
fn overruled_words(h: &HookSeen, lasted: Duration) -> String {
    let then = match h.status {
        ActivityStatus::NeedsApproval => "the question was answered outside agents",
        _ => "work began with no hook saying so",
    };
    format!("output for {} since {}: {then}", crate::api::ago(lasted), h.why)
}

/// A piece of evidence told: its kind, what it says, how long ago.
pub type Told = (&'static str, String, Option<Duration>);

/// Each piece of evidence as `agents explain` tells it: what it is, what
/// it says, how old it is, and whether the fusion heeds it now.
pub fn evidence_lines(ev: &Evidence, rules: &Rules, now: Instant) -> Vec<Told> {
    let echo = ev.last_output.is_some() && ev.without_echo().last_output.is_none();
    let last_output = ev.last_output;
    let ev = &ev.without_echo();
    let age = |t: Instant| now.saturating_duration_since(t);
    let mut lines = Vec::new();
    match &ev.hook {
        Some(h) => {
            let s = standing(ev, h, rules, now);
            let hidden = match hidden_by_screen(ev, h) {
                true => " — hidden: the screen changed after it",
                false if decay_left(h, rules, now).is_some_and(|d| d.is_zero()) => " — decayed",
                false if s.overruled_for.is_some() => " — overruled: output since",
                false if s.stall_left.is_some_and(|d| d.is_zero()) => " — silent: no output since",
                false => "",
            };
            lines.push((
                "hook",
                format!("{}: {}{hidden}", h.status.as_str(), h.why),
                Some(age(h.at)),
            ));
        }
        None => lines.push(("hook", "none reported".into(), None)),
    }
    let mut screen = match &ev.screen {
        Some(f) => match &f.rule {
            Some(rule) => format!(
                "{}: {} (by {})",
                f.status.as_str(),
                f.why,
                super::screen_rules::rule_words(rule)
            ),
            None => format!("{}: {}", f.status.as_str(), f.why),
        },
        None => "no question".into(),
    };
    match ev.turn_shown {
        Some((true, _)) => screen.push_str(", a turn in progress"),
        Some((false, _)) => screen.push_str(", no turn in progress"),
        None => {}
    }
    lines.push(("screen", screen, ev.screen_at.map(age)));
    let output = match ev.last_output {
        Some(t) if age(t) < rules.quiet => format!(
            "moving for {} (quiet after {} ms)",
            crate::api::ago(ev.output_since.map_or(Duration::ZERO, age)),
            rules.quiet.as_millis()
        ),
        Some(_) => "quiet".into(),
        None if echo => "only the echo of keys typed into it".into(),
        None => "none yet".into(),
    };
    lines.push(("output", output, last_output.map(age)));
    lines.push(stall_line(&ev.stall, now));
    lines
}

/// The stall evidence as `agents explain` tells it.
fn stall_line(stall: &StallSeen, now: Instant) -> Told {
    let age = |t: Instant| now.saturating_duration_since(t);
    let mut said = match stall.still_since {
        Some(t) => format!("screen still for {}", crate::api::ago(age(t))),
        None => "screen changing (or not watched for stalls)".into(),
    };
    if let Some(t) = stall.transcript_at {
        said.push_str(&format!(", transcript grew {} ago", crate::api::ago(age(t))));
    }
    if let Some(limit) = &stall.limit {
        said.push_str(&format!(", {}: {}", limit.kind.words(), limit.line));
    }
    ("stall", said, stall.still_since.map(age))
}

/// `agents explain`: the verdict now, the rule that gave it, every piece
/// of evidence, and the verdict the clock alone would bring next.
pub fn explain(ev: &Evidence, rules: &Rules, now: Instant) -> (Verdict, Vec<Told>, Option<Verdict>) {
    // The clock alone: as if output paused now (a supervisor that says
    // output goes on says so when it pauses; the verdict now is the same).
    let ev = &Evidence {
        output_going: false,
        ..ev.clone()
    };
    let verdict = fuse(ev, rules, now);
    let next = verdict
        .recheck
        .map(|d| fuse(ev, rules, now + d + Duration::from_millis(1)))
        .filter(|n| n.status != verdict.status || n.rule != verdict.rule);
    (verdict, evidence_lines(ev, rules, now), next)
}

/// Whether the screen changed after the hook in a way that ends what the
/// hook said: a finding appeared (a question drawn after it), or the
/// question the hook announced went away (answered, or dismissed with Esc,
/// which fires no hook). A question going away says nothing about a hook
/// of another kind: a cleared prompt read late must not hide the `Stop`
/// that came after the answer.
fn hidden_by_screen(ev: &Evidence, hook: &HookSeen) -> bool {
    let changed_after = ev.screen_at.is_some_and(|s| s > hook.at);
    changed_after && (ev.screen.is_some() || hook.status == ActivityStatus::NeedsApproval)
}

impl ActivityStatus {
    /// A queued prompt may be typed in: the agent is not working, and no
    /// question is open (a decayed status is judged by the screen and the
    /// output alone, which is how `unknown` arises).
    pub fn takes_prompts(self) -> bool {
        matches!(
            self,
            ActivityStatus::Idle | ActivityStatus::WaitingInput | ActivityStatus::Unknown
        )
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
