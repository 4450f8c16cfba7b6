//! Retention against the real binary (docs/design.md §13): ended runs'
//! output logs pruned by age and by size, oldest first, never a live
//! run's, never a record; a pruned run's `show`, `logs` and `export` say
//! so; `doctor` says what the policy would prune. The daemon's clock is a
//! file the test moves (`AGENTS_TEST_CLOCK`): a month passes at once.

mod common;

use std::path::PathBuf;

use common::Home;

struct Clocked {
    home: Home,
    clock: PathBuf,
}

impl Clocked {
    fn new(retention: &str) -> Clocked {
        let home = Home::with_config(&format!(
            "[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\n[retention]\n{retention}"
        ));
        let clock = home.path().join("test-clock");
        let c = Clocked { home, clock };
        c.advance(0);
        let out = c
            .home
            .cmd(&["daemon", "start"])
            .env(agents::clock::TEST_CLOCK_VAR, &c.clock)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        c
    }

    /// The daemon's clock: this many hours from the real now.
    fn advance(&self, hours: i64) {
        let now = agents::clock::now_ms() + hours * 3_600_000;
        let tmp = self.clock.with_extension("tmp");
        std::fs::write(&tmp, now.to_string()).unwrap();
        std::fs::rename(&tmp, &self.clock).unwrap();
    }

    fn ended(&self, name: &str, bytes: usize) -> String {
        let script = format!("head -c {bytes} /dev/zero | tr '\\0' a; echo; echo done-{name}");
        let id = self.home.start(&["--name", name, "cmd", "--", "sh", "-c", &script]);
        assert_eq!(self.home.wait_end(&id)["state"], "succeeded");
        id
    }

    fn pruned(&self, id: &str) -> bool {
        self.home.show(id)["log_pruned_at"].is_string()
    }
}

fn one_line_failure(home: &Home, args: &[&str]) -> String {
    let out = home.run(args);
    assert!(!out.status.success(), "agents {args:?} should fail");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn logs_older_than_keep_days_are_pruned_and_their_runs_say_so() {
    let c = Clocked::new("keep_days = 30\n");
    let old = c.ended("old", 100);
    let live = c
        .home
        .start(&["--name", "live", "cmd", "--", "sh", "-c", "echo still here; sleep 600"]);
    c.home
        .wait_until("the live run printed", || c.home.logs(&live).contains("still here"));
    let doctor = c.home.ok(&["doctor"]);
    assert!(doctor.contains("the state directory uses"), "{doctor}");
    assert!(
        doctor.contains("retention (keep_days = 30) would prune nothing now"),
        "{doctor}"
    );

    // A month and a day later, by the daemon's clock.
    c.advance(31 * 24);
    c.home.wait_until("the old run's log pruned", || c.pruned(&old));
    assert!(!c.home.log_path(&old).exists());
    assert!(c.home.events(&old).iter().any(|e| e["kind"] == "LOG_PRUNED"));
    // Never a live run's; never a record.
    assert!(!c.pruned(&live));
    assert!(c.home.log_path(&live).exists());
    assert_eq!(c.home.state(&old), "succeeded");

    let shown = c.home.ok(&["show", "old"]);
    assert!(shown.contains("log pruned at"), "{shown}");
    let err = one_line_failure(&c.home, &["logs", "old"]);
    assert!(err.contains("the output log of run old was pruned at"), "{err}");
    let cast = c.home.path().join("old.cast");
    let err = one_line_failure(&c.home, &["export", "old", "--cast", cast.to_str().unwrap()]);
    assert!(err.contains("was pruned at"), "{err}");
    assert!(!cast.exists());
    c.home.ok(&["cancel", "--force", &live]);
}

#[test]
fn over_max_total_bytes_the_oldest_ended_logs_go_first() {
    let c = Clocked::new("keep_days = 0\nmax_total_bytes = 13000\n");
    let first = c.ended("first", 5000);
    let second = c.ended("second", 5000);
    let third = c.ended("third", 5000);
    let doctor = c.home.ok(&["doctor"]);
    assert!(doctor.contains("would prune 1 log(s)"), "{doctor}");
    assert!(doctor.contains("first ("), "{doctor}");

    // The next prune is an hour after the one at start.
    c.advance(1);
    c.home.wait_until("the oldest log pruned", || c.pruned(&first));
    assert!(!c.pruned(&second) && !c.pruned(&third), "only as many as it takes");
    assert!(c.home.logs(&third).contains("done-third"));
}
