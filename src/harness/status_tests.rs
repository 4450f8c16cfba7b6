//! Status fusion's tables: evidence sequences and the verdicts they fuse to.

use super::*;
use ActivityStatus::*;

const QUIET: Duration = Duration::from_secs(1);
const DECAY: Duration = Duration::from_secs(600);
const STALL: Duration = Duration::from_secs(60);
const OVERRULE: Duration = Duration::from_secs(3);
const STALLED: Duration = Duration::from_secs(300);

const RULES: Rules = Rules {
    quiet: QUIET,
    decay: DECAY,
    stall: STALL,
    overrule: OVERRULE,
    stalled: Some(STALLED),
};

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
    /// Output every half second from this step's second to this one.
    OutputUntil(u64),
    /// Claude's `Stop` naming background work in flight.
    BackgroundStop,
    /// A hook that ran inside a subagent.
    SubagentHook(ActivityStatus, &'static str),
    /// A key a person typed into the run.
    Key,
    /// The screen shows (or stopped showing) a turn in progress.
    Turn(bool),
    /// The screen, spinners and counters aside, has not changed since
    /// this second (as the supervisor says once it has been for the limit).
    Still,
    /// The screen changed again.
    Moved,
    /// The transcript grew.
    Transcript,
    /// The screen says the harness hit a limit.
    Limited(crate::harness::stall::LimitKind),
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
                HookSeen::new(status, why.into(), at(*s), *s as i64 * 1000),
            ),
            Seen::LateHook(status, why, early) => keep_newer(
                &mut ev.hook,
                HookSeen::new(status, why.into(), at(s - early), (s - early) as i64 * 1000),
            ),
            Seen::BackgroundStop => keep_newer(
                &mut ev.hook,
                HookSeen {
                    background: true,
                    ..HookSeen::new(
                        Working,
                        "hook Stop, 1 background task running (subagent general-purpose)".into(),
                        at(*s),
                        *s as i64 * 1000,
                    )
                },
            ),
            Seen::SubagentHook(status, why) => keep_newer(
                &mut ev.hook,
                HookSeen {
                    from_subagent: true,
                    ..HookSeen::new(status, why.into(), at(*s), *s as i64 * 1000)
                },
            ),
            Seen::Screen(found) => {
                ev.screen = found.map(|status| ScreenFinding {
                    status,
                    why: "screen shows a permission prompt".into(),
                    question: None,
                    rule: None,
                });
                ev.screen_at = Some(at(*s));
            }
            Seen::Login => {
                ev.screen = Some(ScreenFinding {
                    status: WaitingInput,
                    why: format!("{}: Not logged in", crate::harness::login::LOGIN_WHY),
                    question: None,
                    rule: None,
                });
                ev.screen_at = Some(at(*s));
            }
            Seen::Output => output(&mut ev, at(*s)),
            Seen::OutputUntil(until) => {
                for half in 2 * s..=2 * until {
                    output(&mut ev, t0 + Duration::from_millis(half * 500));
                }
            }
            Seen::Key => ev.keyed_at = Some(at(*s)),
            Seen::Turn(shown) => ev.turn_shown = Some((shown, at(*s))),
            Seen::Still => ev.stall.still_since = Some(at(*s)),
            Seen::Moved => ev.stall.still_since = None,
            Seen::Transcript => ev.stall.transcript_at = Some(at(*s)),
            Seen::Limited(kind) => {
                ev.stall.limit = Some(crate::harness::stall::Limit {
                    kind,
                    line: "API Error: 429 rate limited".into(),
                })
            }
        }
    }
    fuse(&ev, &RULES, at(ask))
}

/// Output at `t`, beginning a stretch after a quiet moment, as the daemon
/// keeps it (`LiveRun::output_seen`).
fn output(ev: &mut Evidence, t: Instant) {
    if ev
        .last_output
        .is_none_or(|last| t.saturating_duration_since(last) >= QUIET)
    {
        ev.output_since = Some(t);
    }
    ev.last_output = Some(t);
}

/// A scenario: its name, the evidence (second, what), the second asked
/// at, the status expected and words the reason must contain.
type Case = (&'static str, Vec<(u64, Seen)>, u64, ActivityStatus, &'static str);

#[test]
fn the_plainest_evidence_fuses_as_it_says() {
    use Seen::*;
    check(vec![
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
            60,
            Working,
            "hook PreToolUse Bash",
        ),
    ]);
}

