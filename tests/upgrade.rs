//! An upgrade loses nothing: the binary a live daemon was started from is
//! replaced on disk as installers do (a new file renamed over the old), with
//! runs live. The daemon re-executes on the new file (same pid), a new run
//! starts, and the run from before keeps its output and takes prompts.

mod common;

use std::path::{Path, PathBuf};

use common::{BIN, Home};
use serde_json::Value;

/// Puts a copy of this build at `path` the way `cargo install` and package
/// managers do: written beside it, then renamed over it.
fn install(path: &Path) {
    let tmp = path.with_extension("new");
    std::fs::copy(BIN, &tmp).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn exe_of(pid: u64) -> String {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

struct Installed<'a> {
    home: &'a Home,
    bin: PathBuf,
}

impl Installed<'_> {
    fn ok(&self, args: &[&str]) -> String {
        let out = self.home.cmd_of(&self.bin, args).output().unwrap();
        assert!(
            out.status.success(),
            "agents {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }

    fn said(&self, run: &str, text: &str) {
        self.ok(&["send", run, text]);
        let expected = format!("you said \"{text}\"");
        self.home.wait_until(&format!("{run} answers {text}"), || {
            self.ok(&["logs", run]).contains(&expected)
        });
    }
}

#[test]
fn replacing_the_binary_under_a_live_daemon_loses_no_run_and_new_runs_start() {
    let home = Home::new();
    let dir = tempfile::tempdir().unwrap();
    let agents = Installed {
        home: &home,
        bin: dir.path().join("agents"),
    };
    install(&agents.bin);
    let old = agents
        .ok(&["run", "-d", "demo", "--", "--think-ms", "50"])
        .trim()
        .to_string();
    agents.said(&old, "before");
    let pid = agents.json(&["daemon", "status", "--json"])["pid"].as_u64().unwrap();
    let path = std::fs::canonicalize(&agents.bin).unwrap().display().to_string();
    assert_eq!(exe_of(pid), path);

    install(&agents.bin);
    home.wait_until("the daemon runs the new file", || exe_of(pid) == path);

    let new = agents
        .ok(&["run", "-d", "demo", "--", "--think-ms", "50"])
        .trim()
        .to_string();
    let started = agents.json(&["show", &new, "--json"]);
    assert_eq!(started["state"], "running", "{started}");
    agents.said(&new, "after the upgrade");
    // The run from before: re-adopted, its output whole, still taking prompts.
    agents.said(&old, "after");
    let logs = agents.ok(&["logs", &old]);
    assert!(logs.contains("you said \"before\""), "{logs}");
    let status = agents.json(&["daemon", "status", "--json"]);
    assert_eq!(status["pid"].as_u64(), Some(pid), "the same process, re-executed");
    assert_eq!(status["live_runs"], 2);
    // Which build supervises which run, for `agents doctor`.
    let builds = status["supervisors"].as_array().cloned().unwrap_or_default();
    let runs_on = |exe: &str| builds.iter().find(|b| b["exe"] == exe).and_then(|b| b["runs"].as_u64());
    assert_eq!(runs_on(&path), Some(1), "{builds:?}");
    assert_eq!(runs_on(&format!("{path} (deleted)")), Some(1), "{builds:?}");
}
