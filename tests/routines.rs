//! Routines against the real binary (docs/design.md §13): a schedule fires
//! runs through the same start path as `agents run`; a fire that cannot
//! happen is a `skipped` record with its reason and no session. The
//! daemon's schedule is read from a clock file (`AGENTS_TEST_CLOCK`), so
//! these tests step through hours without waiting for one.

mod common;

use std::path::PathBuf;

use common::Home;
use serde_json::Value;

/// A home whose daemon schedules by a clock file the test moves.
struct Scheduled {
    home: Home,
    clock: PathBuf,
}

fn ms(rfc3339: &str) -> i64 {
    let t = humantime::parse_rfc3339(rfc3339).unwrap();
    t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

impl Scheduled {
    fn new(routines: &str, at: &str) -> Scheduled {
        let home = Home::with_config(&format!(
            "[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\n{routines}"
        ));
        let clock = home.path().join("test-clock");
        let s = Scheduled { home, clock };
        s.set(at);
        s.start_daemon();
        s
    }

    fn set(&self, at: &str) {
        let tmp = self.clock.with_extension("tmp");
        std::fs::write(&tmp, ms(at).to_string()).unwrap();
        std::fs::rename(&tmp, &self.clock).unwrap();
    }

    fn start_daemon(&self) {
        let out = self
            .home
            .cmd(&["daemon", "start"])
            .env(agents::clock::TEST_CLOCK_VAR, &self.clock)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // The scheduler has had its first look once ls answers with it.
        self.home.wait_until("the scheduler saw its routines", || {
            self.routines()
                .iter()
                .all(|r| r["next_fire"].is_string() || r["paused"] == true)
        });
    }

    fn routines(&self) -> Vec<Value> {
        self.home
            .json(&["routines", "ls", "--json"])
            .as_array()
            .unwrap()
            .clone()
    }

    fn routine(&self, name: &str) -> Value {
        self.routines().into_iter().find(|r| r["name"] == name).unwrap()
    }

    /// Every record of a routine, oldest scheduled first.
    fn records(&self, routine: &str) -> Vec<Value> {
        let all = self.home.json(&["ls", "--all", "--json"]);
        let mut mine: Vec<Value> = all
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["routine"] == routine)
            .cloned()
            .collect();
        mine.sort_by_key(|r| r["scheduled_at"].as_str().unwrap_or_default().to_string());
        mine
    }

    fn wait_records(&self, routine: &str, n: usize) -> Vec<Value> {
        self.home.wait_until(&format!("{n} records of {routine}"), || {
            self.records(routine).len() >= n
        });
        self.records(routine)
    }
}

impl Drop for Scheduled {
    fn drop(&mut self) {
        let _ = self.home.run(&["daemon", "stop"]);
    }
}

const ECHO: &str = "harness = \"cmd\"\nargs = [\"sh\", \"-c\", \"echo nightly ran\"]\ntimezone = \"UTC\"\n";
const SLEEPER: &str = "harness = \"cmd\"\nargs = [\"sleep\", \"600\"]\ntimezone = \"UTC\"\n";

#[test]
fn a_routine_fires_on_time_through_the_start_path_and_its_run_names_it() {
    let s = Scheduled::new(
        &format!("[routines.nightly]\nschedule = \"0 3 * * 1-5\"\n{ECHO}"),
        "2026-01-05T02:59:30Z",
    );
    assert_eq!(s.routine("nightly")["next_fire"], "2026-01-05T03:00:00.000Z");
    assert!(s.records("nightly").is_empty(), "nothing before its time");

    s.set("2026-01-05T03:00:01Z");
    let run = s.wait_records("nightly", 1).remove(0);
    let id = run["id"].as_str().unwrap();
    assert_eq!(run["scheduled_at"], "2026-01-05T03:00:00.000Z");
    assert_eq!(run["name"], "nightly");
    let ended = s.home.wait_end(id);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert_eq!(ended["routine"], "nightly");
    assert!(s.home.logs(id).contains("nightly ran"));
    let listed = s.routine("nightly");
    assert_eq!(listed["last"]["id"], id);
    // Monday 03:00 done: Tuesday's is next.
    assert_eq!(listed["next_fire"], "2026-01-06T03:00:00.000Z");
    let shown = s.home.ok(&["show", id]);
    assert!(
        shown.contains("nightly, scheduled for 2026-01-05T03:00:00.000Z"),
        "{shown}"
    );
}