#[test]
fn a_silent_working_hook_and_background_work() {
    use Seen::*;
    check(vec![
        (
            "a working hook silent past the stall limit is not believed",
            vec![(10, Hook(Working, "hook PreToolUse Bash")), (20, Output)],
            81,
            Unknown,
            "hook PreToolUse Bash 71 s ago, but no output for 61 s since",
        ),
        (
            "a working hook with output going on holds past the stall limit",
            vec![(10, Hook(Working, "hook PreToolUse Bash")), (10, OutputUntil(200))],
            202,
            Working,
            "hook PreToolUse Bash",
        ),
        (
            "a stalled hook: a question drawn meanwhile is waited on",
            vec![
                (10, Hook(Working, "hook UserPromptSubmit")),
                (100, Screen(Some(NeedsApproval))),
            ],
            101,
            NeedsApproval,
            "screen",
        ),
        (
            "a Stop with background work in flight is working, and a still screen does not stall it",
            vec![(10, BackgroundStop)],
            300,
            Working,
            "1 background task running",
        ),
        (
            "a subagent at work confirms the background wait, not replaces it",
            vec![
                (10, BackgroundStop),
                (500, SubagentHook(Working, "hook PreToolUse Bash")),
            ],
            10 + 620,
            Working,
            "background task running",
        ),
        (
            "a subagent asking permission while the turn waits is asking",
            vec![
                (10, BackgroundStop),
                (50, SubagentHook(NeedsApproval, "hook PermissionRequest Bash")),
            ],
            51,
            NeedsApproval,
            "hook PermissionRequest Bash",
        ),
        (
            "the main turn woken again: its hooks replace the wait, its Stop ends it",
            vec![
                (10, BackgroundStop),
                (90, Hook(Working, "hook PreToolUse Read")),
                (95, Hook(Idle, "hook Stop")),
            ],
            96,
            Idle,
            "hook Stop",
        ),
    ]);
}

#[test]
fn output_since_a_hook_that_said_stop_overrules_it() {
    use Seen::*;
    check(vec![
        (
            "output going on since a Stop: work began with no hook saying so",
            vec![(10, Hook(Idle, "hook agent-turn-complete")), (30, OutputUntil(34))],
            34,
            Working,
            "output for 4 s since hook agent-turn-complete: work began with no hook saying so",
        ),
        (
            "output just after a Stop, the redraw of its end, does not overrule it",
            vec![(10, Hook(Idle, "hook Stop")), (10, OutputUntil(12))],
            12,
            Idle,
            "hook Stop",
        ),
        (
            "output since a permission hook, no question on screen: answered elsewhere",
            vec![
                (10, Hook(NeedsApproval, "hook PermissionRequest Edit")),
                (40, OutputUntil(45)),
            ],
            45,
            Working,
            "the question was answered outside agents",
        ),
        (
            "output under a question on screen does not overrule the hook",
            vec![
                (10, Hook(NeedsApproval, "hook PermissionRequest Bash")),
                (10, Screen(Some(NeedsApproval))),
                (11, OutputUntil(30)),
            ],
            30,
            NeedsApproval,
            "hook PermissionRequest Bash",
        ),
        (
            "once the overruling output stops, the hook stands again",
            vec![(10, Hook(Idle, "hook Stop")), (30, OutputUntil(40))],
            45,
            Idle,
            "hook Stop",
        ),
    ]);
}

#[test]
fn a_question_on_screen_and_its_hooks() {
    use Seen::*;
    check(vec![
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
    ]);
}

#[test]
fn late_and_old_hooks() {
    use Seen::*;
    check(vec![
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
    ]);
}

#[test]
fn an_esc_ends_a_turn_the_screen_stops_showing() {
    use Seen::*;
    check(vec![
        (
            "an Esc mid-turn: the screen stops showing the turn, no Stop comes",
            vec![
                (10, Hook(Working, "hook UserPromptSubmit")),
                (11, Turn(true)),
                (11, OutputUntil(20)),
                (21, Turn(false)),
            ],
            23,
            Idle,
            "screen shows no turn in progress since hook UserPromptSubmit",
        ),
        (
            "a turn its screen still shows does not stall, however long output pauses",
            vec![
                (10, Hook(Working, "hook PreToolUse Bash")),
                (11, Turn(true)),
                (11, Output),
            ],
            11 + 120,
            Working,
            "hook PreToolUse Bash",
        ),
        (
            "a screen read before the turn showed is no end of it",
            vec![
                (9, Turn(false)),
                (10, Hook(Working, "hook UserPromptSubmit")),
                (10, OutputUntil(12)),
            ],
            14,
            Working,
            "hook UserPromptSubmit",
        ),
        (
            "while output still moves the turn has not ended",
            vec![
                (10, Hook(Working, "hook PreToolUse Bash")),
                (11, Turn(true)),
                (12, Turn(false)),
                (12, OutputUntil(15)),
            ],
            15,
            Working,
            "hook PreToolUse Bash",
        ),
        (
            "a Stop with background work is not ended by the screen",
            vec![(10, BackgroundStop), (11, Turn(true)), (12, Turn(false))],
            20,
            Working,
            "background",
        ),
    ]);
}

