//! Status fusion (docs/design.md §7): what a live run's agent is doing, from every
//! piece of evidence the daemon holds, strongest first —
//!
//! 1. a **hook** (the harness said so) newer than the last change of the
//!    screen's finding, and younger than the decay limit;
//! 2. the **screen** showing a question (a permission or trust prompt);
//! 3. **output** in the last `quiet` moment: working;
//! 4. a run that reports hooks, whose last hook has decayed with nothing
//!    newer: `unknown` — a status nobody confirmed for that long is not
//!    claimed;
//! 5. otherwise quiet: idle.
//!
//! A screen change after the last hook outranks it when it ends what the
//! hook said: a question drawn after it, or the permission prompt the hook
//! announced answered (or dismissed, which fires no hook). A question that
//! merely went away hides no other hook. A login problem on the screen
//! outranks every hook; only moving output is work then. Pure:
//! evidence and a clock in, a verdict out.

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
}

/// Everything the daemon knows about a live run's activity.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub hook: Option<HookSeen>,
    pub screen: Option<ScreenFinding>,
    /// When the screen's finding last changed (appeared or went away).
    pub screen_at: Option<Instant>,
    pub last_output: Option<Instant>,
}

#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Output younger than this means working.
    pub quiet: Duration,
    /// A hook's word holds this long without confirmation.
    pub decay: Duration,
}

impl Rules {
    pub fn of(engine: &crate::config::Engine) -> Rules {
        Rules {
            quiet: Duration::from_millis(engine.quiet_ms),
            decay: Duration::from_secs(engine.status_decay_secs),
        }
    }
}