#[test]
fn overlap_skip_records_a_skipped_fire_and_queue_starts_it_once_the_run_ends() {
    let s = Scheduled::new(
        &format!(
            "[routines.skipper]\nschedule = \"* * * * *\"\n{SLEEPER}\n[routines.queuer]\nschedule = \"* * * * *\"\noverlap = \"queue\"\n{SLEEPER}"
        ),
        "2026-01-05T02:59:30Z",
    );
    s.set("2026-01-05T03:00:00Z");
    let first_skipper = s.wait_records("skipper", 1).remove(0);
    let first_queuer = s.wait_records("queuer", 1).remove(0);
    for first in [&first_skipper, &first_queuer] {
        let id = first["id"].as_str().unwrap();
        s.home.wait_until("running", || s.home.state(id) == "running");
    }

    s.set("2026-01-05T03:01:00Z");
    let records = s.wait_records("skipper", 2);
    let skipped = &records[1];
    assert_eq!(skipped["state"], "skipped");
    assert_eq!(skipped["scheduled_at"], "2026-01-05T03:01:00.000Z");
    assert!(skipped["session_id"].is_null());
    let reason = skipped["reason"].as_str().unwrap();
    assert!(reason.contains("previous run skipper still runs"), "{reason}");
    s.home
        .wait_until("the queuer's fire queued", || s.routine("queuer")["queued"] == 1);
    assert_eq!(s.records("queuer").len(), 1, "queued, not started beside it");

    s.home.ok(&["cancel", first_queuer["id"].as_str().unwrap()]);
    let records = s.wait_records("queuer", 2);
    assert_eq!(records[1]["scheduled_at"], "2026-01-05T03:01:00.000Z");
    assert_ne!(records[1]["state"], "skipped");
    assert_eq!(s.routine("queuer")["queued"], 0);
    for r in s.records("skipper").iter().chain(&s.records("queuer")) {
        let _ = s.home.run(&["cancel", r["id"].as_str().unwrap()]);
    }
}

#[test]
fn fires_missed_while_the_daemon_was_down_are_recorded_as_skipped_on_restart() {
    let s = Scheduled::new(
        &format!(
            "[routines.hourly]\nschedule = \"0 * * * *\"\n{ECHO}\n[routines.latest]\nschedule = \"0 * * * *\"\ncatch_up = \"latest\"\n{ECHO}"
        ),
        "2026-01-05T00:30:00Z",
    );
    s.home.ok(&["daemon", "stop"]);
    s.set("2026-01-05T04:30:00Z");
    s.start_daemon();

    let hourly = s.wait_records("hourly", 4);
    let times: Vec<&str> = hourly.iter().map(|r| r["scheduled_at"].as_str().unwrap()).collect();
    assert_eq!(
        times,
        [
            "2026-01-05T01:00:00.000Z",
            "2026-01-05T02:00:00.000Z",
            "2026-01-05T03:00:00.000Z",
            "2026-01-05T04:00:00.000Z"
        ]
    );
    for r in &hourly {
        assert_eq!(r["state"], "skipped");
        assert!(r["session_id"].is_null());
        assert!(
            r["reason"].as_str().unwrap().contains("the daemon was not running"),
            "{r}"
        );
    }

    // catch_up = "latest": the newest missed fire runs now, the rest are skipped.
    let latest = s.wait_records("latest", 4);
    let states: Vec<&str> = latest.iter().map(|r| r["state"].as_str().unwrap()).collect();
    assert_eq!(states[..3], ["skipped", "skipped", "skipped"]);
    assert_eq!(latest[3]["scheduled_at"], "2026-01-05T04:00:00.000Z");
    let ended = s.home.wait_end(latest[3]["id"].as_str().unwrap());
    assert_eq!(ended["state"], "succeeded");
    // Once recorded, never again.
    s.home.ok(&["daemon", "stop"]);
    s.start_daemon();
    assert_eq!(s.records("hourly").len(), 4);
}

