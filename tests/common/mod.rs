//! The test fixture: a private AGENTS_HOME and config, the real `agents`
//! binary, and waits on conditions (never fixed sleeps).

#![allow(dead_code)]

pub mod app;
pub mod chat_mock;
pub mod claude_mock;
pub mod disk;
pub mod fake_claude;
pub mod pane;
pub mod pty;
pub mod real_cli;
pub mod serving;
pub mod tui;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_agents");

/// Generous: CI is a busy 2-core machine.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub struct Home {
    pub dir: tempfile::TempDir,
    pub config: tempfile::TempDir,
    /// The `TMPDIR` its commands, and so its runs, are given: what an agent
    /// leaves there goes with the test (opencode's runtime unpacks ~25 MB
    /// of shared libraries into it at each start and keeps them when it is
    /// ended; a suite's worth filled CI's disk).
    pub tmp: tempfile::TempDir,
}

impl Home {
    /// A fresh home whose config makes the engine quick: short quiet window
    /// and short cancel grace periods.
    pub fn new() -> Home {
        Home::with_config("[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\n")
    }

    pub fn with_config(config: &str) -> Home {
        let dir = tempfile::Builder::new().prefix("ah").tempdir().expect("temp home");
        let cfg = tempfile::tempdir().expect("temp config");
        std::fs::create_dir_all(cfg.path().join("agents")).unwrap();
        std::fs::write(cfg.path().join("agents/config.toml"), config).unwrap();
        let tmp = tempfile::Builder::new().prefix("at").tempdir().expect("temp tmp");
        Home { dir, config: cfg, tmp }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The user's own screen rules for `family`
    /// (`<config>/agents/screens/<family>.toml`), merged over the built-in ones.
    pub fn screen_rules(&self, family: &str, toml: &str) {
        let screens = self.config.path().join("agents/screens");
        std::fs::create_dir_all(&screens).unwrap();
        std::fs::write(screens.join(format!("{family}.toml")), toml).unwrap();
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        self.cmd_of(Path::new(BIN), args)
    }

    /// `agents ARGS` run from another copy of the binary (an upgrade test's).
    pub fn cmd_of(&self, bin: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(bin);
        c.args(args)
            .env("AGENTS_HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.config.path())
            .env("TMPDIR", self.tmp.path())
            .env_remove("AGENTS_RUN_ID")
            .env_remove(agents::proof::PROOF_VAR)
            .env("NO_COLOR", "1");
        c
    }

    /// `agents ARGS` as a process inside run `run` runs it: the run's id
    /// and its proof in its environment ([`Home::run_env`]).
    pub fn cmd_in(&self, run: &str, args: &[&str]) -> Command {
        let mut c = self.cmd(args);
        c.envs(self.run_env(run));
        c
    }

    /// What the daemon puts in run `run`'s environment to say which run it
    /// is: its id and its proof, minted with the daemon's key as the
    /// daemon does (the test reads the key as any process of the user can).
    pub fn run_env(&self, run: &str) -> Vec<(String, String)> {
        let key = self.path().join("run-proof.key");
        let proofs = agents::proof::Proofs::read(&key).expect("the daemon's key");
        vec![
            ("AGENTS_RUN_ID".into(), run.into()),
            (agents::proof::PROOF_VAR.into(), proofs.mint(run)),
        ]
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run agents")
    }

    /// Runs and insists on success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "agents {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs and insists on a failure said in one line of stderr: that line.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "agents {args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        err
    }

    pub fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).expect("json output")
    }

    /// `agents run -d …`: the new run's id.
    pub fn start(&self, args: &[&str]) -> String {
        let mut all = vec!["run", "-d"];
        all.extend_from_slice(args);
        self.ok(&all).trim().to_string()
    }

    pub fn show(&self, run: &str) -> Value {
        self.json(&["show", run, "--json"])
    }

    pub fn state(&self, run: &str) -> String {
        self.show(run)["state"].as_str().unwrap_or_default().to_string()
    }

    /// Blocks until the run ends (the daemon answers when it does).
    /// Waits for the run to end (a test that hangs tells nobody anything:
    /// after 180 s it fails with the run's screen).
    pub fn wait_end(&self, run: &str) -> Value {
        let out = self.run(&["wait", run, "--json", "--timeout", "180"]);
        if out.status.code() == Some(124) {
            panic!("run {run} did not end within 180 s; its screen:\n{}", self.logs(run));
        }
        serde_json::from_slice(&out.stdout).expect("wait --json")
    }

    pub fn logs(&self, run: &str) -> String {
        self.ok(&["logs", run])
    }

    pub fn raw_log(&self, run: &str) -> Vec<u8> {
        self.cmd(&["logs", "--raw", run]).output().expect("logs --raw").stdout
    }

    pub fn log_path(&self, run: &str) -> PathBuf {
        self.path().join("runs").join(run).join("output.log")
    }

    pub fn daemon_pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.path().join("daemon.pid"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }

    /// Waits until `what` holds, polling the real system state.
    pub fn wait_until(&self, what: &str, mut f: impl FnMut() -> bool) {
        wait_until(what, PATIENCE, &mut f)
    }

    /// The prompts the daemon took for `run`, oldest first, from its database.
    pub fn prompts(&self, run: &str) -> Vec<String> {
        let db = rusqlite::Connection::open_with_flags(
            self.path().join("agents.db"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("the database");
        let mut query = db
            .prepare("SELECT text FROM prompts WHERE run_id = ?1 ORDER BY created_at, rowid")
            .expect("the prompts query");
        query
            .query_map([run], |row| row.get(0))
            .expect("the prompts")
            .map(|text| text.expect("a prompt's text"))
            .collect()
    }

    pub fn events(&self, run: &str) -> Vec<Value> {
        self.show(run)["events"].as_array().cloned().unwrap_or_default()
    }

    pub fn event_kinds(&self, run: &str) -> Vec<String> {
        self.events(run)
            .iter()
            .map(|e| e["kind"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        // Leave nothing running: force-cancel live runs, stop the daemon.
        if let Ok(out) = self.cmd(&["ls", "--json"]).output()
            && let Ok(Value::Array(runs)) = serde_json::from_slice::<Value>(&out.stdout)
        {
            for r in runs {
                if let Some(id) = r["id"].as_str() {
                    let _ = self.cmd(&["cancel", "--force", id]).output();
                }
            }
        }
        let _ = self.cmd(&["daemon", "stop"]).output();
    }
}

pub fn wait_until(what: &str, limit: Duration, f: &mut dyn FnMut() -> bool) {
    let start = Instant::now();
    let mut pause = Duration::from_millis(5);
    while !f() {
        assert!(start.elapsed() < limit, "timed out waiting until {what}");
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

pub fn pid_alive(pid: i32) -> bool {
    // A zombie is not alive for our purposes.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let after = &s[s.rfind(')').map(|i| i + 2).unwrap_or(0)..];
            !after.starts_with('Z') && !after.starts_with('X')
        })
        .unwrap_or(false)
}

pub fn kill9(pid: i32) {
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
}

/// Writes `body` to `dir/name`, executable: a script standing in for a
/// program.
pub fn executable(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}
