//! Resuming or forking a session that lives on a host, exactly once across
//! a lost answer (issue #5, docs/design.md §7, §8): the local daemon mints a launch
//! id and, when the link drops before the answer comes back, sends the
//! request again with it once the link returns; the host's daemon answers a
//! repeated launch id with the run the first attempt started.
//!
//! The harness is a stand-in for Claude Code on the "remote" side (a
//! `claude` profile in the host's config whose binary is a test script that
//! writes its transcript where the host's adapter looks), reached through a
//! real sshd on loopback, behind the fault-injecting proxy where the link
//! must drop.

mod common;
mod sshd;

use std::os::unix::fs::PermissionsExt;

use agents::api::method::{self, Method};
use agents::api::{ResumeParams, RunRecord};
use agents::client::Client;
use agents::paths::Paths;
use serde_json::Value;
use sshd::Net;

/// Writes a user message to its session's transcript (`--session-id` for a
/// new one, `--resume` for one it continues or forks) and waits for input.
/// Once the file `slow` is beside it (and the script changed, so the host
/// asks again), its `--version` says it was asked and answers only once the
/// file `go` is there too: the host is then still at work on a resume when
/// the test drops the link, however long the test takes to drop it.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
d=$(dirname "$0")
if [ "$1" = "--version" ]; then
  if [ -e "$d/slow" ]; then touch "$d/asked"; while [ ! -e "$d/go" ]; do sleep 0.02; done; fi
  echo "2.1.197 (Claude Code)"; exit 0
fi
sid=""; prev=""
for a in "$@"; do
  [ "$prev" = "--session-id" ] && sid="$a"
  [ "$prev" = "--resume" ] && sid="$a"
  prev="$a"
done
dir="$CLAUDE_CONFIG_DIR/projects/$(printf %s "$PWD" | sed 's/[^A-Za-z0-9]/-/g')"
mkdir -p "$dir"
printf '{"type":"user","message":{"role":"user","content":"hello"},"uuid":"u-%s","sessionId":"%s","timestamp":"2026-11-29T07:48:41.602Z"}\n' "$$" "$sid" >> "$dir/$sid.jsonl"
echo ready
read -r line
"#;

/// A host `box` whose agents runs `claude` as the stand-in.
struct Host {
    net: Net,
    cwd: tempfile::TempDir,
    bin: tempfile::TempDir,
    _claude_home: tempfile::TempDir,
}

impl Host {
    fn new(proxied: bool) -> Host {
        let net = if proxied { Net::with_proxy() } else { Net::new() };
        let bin = tempfile::tempdir().unwrap();
        let script = bin.path().join("claude");
        std::fs::write(&script, FAKE_CLAUDE).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let claude_home = tempfile::tempdir().unwrap();
        let config = net.remote.config.path().join("agents/config.toml");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "\n[profiles.claude]\nbinary = \"{}\"\nconfig_home = \"{}\"\n",
            script.display(),
            claude_home.path().display()
        ));
        std::fs::write(&config, text).unwrap();
        net.know_the_host();
        let target = if proxied { net.target_via_proxy() } else { net.target() };
        net.add_host("box", &target);
        Host {
            net,
            cwd: tempfile::tempdir().unwrap(),
            bin,
            _claude_home: claude_home,
        }
    }

    /// A run of `claude` on the host, ended: its id and session.
    fn ended_session(&self) -> (String, String) {
        let net = &self.net;
        let cwd = self.cwd.path().to_str().unwrap();
        let run = net.start_on("box", &["--cwd", cwd, "claude"]);
        let mut session = String::new();
        net.wait_until("the mirror knows the run's session", || {
            session = net.json(&["show", &run, "--json"])["session_id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            !session.is_empty()
        });
        net.ok(&["cancel", "--force", &run]);
        net.wait_until("the run ends here", || !self.live_here(&run));
        (run, session)
    }

    fn live_here(&self, run: &str) -> bool {
        let state = self.net.json(&["show", run, "--json"])["state"].clone();
        matches!(state.as_str(), Some("pending" | "starting" | "running"))
    }

    /// Every run the host's daemon holds, ended ones too, sorted.
    fn runs_there(&self) -> Vec<String> {
        let all = self.net.remote.json(&["ls", "--all", "--json"]);
        let mut ids: Vec<String> = all
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    }

    fn daemon_log(&self) -> String {
        std::fs::read_to_string(self.net.local.path().join("daemon.log")).unwrap_or_default()
    }
}

fn sorted(ids: [&String; 2]) -> Vec<String> {
    let mut ids: Vec<String> = ids.into_iter().cloned().collect();
    ids.sort();
    ids
}

/// What the CLI sends: the session, this client's environment, and here a
/// launch id of the caller's own.
fn resume_params(session: &str, launch_id: &str) -> ResumeParams {
    ResumeParams {
        session: session.to_string(),
        args: Vec::new(),
        env: std::env::vars().collect(),
        launch_id: Some(launch_id.to_string()),
        placed: false,
        queue: false,
    }
}