#[test]
fn routines_run_pause_and_resume_and_a_bad_name_is_one_line() {
    let s = Scheduled::new(
        &format!(
            "[routines.nightly]\nschedule = \"0 3 * * *\"\n{ECHO}\n[routines.needs]\nschedule = \"0 3 * * *\"\nenv = [\"AGENTS_NO_SUCH_VARIABLE\"]\n{ECHO}"
        ),
        "2026-01-05T02:00:00Z",
    );
    let fired = s.home.json(&["routines", "run", "nightly", "--json"]);
    assert_eq!(fired["outcome"], "started");
    assert_eq!(fired["run"]["routine"], "nightly");
    assert_eq!(
        s.home.wait_end(fired["run"]["id"].as_str().unwrap())["state"],
        "succeeded"
    );

    // A prerequisite of the routine fails: skipped, with the reason, no run.
    let out = s.home.run(&["routines", "run", "needs"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("skipped: variable AGENTS_NO_SUCH_VARIABLE is not set"),
        "{err}"
    );
    assert_eq!(s.records("needs")[0]["state"], "skipped");

    assert!(s.home.ok(&["routines", "pause", "nightly"]).contains("paused"));
    assert!(s.routine("nightly")["next_fire"].is_null());
    s.set("2026-01-05T03:00:30Z");
    // The other routine's 03:00 fire shows the scheduler looked past it.
    s.wait_records("needs", 2);
    assert_eq!(s.records("nightly").len(), 1, "a paused routine does not fire");
    let resumed = s.home.ok(&["routines", "resume", "nightly"]);
    assert!(resumed.contains("next fire 2026-01-06T03:00:00.000Z"), "{resumed}");
    // Not missed either: it was paused.
    assert_eq!(s.records("nightly").len(), 1);

    let out = s.home.run(&["routines", "run", "nosuch"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("no routine named 'nosuch'"), "{err}");
}

#[test]
fn an_invalid_schedule_never_replaces_the_last_valid_config() {
    let s = Scheduled::new(
        &format!("[routines.nightly]\nschedule = \"0 3 * * *\"\n{ECHO}"),
        "2026-01-05T02:00:00Z",
    );
    let config = s.home.config.path().join("agents/config.toml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("0 3 * * *", "0 3 * * 9");
    std::fs::write(&config, text).unwrap();
    assert_eq!(s.routine("nightly")["schedule"], "0 3 * * *");
    let doctor = String::from_utf8_lossy(&s.home.run(&["doctor"]).stdout).into_owned();
    assert!(doctor.contains("routines.nightly: schedule '0 3 * * 9'"), "{doctor}");

    // A valid change takes effect at the next fire.
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("0 3 * * 9", "30 2 * * *");
    std::fs::write(&config, text).unwrap();
    s.home.wait_until("the new schedule", || {
        s.routine("nightly")["next_fire"] == "2026-01-05T02:30:00.000Z"
    });
}

#[test]
fn a_routine_added_while_the_daemon_runs_fires_at_the_time_ls_announced() {
    let s = Scheduled::new(
        &format!("[routines.daily]\nschedule = \"0 5 * * *\"\n{ECHO}"),
        "2026-01-05T16:14:30Z",
    );
    // The scheduler sleeps until its next fire (or a minute): it has not
    // looked at the config again when the routine is added.
    let config = s.home.config.path().join("agents/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!("\n[routines.second]\nschedule = \"*/1 * * * *\"\n{ECHO}"));
    std::fs::write(&config, text).unwrap();
    s.home.wait_until("ls announces the new routine", || {
        s.routines().iter().any(|r| r["name"] == "second")
    });
    assert_eq!(s.routine("second")["next_fire"], "2026-01-05T16:15:00.000Z");

    s.set("2026-01-05T16:15:01Z");
    let first = s.wait_records("second", 1).remove(0);
    assert_eq!(first["scheduled_at"], "2026-01-05T16:15:00.000Z", "{first}");
    let ended = s.home.wait_end(first["id"].as_str().unwrap());
    assert_eq!(ended["state"], "succeeded", "{ended}");
}

/// The daemon looks at its config by itself, every few seconds: an edit
/// made while nothing asks it anything — no command, no run, the
/// scheduler asleep on its clock — is read (and kept as the last valid
/// revision) all the same. No command runs after the edit: each would
/// read the config itself.
#[test]
fn an_edit_made_while_nothing_asks_the_daemon_is_read_within_seconds() {
    let s = Scheduled::new(
        &format!("[routines.daily]\nschedule = \"0 5 * * *\"\n{ECHO}"),
        "2026-01-05T16:14:30Z",
    );
    let config = s.home.config.path().join("agents/config.toml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("quiet_ms = 300", "quiet_ms = 333");
    std::fs::write(&config, text).unwrap();
    let kept = s.home.path().join("config.valid.toml");
    s.home.wait_until("the edit read and kept", || {
        std::fs::read_to_string(&kept).is_ok_and(|k| k.contains("quiet_ms = 333"))
    });
}