/// Which rule of the fusion decided (the module's list, in its order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The screen says the harness is not logged in (output still moving
    /// is work even then).
    Login,
    /// A hook newer than the screen's last change, not yet decayed.
    Hook,
    /// The screen shows a question.
    Screen,
    /// Output in the last quiet moment.
    Output,
    /// The last hook decayed, nothing newer: not claimed.
    Decayed,
    /// Nothing else: quiet.
    Quiet,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Login => "login",
            Rule::Hook => "hook",
            Rule::Screen => "screen",
            Rule::Output => "output",
            Rule::Decayed => "decayed",
            Rule::Quiet => "quiet",
        }
    }

    /// The rule in words, for `agents explain`.
    pub fn words(self) -> &'static str {
        match self {
            Rule::Login => "a login problem on the screen outranks every hook; only moving output is work then",
            Rule::Hook => "a hook newer than the screen's last change, younger than the decay limit",
            Rule::Screen => "the screen shows a question",
            Rule::Output => "output in the last quiet moment: working",
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

/// Keeps the newer of the held hook and `seen`, by the time each ran.
pub fn keep_newer(held: &mut Option<HookSeen>, seen: HookSeen) {
    if held.as_ref().is_none_or(|h| seen.at_ms >= h.at_ms) {
        *held = Some(seen);
    }
}

pub fn fuse(ev: &Evidence, rules: &Rules, now: Instant) -> Verdict {
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
            Some(left),
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
    if let Some(h) = hook {
        let left = rules.decay.saturating_sub(age(h.at));
        if !left.is_zero() {
            return verdict(h.status, h.why.clone(), Rule::Hook, Some(left), Some(h.at));
        }
    }
    if let Some(found) = &ev.screen {
        return verdict(found.status, found.why.clone(), Rule::Screen, None, ev.screen_at);
    }
    if let Some(left) = quiet_left {
        return working(Rule::Output, left);
    }
    if let Some(h) = hook {
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

/// A piece of evidence told: its kind, what it says, how long ago.
pub type Told = (&'static str, String, Option<Duration>);

/// Each piece of evidence as `agents explain` tells it: what it is, what
/// it says, how old it is, and whether the fusion heeds it now.
pub fn evidence_lines(ev: &Evidence, rules: &Rules, now: Instant) -> Vec<Told> {
    let age = |t: Instant| now.saturating_duration_since(t);
    let mut lines = Vec::new();
    match &ev.hook {
        Some(h) => {
            let hidden = match hidden_by_screen(ev, h) {
                true => " — hidden: the screen changed after it",
                false if age(h.at) >= rules.decay => " — decayed",
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
    let screen = match &ev.screen {
        Some(f) => format!("{}: {}", f.status.as_str(), f.why),
        None => "no question".into(),
    };
    lines.push(("screen", screen, ev.screen_at.map(age)));
    let output = match ev.last_output {
        Some(t) if age(t) < rules.quiet => format!("moving (quiet after {} ms)", rules.quiet.as_millis()),
        Some(_) => "quiet".into(),
        None => "none yet".into(),
    };
    lines.push(("output", output, ev.last_output.map(age)));
    lines
}

/// `agents explain`: the verdict now, the rule that gave it, every piece
/// of evidence, and the verdict the clock alone would bring next.
pub fn explain(ev: &Evidence, rules: &Rules, now: Instant) -> (Verdict, Vec<Told>, Option<Verdict>) {
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
mod tests {
    use super::*;
    use ActivityStatus::*;

    const QUIET: Duration = Duration::from_secs(1);
    const DECAY: Duration = Duration::from_secs(600);

    /// One piece of evidence arriving `at` seconds into the scenario.
    #[derive(Clone)]
    enum Seen {
        Hook(ActivityStatus, &'static str),
        /// A hook that ran earlier than it arrived (by this many seconds).
        LateHook(ActivityStatus, &'static str, u64),
        Screen(Option<ActivityStatus>),
        /// The screen says the harness is not logged in.
        Login,
        Output,
    }

    /// Plays `steps` (seconds, evidence) from a common start, then asks at
    /// `ask` seconds.
    fn play(steps: &[(u64, Seen)], ask: u64) -> Verdict {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut ev = Evidence::default();
        for (s, seen) in steps {
            match seen.clone() {
                Seen::Hook(status, why) => keep_newer(
                    &mut ev.hook,
                    HookSeen {
                        status,
                        why: why.into(),
                        at: at(*s),
                        at_ms: *s as i64 * 1000,
                    },
                ),
                Seen::LateHook(status, why, early) => keep_newer(
                    &mut ev.hook,
                    HookSeen {
                        status,
                        why: why.into(),
                        at: at(s - early),
                        at_ms: (s - early) as i64 * 1000,
                    },
                ),
                Seen::Screen(found) => {
                    ev.screen = found.map(|status| ScreenFinding {
                        status,
                        why: "screen shows a permission prompt".into(),
                        question: None,
                    });
                    ev.screen_at = Some(at(*s));
                }
                Seen::Login => {
                    ev.screen = Some(ScreenFinding {
                        status: WaitingInput,
                        why: format!("{}: Not logged in", crate::harness::login::LOGIN_WHY),
                        question: None,
                    });
                    ev.screen_at = Some(at(*s));
                }
                Seen::Output => ev.last_output = Some(at(*s)),
            }
        }
        fuse(
            &ev,
            &Rules {
                quiet: QUIET,
                decay: DECAY,
            },
            at(ask),
        )
    }

    /// A scenario: its name, the evidence (second, what), the second asked
    /// at, the status expected and words the reason must contain.
    type Case = (&'static str, Vec<(u64, Seen)>, u64, ActivityStatus, &'static str);

    #[test]
    fn evidence_sequences_fuse_to_the_expected_status() {
        use Seen::*;
        let table: Vec<Case> = vec![
            ("nothing yet", vec![], 5, Idle, "no output"),
            ("output just now", vec![(10, Output)], 10, Working, "output"),
            ("output long ago", vec![(10, Output)], 20, Idle, "no output"),
            (
                "a hook outranks output",
                vec![(10, Output), (10, Hook(Idle, "hook Stop"))],
                10,
                Idle,
                "hook Stop",
            ),
            (
                "a working hook holds through a quiet spell",
                vec![(10, Hook(Working, "hook PreToolUse Bash"))],
                100,
                Working,
                "hook PreToolUse Bash",
            ),
            (
                "permission hook, then the prompt drawn",
                vec![
                    (10, Hook(NeedsApproval, "hook PermissionRequest Bash")),
                    (11, Screen(Some(NeedsApproval))),
                ],
                12,
                NeedsApproval,
                "screen",
            ),
            (
                "approved: the tool runs",
                vec![
                    (10, Hook(NeedsApproval, "hook PermissionRequest Bash")),
                    (11, Screen(Some(NeedsApproval))),
                    (20, Screen(None)),
                    (20, Output),
                    (21, Hook(Working, "hook PostToolUse Bash")),
                    (22, Hook(Idle, "hook Stop")),
                ],
                23,
                Idle,
                "hook Stop",
            ),
            (
                "dismissed with Esc: no hook, the screen says it is over",
                vec![
                    (10, Hook(NeedsApproval, "hook Notification (permission_prompt)")),
                    (11, Screen(Some(NeedsApproval))),
                    (20, Screen(None)),
                ],
                30,
                Idle,
                "no output",
            ),
            (
                "a prompt the screen cannot read is still announced by the hook",
                vec![(10, Hook(NeedsApproval, "hook PermissionRequest Edit"))],
                300,
                NeedsApproval,
                "hook PermissionRequest Edit",
            ),
            (
                "the screen alone, for a harness without hooks",
                vec![(10, Output), (10, Screen(Some(NeedsApproval)))],
                10,
                NeedsApproval,
                "screen",
            ),
            (
                "a late hook does not overwrite a newer one",
                vec![
                    (10, Hook(Working, "hook PostToolUse Bash")),
                    (12, Hook(Idle, "hook Stop")),
                    (13, LateHook(Working, "hook PreToolUse Bash", 2)),
                ],
                14,
                Idle,
                "hook Stop",
            ),
            (
                "a hook unconfirmed past the decay limit is unknown",
                vec![(10, Hook(Working, "hook PreToolUse Bash"))],
                10 + 601,
                Unknown,
                "nothing confirmed for 10 min (last: hook PreToolUse Bash)",
            ),
            (
                "decayed, but output shows work",
                vec![(10, Hook(Idle, "hook Stop")), (700, Output)],
                700,
                Working,
                "output",
            ),
            (
                "decayed, but the screen shows a question",
                vec![
                    (10, Screen(Some(NeedsApproval))),
                    (11, Hook(NeedsApproval, "hook PermissionRequest Bash")),
                ],
                11 + 700,
                NeedsApproval,
                "screen",
            ),
            (
                "a cleared prompt read late does not hide the Stop after the answer",
                vec![
                    (10, Hook(NeedsApproval, "hook PermissionRequest Bash")),
                    (11, Screen(Some(NeedsApproval))),
                    (20, Hook(Working, "hook PostToolUse Bash")),
                    (21, Hook(Idle, "hook Stop")),
                    (22, Screen(None)),
                ],
                23,
                Idle,
                "hook Stop",
            ),
            (
                "a question drawn after a working hook is waited on",
                vec![
                    (10, Hook(Working, "hook PreToolUse Bash")),
                    (11, Screen(Some(NeedsApproval))),
                ],
                12,
                NeedsApproval,
                "screen",
            ),
            (
                "not logged in: the Stop after the complaint does not make it idle",
                vec![
                    (10, Hook(Working, "hook UserPromptSubmit")),
                    (11, Login),
                    (12, Hook(Idle, "hook Stop")),
                ],
                13,
                WaitingInput,
                "not logged in",
            ),
            (
                "not logged in: a prompt it refused, with no Stop, is not work",
                vec![(5, Login), (10, Hook(Working, "hook UserPromptSubmit")), (10, Output)],
                20,
                WaitingInput,
                "not logged in",
            ),
            (
                "not logged in, but output moving: working",
                vec![(5, Login), (10, Output)],
                10,
                Working,
                "output",
            ),
            (
                "logged in again: once the complaint is gone, hooks count",
                vec![
                    (5, Login),
                    (20, Screen(None)),
                    (30, Hook(Working, "hook UserPromptSubmit")),
                ],
                31,
                Working,
                "hook UserPromptSubmit",
            ),
            (
                "a fresh hook after decay counts again",
                vec![
                    (10, Hook(Idle, "hook Stop")),
                    (900, Hook(Working, "hook UserPromptSubmit")),
                ],
                901,
                Working,
                "hook UserPromptSubmit",
            ),
        ];
        for (name, steps, ask, status, why) in table {
            let v = play(&steps, ask);
            assert_eq!(v.status, status, "{name}: {v:?}");
            assert!(v.why.contains(why), "{name}: {v:?}");
        }
    }

    #[test]
    fn the_verdict_says_when_to_look_again() {
        let v = play(&[(10, Seen::Output)], 10);
        assert_eq!(v.recheck, Some(QUIET));
        let v = play(&[(10, Seen::Hook(Idle, "hook Stop"))], 110);
        assert_eq!(v.recheck, Some(DECAY - Duration::from_secs(100)));
        assert_eq!(play(&[], 10).recheck, None);
    }

    #[test]
    fn prompts_are_typed_only_into_an_agent_at_rest() {
        assert!(Idle.takes_prompts() && WaitingInput.takes_prompts() && Unknown.takes_prompts());
        assert!(!Working.takes_prompts() && !NeedsApproval.takes_prompts());
    }

    #[test]
    fn explain_tells_the_deciding_rule_and_what_the_clock_brings_next() {
        let t0 = Instant::now();
        let rules = Rules {
            quiet: QUIET,
            decay: DECAY,
        };
        let ev = Evidence {
            hook: Some(HookSeen {
                status: Working,
                why: "hook UserPromptSubmit".into(),
                at: t0,
                at_ms: 0,
            }),
            ..Evidence::default()
        };
        let (now, lines, next) = explain(&ev, &rules, t0 + Duration::from_secs(60));
        assert_eq!((now.status, now.rule), (Working, Rule::Hook));
        assert_eq!(now.recheck, Some(DECAY - Duration::from_secs(60)));
        let next = next.expect("the hook decays");
        assert_eq!((next.status, next.rule), (Unknown, Rule::Decayed));
        assert_eq!(lines[0].0, "hook");
        assert_eq!(lines[0].2, Some(Duration::from_secs(60)));
        assert_eq!(lines[2].1, "none yet", "no output seen");
        // Once decayed, nothing more is due.
        let (later, lines, next) = explain(&ev, &rules, t0 + DECAY + Duration::from_secs(1));
        assert_eq!(later.rule, Rule::Decayed);
        assert!(lines[0].1.ends_with("— decayed"), "{:?}", lines[0]);
        assert!(next.is_none());
    }
}
