//! The run tree's headings drawn whole (TestBackend + insta, `snapshots/`):
//! each host with its link, with runs or without; the routines' group;
//! a team over its leader, and its mail on the heading. Runs, ids and
//! times as in `common::app`.

mod common;

use common::app::{SIZES, T0, at, populated, run};
use common::tui::screen;
use std::time::{Duration, UNIX_EPOCH};

use agents::api::{ActivityStatus, RunRecord, RunState};
use agents::tui::app::{App, Command, Tab, Update};
use agents::tui::mail::MailOf;

fn host(
    name: &str,
    link: &str,
    since_ago: u64,
    latency_ms: Option<u64>,
    error: Option<&str>,
) -> agents::api::HostRecord {
    agents::api::HostRecord {
        name: name.into(),
        target: format!("user@{name}"),
        command: None,
        shell_line: false,
        remote_bin: "agents".into(),
        remote_home: None,
        created_at: at(86_400),
        link: link.into(),
        since: Some(at(since_ago)),
        latency_ms,
        error: error.map(str::to_string),
        remote_version: Some("agents 0.1.0".into()),
        live_runs: 1,
    }
}

#[test]
fn each_hosts_link_state_shows_in_its_tree_row_and_the_header() {
    for (w, h) in SIZES {
        let mut app = populated();
        let mut runs = app.runs().to_vec();
        for (id, name, on, state) in [
            ("01XAAAAAAAAAAAAAAAAAAAAAAA", "train", "gpu1", RunState::Running),
            ("01XBBBBBBBBBBBBBBBBBBBBBBB", "eval", "lab", RunState::Running),
            ("01XCCCCCCCCCCCCCCCCCCCCCCC", "sweep", "old", RunState::Failed),
        ] {
            let mut r = run(id, name, state, ActivityStatus::Working, 721);
            r.host = on.into();
            runs.push(r);
        }
        app.update(Update::Runs(runs));
        app.update(Update::Hosts(vec![
            host("gpu1", "up", 900, Some(12), None),
            host("lab", "reconnecting", 34, None, Some("the link was lost")),
            host(
                "old",
                "down",
                600,
                None,
                Some("host old (user@10.0.0.9:22) is unreachable: Connection refused"),
            ),
        ]));
        app.take_commands();
        let text = screen(&mut app, w, h);
        assert!(text.contains("▾ gpu1 up 12ms"), "{text}");
        assert!(text.contains("▾ lab reconnecting 34s"), "{text}");
        assert!(text.contains("▾ old down: host old"), "{text}");
        if w >= 120 {
            assert!(text.contains("local ● gpu1 ● lab ◌ old ✗"), "{text}");
        }
        snap!(format!("hosts_{w}x{h}"), text);
    }
}

#[test]
fn every_configured_host_has_a_row_with_its_link_even_without_runs() {
    let hosts = || {
        vec![
            host("gpu1", "up", 900, Some(12), None),
            host("lab", "reconnecting", 34, None, Some("the link was lost")),
            host(
                "old",
                "down",
                600,
                None,
                Some("host old (user@10.0.0.9:22) is unreachable: Connection refused"),
            ),
            host("spare", "idle", 0, None, None),
        ]
    };
    for (w, h) in SIZES {
        // Runs here and on gpu1 only: lab, old and spare have none.
        let mut app = populated();
        let mut runs = app.runs().to_vec();
        let mut r = run(
            "01XAAAAAAAAAAAAAAAAAAAAAAA",
            "train",
            RunState::Running,
            ActivityStatus::Working,
            721,
        );
        r.host = "gpu1".into();
        runs.push(r);
        app.update(Update::Runs(runs));
        app.update(Update::Hosts(hosts()));
        app.take_commands();
        let headings: Vec<&str> = app
            .rows()
            .iter()
            .filter(|r| r.run.is_none())
            .map(|r| r.host.as_str())
            .collect();
        assert_eq!(headings, ["local", "gpu1", "lab", "old", "spare"]);
        let text = screen(&mut app, w, h);
        assert!(text.contains("▾ gpu1 up 12ms"), "{text}");
        assert!(text.contains("▾ lab reconnecting 34s"), "{text}");
        assert!(text.contains("▾ old down: host old"), "{text}");
        assert!(text.contains("▾ spare idle"), "{text}");
        snap!(format!("hosts_without_runs_{w}x{h}"), text);
    }

    // No runs anywhere yet: the hosts' rows, then how to start one.
    let mut app = App::new();
    app.set_now(Some(UNIX_EPOCH + Duration::from_secs(T0)));
    app.set_no_color(true);
    app.set_connected(true);
    app.update(Update::Hosts(hosts()));
    app.take_commands();
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("▾ local"), "{text}");
    assert!(text.contains("▾ lab reconnecting 34s"), "{text}");
    assert!(text.contains("no runs yet"), "{text}");
    snap!("hosts_without_runs_empty_80x24", text);
}