/// Calls `M` twice with the same parameters on the daemon of `home`:
/// both outcomes.
fn twice<M>(home: &std::path::Path, params: &ResumeParams) -> [Result<RunRecord, String>; 2]
where
    M: Method<Params = ResumeParams, Reply = RunRecord>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = Client::connect_existing(&Paths::at(home.to_path_buf()), false)
            .await
            .expect("the daemon is up");
        let mut outcomes = Vec::new();
        for _ in 0..2 {
            let outcome = client.call::<M>(params.clone()).await;
            outcomes.push(outcome.map_err(|e| format!("{}: {}", e.code.as_str(), e.message)));
        }
        [outcomes.remove(0), outcomes.remove(0)]
    })
}

#[test]
fn a_resume_or_fork_sent_twice_with_one_launch_id_starts_one_run_on_the_host() {
    let host = Host::new(false);
    let net = &host.net;
    let (first, session) = host.ended_session();

    // To the host's daemon itself, as the local daemon's retry reaches it.
    let [fork, again] = twice::<method::SessionsFork>(net.remote.path(), &resume_params(&session, "FORK-ONCE-1"));
    let (fork, again) = (fork.unwrap(), again.unwrap());
    assert_eq!(again.id, fork.id, "the repeat returns the fork the first made");
    assert_eq!(host.runs_there(), sorted([&fork.id, &first]), "one fork there");
    net.remote.ok(&["cancel", "--force", &fork.id]);
    net.remote.wait_until("the fork ends", || {
        !matches!(net.remote.state(&fork.id).as_str(), "pending" | "starting" | "running")
    });

    // Through the local daemon: forwarded with the caller's launch id.
    let [resumed, again] = twice::<method::SessionsResume>(net.local.path(), &resume_params(&session, "RESUME-ONCE-1"));
    let (resumed, again) = (resumed.unwrap(), again.unwrap());
    assert_eq!(
        again.id, resumed.id,
        "the repeat is not refused: it gets the first outcome"
    );
    assert_eq!(resumed.host, "box");
    assert_eq!(host.runs_there().len(), 3, "one resume there: {:?}", host.runs_there());
    let here = net.json(&["ls", "--all", "--json"]);
    let mirrored = here
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] == resumed.id.as_str())
        .count();
    assert_eq!(mirrored, 1, "mirrored once: {here}");
    let resume_of = net.json(&["show", &resumed.id, "--json"])["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "RESUME_OF")
        .count();
    assert!(resume_of >= 1, "the edge is recorded");

    // Another launch id is another request: refused, the resumed run is live.
    let [other, _] = twice::<method::SessionsResume>(net.local.path(), &resume_params(&session, "RESUME-ONCE-2"));
    let refused = other.unwrap_err();
    assert!(refused.contains("may still be alive"), "{refused}");
    // A launch id that is not one is refused as such, on either side.
    let [bad, _] = twice::<method::SessionsFork>(net.remote.path(), &resume_params(&session, "../x"));
    assert!(bad.unwrap_err().starts_with("bad_request"));
    net.ok(&["cancel", "--force", &resumed.id]);
    net.wait_until("the resumed run ends here", || !host.live_here(&resumed.id));
}

#[test]
fn a_resume_whose_answer_was_lost_returns_the_run_the_host_started_not_a_second_one() {
    let host = Host::new(true);
    let net = &host.net;
    let (first, session) = host.ended_session();

    std::fs::write(host.bin.path().join("slow"), "").unwrap();
    // Another size: the host's cached answer to `--version` is not used.
    let script = host.bin.path().join("claude");
    std::fs::write(&script, format!("{FAKE_CLAUDE}# slow from here\n")).unwrap();
    let asked = host.bin.path().join("asked");
    let resume = {
        let mut command = net.cmd(&["sessions", "resume", "-d", &session]);
        std::thread::spawn(move || command.output().expect("run agents"))
    };
    net.wait_until("the host is at work on the resume", || asked.exists());
    // Its answer will not come back over this connection.
    net.proxy().stall();
    net.proxy().cut();
    net.wait_until("the resume's answer is known lost", || {
        host.daemon_log().contains("lost its answer")
    });
    // The host finishes the resume it was at (its answer goes nowhere).
    std::fs::write(host.bin.path().join("go"), "").unwrap();
    net.proxy().restore();

    let out = resume.join().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let log = host.daemon_log();
    assert!(
        log.contains("the resume of a session (launch ") && log.contains("sent (attempt 2)"),
        "it was sent again with its launch id: {log}"
    );
    // Diagnostics keep no session ids (#35).
    assert!(!log.contains(&session), "{log}");
    assert_eq!(host.runs_there(), sorted([&id, &first]), "one resume there, not two");
    net.wait_until("it runs, there and here", || {
        net.remote.state(&id) == "running" && host.live_here(&id)
    });
    let shown: Value = net.json(&["show", &id, "--json"]);
    assert_eq!(shown["host"], "box", "{shown}");
    let here = net.json(&["ls", "--all", "--json"]);
    assert_eq!(here.as_array().unwrap().len(), 2, "{here}");
    // Ended while linked: the proxy is cut first when the test ends.
    net.ok(&["cancel", "--force", &id]);
    net.wait_until("the resumed run ends here", || !host.live_here(&id));
}