#[test]
fn the_echo_of_keys_is_not_work() {
    use Seen::*;
    check(vec![
        (
            "the echo of a key typed into a run with no hooks is not work",
            vec![(10, Key), (10, Output)],
            10,
            Idle,
            "no output for a while",
        ),
        (
            "output going on past the echo of the last key is work",
            vec![(10, Key), (10, OutputUntil(12))],
            12,
            Working,
            "output in the last moment",
        ),
        (
            "typing for seconds at an idle agent with hooks does not overrule its Stop",
            vec![
                (10, Hook(Idle, "hook Stop")),
                (20, Key),
                (20, Output),
                (21, Key),
                (21, Output),
                (22, Key),
                (22, Output),
                (23, Key),
                (23, Output),
                (24, Key),
                (24, Output),
            ],
            24,
            Idle,
            "hook Stop",
        ),
    ]);
}

#[test]
fn an_idle_agent_stays_idle_and_questions_still_count() {
    use Seen::*;
    check(vec![
        (
            "an agent quiet at its prompt since its Stop is idle however long",
            vec![(10, Hook(Idle, "hook Stop"))],
            10 + 3 * 3600,
            Idle,
            "hook Stop",
        ),
        (
            "long after its Stop, output going on shows work",
            vec![(10, Hook(Idle, "hook Stop")), (700, OutputUntil(705))],
            705,
            Working,
            "output for",
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
    ]);
}

#[test]
fn a_login_problem_outranks_hooks() {
    use Seen::*;
    check(vec![
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
    ]);
}

/// Plays each case and checks its status and reason.
fn check(table: Vec<Case>) {
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
    let v = play(&[(10, Seen::Hook(WaitingInput, "hook Notification"))], 110);
    assert_eq!(v.recheck, Some(DECAY - Duration::from_secs(100)));
    let v = play(&[(10, Seen::Hook(Idle, "hook Stop"))], 110);
    assert_eq!(v.recheck, None, "a Stop never decays");
    assert_eq!(play(&[], 10).recheck, None);
    // A working hook is looked at again when its silence would stall it.
    let v = play(&[(10, Seen::Hook(Working, "hook PreToolUse Bash"))], 20);
    assert_eq!(v.recheck, Some(STALL - Duration::from_secs(10)));
    // Output since a Stop: when it would have gone on long enough.
    let v = play(&[(10, Seen::Hook(Idle, "hook Stop")), (30, Seen::OutputUntil(31))], 31);
    assert_eq!((v.status, v.recheck), (Idle, Some(OVERRULE - Duration::from_secs(1))));
}

#[test]
fn prompts_are_typed_only_into_an_agent_at_rest() {
    assert!(Idle.takes_prompts() && WaitingInput.takes_prompts() && Unknown.takes_prompts());
    assert!(!Working.takes_prompts() && !NeedsApproval.takes_prompts());
}

#[test]
fn explain_tells_the_deciding_rule_and_what_the_clock_brings_next() {
    let t0 = Instant::now();
    let rules = RULES;
    let ev = Evidence {
        hook: Some(HookSeen::new(
            WaitingInput,
            "hook Notification (elicitation_dialog)".into(),
            t0,
            0,
        )),
        ..Evidence::default()
    };
    let (now, lines, next) = explain(&ev, &rules, t0 + Duration::from_secs(60));
    assert_eq!((now.status, now.rule), (WaitingInput, Rule::Hook));
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

    // An agent that said it stopped, quiet since: idle however long, and
    // nothing is due.
    let stopped = Evidence {
        hook: Some(HookSeen::new(Idle, "hook Stop".into(), t0, 0)),
        ..Evidence::default()
    };
    let (hours, lines, next) = explain(&stopped, &rules, t0 + Duration::from_secs(3 * 3600));
    assert_eq!((hours.status, hours.rule, hours.recheck), (Idle, Rule::Hook, None));
    assert!(!lines[0].1.contains("decayed"), "{:?}", lines[0]);
    assert!(next.is_none());

    // A turn the screen stopped showing: looked at again once the screen
    // has been still long enough to end it.
    let esc = Evidence {
        hook: Some(HookSeen::new(Working, "hook UserPromptSubmit".into(), t0, 0)),
        turn_shown: Some((false, t0 + Duration::from_secs(5))),
        last_output: Some(t0 + Duration::from_secs(5)),
        output_since: Some(t0),
        ..Evidence::default()
    };
    let (now, _, next) = explain(&esc, &rules, t0 + Duration::from_secs(6));
    assert_eq!(
        (now.status, now.recheck),
        (Working, Some(OVERRULE - Duration::from_secs(1)))
    );
    assert_eq!(next.map(|n| (n.status, n.rule)), Some((Idle, Rule::Screen)));

    // A working hook: next, its silence stalls it.
    let working = Evidence {
        hook: Some(HookSeen::new(Working, "hook UserPromptSubmit".into(), t0, 0)),
        ..Evidence::default()
    };
    let (now, _, next) = explain(&working, &rules, t0 + Duration::from_secs(30));
    assert_eq!((now.status, now.rule), (Working, Rule::Hook));
    let next = next.expect("the hook stalls");
    assert_eq!((next.status, next.rule), (Unknown, Rule::Silent));
    let (_, lines, _) = explain(&working, &rules, t0 + STALL);
    assert!(lines[0].1.ends_with("— silent: no output since"), "{:?}", lines[0]);
}

#[test]
fn a_turn_whose_screen_and_transcript_stand_still_is_stalled() {
    use crate::harness::stall::LimitKind::*;
    use Seen::*;
    // Claude at work: its hook, its spinner ticking, the rest of its screen
    // still since second 20.
    let claude = || {
        vec![
            (10, Hook(Working, "hook PreToolUse Bash")),
            (10, Turn(true)),
            (10, OutputUntil(900)),
            (20, Still),
        ]
    };
    let with = |more: Vec<(u64, Seen)>| claude().into_iter().chain(more).collect::<Vec<_>>();
    let table: Vec<Case> = vec![
        (
            "still, short of the limit",
            claude(),
            319,
            Working,
            "hook PreToolUse Bash",
        ),
        (
            "still for the limit",
            claude(),
            321,
            Stalled,
            "nothing on screen or in the transcript changed for 5 min (hook PreToolUse Bash)",
        ),
        (
            "the transcript grew since: not yet",
            with(vec![(200, Transcript)]),
            321,
            Working,
            "hook PreToolUse Bash",
        ),
        (
            "the transcript quiet for the limit since",
            with(vec![(200, Transcript)]),
            501,
            Stalled,
            "changed for 5 min",
        ),
        (
            "the limit on screen says what it waits on",
            with(vec![(30, Limited(RateLimit))]),
            400,
            Stalled,
            "rate limit: API Error: 429 rate limited; nothing on screen",
        ),
        (
            "moving again",
            with(vec![(330, Moved)]),
            340,
            Working,
            "hook PreToolUse Bash",
        ),
        (
            "output alone, no hooks: a spinner over a still screen",
            vec![(10, OutputUntil(900)), (15, Still)],
            400,
            Stalled,
            "(output in the last moment)",
        ),
        (
            "a turn that ended on a limit says so",
            vec![(10, Hook(Idle, "hook Stop")), (10, Limited(UsageLimit)), (10, Still)],
            400,
            Idle,
            "hook Stop; the screen says usage limit: API Error",
        ),
        (
            "a question is not a stall",
            vec![(10, Screen(Some(NeedsApproval))), (10, Still)],
            900,
            NeedsApproval,
            "permission prompt",
        ),
    ];
    for (name, steps, ask, status, words) in table {
        let v = play(&steps, ask);
        assert_eq!(v.status, status, "{name}: {v:?}");
        assert!(v.why.contains(words), "{name}: {:?} lacks {words:?}", v.why);
    }
    // Told again once the transcript has been quiet as long.
    let v = play(&with(vec![(200, Transcript)]), 321);
    assert_eq!(v.recheck, Some(Duration::from_secs(179)), "{v:?}");
}