#[test]
fn routines_are_a_group_after_the_hosts_with_their_next_fire() {
    use agents::api::RoutineRecord;
    let routine = |name: &str, next: Option<String>, paused: bool, enabled: bool| RoutineRecord {
        name: name.into(),
        schedule: "0 3 * * 1-5".into(),
        timezone: "local".into(),
        harness: "claude".into(),
        host: "local".into(),
        overlap: "skip".into(),
        catch_up: "none".into(),
        enabled,
        paused,
        next_fire: next,
        queued: 0,
        last: None,
    };
    let soon = humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_secs(T0 + 7200)).to_string();
    let local: chrono::DateTime<chrono::Local> = (UNIX_EPOCH + Duration::from_secs(T0 + 7200)).into();
    let mut app = populated();
    let mut last = run(
        "01FFFFFFFFFFFFFFFFFFFFFFFF",
        "weekly",
        RunState::Skipped,
        ActivityStatus::Unknown,
        30,
    );
    last.routine = Some("weekly".into());
    let mut weekly = routine("weekly", None, true, true);
    weekly.last = Some(last);
    app.update(Update::Routines(vec![
        routine("nightly", Some(soon), false, true),
        weekly,
        routine("old", None, false, false),
    ]));
    let text = screen(&mut app, 120, 40);
    let lines: Vec<&str> = text.lines().collect();
    let heading = lines.iter().position(|l| l.contains("▾ routines")).expect(&text);
    assert!(lines[heading + 1].contains("◷  nightly"), "{text}");
    assert!(
        lines[heading + 1].contains(&local.format("%H:%M").to_string()),
        "{text}"
    );
    assert!(
        lines[heading + 2].contains("◷↷ weekly") && lines[heading + 2].contains("paused"),
        "{text}"
    );
    assert!(
        lines[heading + 3].contains("old") && lines[heading + 3].contains("off"),
        "{text}"
    );
    // Not runs: the selection never lands on them.
    for _ in 0..20 {
        use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
        app.handle(Event::Key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE)));
    }
    assert!(app.selected_run().is_some());
    assert!(app.rows()[app.selected()].routine.is_none());
}

#[test]
fn a_team_is_a_heading_over_its_leader_with_its_mail_not_yet_typed_in() {
    let mut app = populated();
    let member = |member: &str, leader: bool, run: &RunRecord| agents::api::TeamMember {
        member: member.into(),
        leader,
        role: None,
        run: run.clone(),
    };
    let (lead, explore) = (app.runs()[0].clone(), app.runs()[1].clone());
    assert_eq!((lead.name.as_str(), explore.name.as_str()), ("fix-tests", "explore"));
    app.update(Update::Teams(vec![agents::api::TeamRecord {
        id: "01TEAM".into(),
        name: "review".into(),
        definition: "review".into(),
        approvals: "user".into(),
        state: "live".into(),
        created_at: at(300),
        problem: None,
        members: vec![member("lead", true, &lead), member("explore", false, &explore)],
        unread: 2,
    }]));
    let heading = app
        .rows()
        .iter()
        .position(|r| r.team.is_some())
        .expect("a team heading");
    assert_eq!(
        app.rows()[heading + 1].run.as_deref(),
        Some(lead.id.as_str()),
        "just above its leader"
    );
    assert_eq!(
        app.rows()[heading].run.as_deref(),
        Some(lead.id.as_str()),
        "selecting it selects the leader"
    );
    assert_ne!(app.selected(), heading, "the selection stays on a run's own row");
    snap!("team_heading_120x40", screen(&mut app, 120, 40));

    // On the heading, the Mail tab is the team's: read by its name.
    app.set_selected(heading);
    app.set_tab(Tab::Mail);
    app.take_commands();
    app.want_tab_data();
    let asked = app.take_commands();
    assert!(
        asked
            .iter()
            .any(|c| matches!(c, Command::Mail(MailOf::Team(t)) if t == "review")),
        "{asked:?}"
    );
    let mut between = app
        .mail(&MailOf::Run(lead.id.clone()))
        .expect("its mail")
        .clone()
        .unwrap();
    between[0].body = "the team's own thread".into();
    app.update(Update::Mail {
        of: MailOf::Team("review".into()),
        result: Ok(between),
    });
    let text = screen(&mut app, 160, 40);
    assert!(text.contains("2 message(s) in team review"), "{text}");
    assert!(text.contains("fix-tests → explore"), "{text}");
    assert!(text.contains("the team's own thread"), "{text}");
    // Back on the leader's own row, its own mail again.
    app.set_selected(heading + 1);
    let text = screen(&mut app, 160, 40);
    assert!(text.contains("2 message(s) to or from fix-tests"), "{text}");
    assert!(!text.contains("the team's own thread"), "{text}");
}
