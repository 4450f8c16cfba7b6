//! The conversation of a remote run from this side (issue #5, docs/design.md §7,
//! §8): its transcript is read from the host's daemon, which indexed it
//! there; resuming its session starts the new run on that host, mirrored
//! here; with the link cut, reading it fails at once naming the host.
//!
//! The harness is a stand-in for Claude Code on the "remote" side (a
//! `claude` profile in the remote config whose binary is a test script),
//! writing its transcript in Claude's format under the profile's config
//! home, where the host's adapter looks for it.

mod common;
mod sshd;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use sshd::Net;

/// Prints its arguments and two variables of its environment; writes a user and an assistant message to the
/// session's transcript (`--session-id` for a new one, `--resume` for one
/// it continues), saying which; a new one writes a third once the file
/// `more` appears in its config home; then it waits for input like the CLI.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "2.1.197 (Claude Code)"; exit 0; fi
printf 'args:'; printf ' %s' "$@"; printf '\n'
printf 'key=%s home=%s\n' "$AGENTS_TEST_KEY" "$HOME"
sid=""; how="started"; prev=""
for a in "$@"; do
  [ "$prev" = "--session-id" ] && sid="$a"
  [ "$prev" = "--resume" ] && sid="$a" && how="resumed"
  prev="$a"
done
dir="$CLAUDE_CONFIG_DIR/projects/$(printf %s "$PWD" | sed 's/[^A-Za-z0-9]/-/g')"
mkdir -p "$dir"
printf '{"type":"user","message":{"role":"user","content":"hello from the host (%s)"},"uuid":"u-%s","sessionId":"%s","timestamp":"2026-11-29T07:48:41.602Z"}\n' "$how" "$$" "$sid" >> "$dir/$sid.jsonl"
printf '{"type":"assistant","message":{"role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"%s there"}]},"uuid":"a-%s","parentUuid":"u-%s","sessionId":"%s","timestamp":"2026-11-29T07:48:41.905Z"}\n' "$how" "$$" "$$" "$sid" >> "$dir/$sid.jsonl"
echo ready
if [ "$how" = started ]; then
  # One more message once the test says (a follower sees it arrive).
  while [ ! -e "$CLAUDE_CONFIG_DIR/more" ]; do sleep 0.05; done
  printf '{"type":"assistant","message":{"role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"more there"}]},"uuid":"m-%s","parentUuid":"a-%s","sessionId":"%s","timestamp":"2026-11-29T07:48:42.905Z"}\n' "$$" "$$" "$sid" >> "$dir/$sid.jsonl"
fi
read -r line
"#;

/// A host `box` whose agents runs `claude` as the stand-in, and the cwd
/// the runs there use.
struct Remote {
    net: Net,
    cwd: tempfile::TempDir,
    _bin: tempfile::TempDir,
    claude_home: tempfile::TempDir,
    _local_claude_home: tempfile::TempDir,
}

impl Remote {
    fn new(net: Net, target: &str) -> Remote {
        let bin = tempfile::tempdir().unwrap();
        let script = bin.path().join("claude");
        std::fs::write(&script, FAKE_CLAUDE).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let claude_home = tempfile::tempdir().unwrap();
        // The host's config (sshd sets XDG_CONFIG_HOME for its sessions).
        claude_profile(&net.remote, &script, claude_home.path());
        // The same stand-in here, for runs that stay local.
        let local_claude_home = tempfile::tempdir().unwrap();
        claude_profile(&net.local, &script, local_claude_home.path());
        net.know_the_host();
        net.add_host("box", target);
        Remote {
            net,
            cwd: tempfile::tempdir().unwrap(),
            _bin: bin,
            claude_home,
            _local_claude_home: local_claude_home,
        }
    }

    fn cwd(&self) -> &str {
        self.cwd.path().to_str().unwrap()
    }

    /// `agents run -d --host box --cwd CWD --env AGENTS_TEST_KEY claude`:
    /// the run and its session.
    fn start_claude(&self) -> (String, String) {
        self.start_claude_on("box")
    }

    /// As `start_claude`, on `host` (`local`: a run of this daemon's).
    fn start_claude_on(&self, host: &str) -> (String, String) {
        let run = self.agents(
            &[
                "run",
                "-d",
                "--host",
                host,
                "--cwd",
                self.cwd(),
                "--env",
                "AGENTS_TEST_KEY",
                "claude",
            ],
            "at-launch",
        );
        let mut session = String::new();
        self.net.wait_until("the mirror knows the run's session", || {
            session = self.net.json(&["show", &run, "--json"])["session_id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            !session.is_empty()
        });
        (run, session)
    }

    /// `agents ARGS` with `AGENTS_TEST_KEY=key` in the client's
    /// environment: its output, trimmed.
    fn agents(&self, args: &[&str], key: &str) -> String {
        let out = self.net.cmd(args).env("AGENTS_TEST_KEY", key).output().unwrap();
        assert!(
            out.status.success(),
            "agents {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The messages of `agents transcript ID --json` (one JSON per line).
    fn transcript(&self, id: &str) -> Vec<Value> {
        let out = self.net.run(&["transcript", id, "--json"]);
        if !out.status.success() {
            return Vec::new();
        }
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON message per line"))
            .collect()
    }

    fn texts(&self, id: &str) -> Vec<String> {
        self.transcript(id)
            .iter()
            .map(|m| m["text"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    fn ended_here(&self, run: &str) -> bool {
        let state = self.net.json(&["show", run, "--json"])["state"].clone();
        !matches!(state.as_str(), Some("pending" | "starting" | "running"))
    }
}

/// A `claude` profile in `home`'s config running `script` with its
/// transcripts under `claude_home`.
fn claude_profile(home: &common::Home, script: &Path, claude_home: &Path) {
    let config = home.config.path().join("agents/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "\n[profiles.claude]\nbinary = \"{}\"\nconfig_home = \"{}\"\n",
        script.display(),
        claude_home.display()
    ));
    std::fs::write(&config, text).unwrap();
}

/// The lines a child prints, as they come.
fn lines_of(stdout: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn logged(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
}

#[test]
fn a_remote_runs_transcript_is_read_from_its_host_and_its_session_resumes_there() {
    let net = Net::new();
    let target = net.target();
    let box_ = Remote::new(net, &target);
    let net = &box_.net;
    let (first, session) = box_.start_claude();

    // Followed from here: what the harness writes there arrives.
    let mut follower = net
        .cmd(&["transcript", &first, "--follow", "--json"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = lines_of(follower.stdout.take().unwrap());
    let next = || {
        let line = lines
            .recv_timeout(common::PATIENCE)
            .expect("the follower prints the next message");
        let message: Value = serde_json::from_str(&line).expect("a JSON message per line");
        message["text"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!(next(), "hello from the host (started)");
    assert_eq!(next(), "started there");
    std::fs::write(box_.claude_home.path().join("more"), "").unwrap();
    assert_eq!(next(), "more there");
    follower.kill().unwrap();
    follower.wait().unwrap();

    // By run and by session: the host's index of the conversation.
    assert_eq!(
        box_.texts(&first),
        ["hello from the host (started)", "started there", "more there"]
    );
    let by_session = box_.transcript(&session[..8]);
    assert_eq!(by_session.len(), 3);
    assert_eq!(by_session[0]["session_id"], session.as_str());
    assert_eq!(by_session[0]["run_id"], first.as_str(), "the same run id on both sides");

    // The host's refusal passes through: its run may still be alive.
    let refused = net.fails(&["sessions", "resume", "-d", &session]);
    assert!(refused.contains("may still be alive"), "{refused}");

    net.ok(&["cancel", "--force", &first]);
    net.wait_until("the mirror ends", || box_.ended_here(&first));
    let resume = ["sessions", "resume", "-d", &session[..8], "--", "--model", "sonnet"];
    let resumed = box_.agents(&resume, "at-resume");
    assert_ne!(resumed, first);
    let shown = net.json(&["show", &resumed, "--json"]);
    assert_eq!(shown["host"], "box", "resumed on the session's host");
    assert_eq!(shown["cwd"], box_.cwd());
    // Placed from here, as a run started here is: its mail to an address
    // the host cannot resolve is held for this daemon.
    assert!(
        net.remote.event_kinds(&resumed).iter().any(|k| k == "PLACED"),
        "{:?}",
        net.remote.event_kinds(&resumed)
    );
    assert_eq!(
        net.remote.show(&resumed)["harness"],
        "claude",
        "the host's daemon started it"
    );
    net.wait_until(
        "the harness there got --resume with the session, then the user's words",
        || logged(&net.local.log_path(&resumed)).contains(&format!("--resume {session} --model sonnet")),
    );
    // The name the first run gave with `--env` crosses with this client's
    // value; the rest is the host's own login environment, as for a
    // placement (the client's HOME here is a temporary one).
    let client_home = format!("home={}", net.client_home.path().display());
    for (run, key) in [(&first, "key=at-launch"), (&resumed, "key=at-resume")] {
        let log = logged(&net.local.log_path(run));
        assert!(log.contains(key), "{log}");
        assert!(log.contains("home=/") && !log.contains(&client_home), "{log}");
    }
    net.wait_until("the conversation went on in the same files there", || {
        box_.texts(&session).last().map(String::as_str) == Some("resumed there")
    });
    let detail = net.json(&["sessions", "show", &session, "--json"]);
    let runs: Vec<&str> = detail["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(runs, [first.as_str(), resumed.as_str()], "{detail}");
    let tree = net.json(&["show", &resumed, "--tree", "--json"]);
    assert_eq!(tree["root"]["id"], first.as_str(), "{tree}");
    let again = tree["root"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == resumed.as_str())
        .expect("the resume is in the tree");
    assert_eq!(again["edge"], "resume_of");
    net.ok(&["cancel", "--force", &resumed]);
    net.wait_until("the resumed mirror ends", || box_.ended_here(&resumed));
}

#[test]
fn a_remote_transcript_follower_waits_out_a_cut_link_and_carries_on() {
    let net = Net::with_proxy();
    let target = net.target_via_proxy();
    let box_ = Remote::new(net, &target);
    let net = &box_.net;
    let (run, _session) = box_.start_claude();
    let mut follower = net
        .cmd(&["transcript", &run, "--follow", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = lines_of(follower.stdout.take().unwrap());
    let err = lines_of(follower.stderr.take().unwrap());
    let next = |what: &str| {
        let line = out.recv_timeout(common::PATIENCE).expect(what);
        let message: Value = serde_json::from_str(&line).expect("a JSON message per line");
        message["text"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!(next("the first message"), "hello from the host (started)");
    assert_eq!(next("the second message"), "started there");

    net.proxy().cut();
    let said = err
        .recv_timeout(common::PATIENCE)
        .expect("the follower says the link is down");
    assert!(said.contains("box") && said.ends_with("still following"), "{said}");
    assert!(follower.try_wait().unwrap().is_none(), "the follower waits: {said}");
    // Written there while the link is down; seen here once it is back.
    std::fs::write(box_.claude_home.path().join("more"), "").unwrap();
    net.proxy().restore();
    assert_eq!(next("the message written during the outage"), "more there");
    let back = err
        .recv_timeout(common::PATIENCE)
        .expect("the follower says the link is back");
    assert!(back.contains("link back"), "{back}");
    assert!(out.try_recv().is_err(), "nothing printed twice");
    follower.kill().unwrap();
    follower.wait().unwrap();
    net.ok(&["cancel", "--force", &run]);
    net.wait_until("the mirror ends", || box_.ended_here(&run));
}

#[test]
fn a_remote_transcript_fails_at_once_naming_the_host_when_the_link_is_cut() {
    let net = Net::with_proxy();
    let target = net.target_via_proxy();
    let box_ = Remote::new(net, &target);
    let net = &box_.net;
    let (run, _session) = box_.start_claude();
    net.wait_until("the transcript there is read from here", || box_.texts(&run).len() == 2);
    // Ended while linked: nothing waits on the host when the test ends.
    net.ok(&["cancel", "--force", &run]);
    net.wait_until("the mirror ends", || box_.ended_here(&run));

    net.proxy().cut();
    net.wait_until("the local daemon sees the link down", || {
        net.json(&["hosts", "ls", "--json"])[0]["link"] != "up"
    });
    let asked = Instant::now();
    let out = net.run(&["transcript", &run]);
    let took = asked.elapsed();
    assert!(!out.status.success(), "never an empty transcript instead");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("host box (") && err.contains(") is unreachable"), "{err}");
    assert!(
        err.contains(&format!("the transcript of run {run} is kept there")),
        "{err}"
    );
    // Not the 20 s a command waits for the link: a read is not worth it.
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

/// `sessions list --json`: the row of `session`, if listed.
fn listed(list: &Value, session: &str) -> Option<Value> {
    list["sessions"]
        .as_array()
        .expect("a sessions array")
        .iter()
        .find(|s| s["id"] == session)
        .cloned()
}

/// The hosts of the hits of `search WORDS --json`.
fn hit_hosts(results: &Value) -> Vec<String> {
    results["hits"]
        .as_array()
        .expect("a hits array")
        .iter()
        .map(|h| h["host"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn sessions_list_and_search_ask_the_host_and_say_where_each_row_lives() {
    let net = Net::new();
    let target = net.target();
    let box_ = Remote::new(net, &target);
    let net = &box_.net;
    let (remote_run, remote_session) = box_.start_claude();
    let (local_run, local_session) = box_.start_claude_on("local");
    // Read once, each transcript is indexed (and followed) where it lives.
    for run in [&remote_run, &local_run] {
        net.wait_until("the transcript is indexed", || box_.texts(run).len() == 2);
    }

    // A list gives each host 2 s to answer (`remote::gather`): the host
    // answers in milliseconds over the link that is up, but a busy machine
    // may take longer once; what is tested here is what a whole answer says.
    let mut list = Value::Null;
    net.wait_until("a list the host answered", || {
        list = net.json(&["sessions", "list", "--json"]);
        list["partial"] == false
    });
    assert_eq!(list["hosts_unreachable"], serde_json::json!([]), "{list}");
    let there = listed(&list, &remote_session).expect("the host's session is listed");
    assert_eq!(there["host"], "box", "{there}");
    assert_eq!(there["run_id"], remote_run.as_str());
    assert_eq!(there["harness"], "claude");
    let here = listed(&list, &local_session).expect("this daemon's session is listed");
    assert_eq!(here["host"], "local", "{here}");
    assert_eq!(here["run_id"], local_run.as_str());
    let mut human = String::new();
    net.wait_until("a printed list the host answered", || {
        human = net.ok(&["sessions", "list"]);
        human.lines().any(|l| l.starts_with(&remote_session))
    });
    let row = human
        .lines()
        .find(|l| l.starts_with(&remote_session))
        .expect("a line for the host's session");
    assert!(row.contains(" box "), "{row}");

    // Words only the host's transcript holds are found there.
    std::fs::write(box_.claude_home.path().join("more"), "").unwrap();
    net.wait_until("the host indexed the newest message", || {
        box_.texts(&remote_run).len() == 3
    });
    let mut found = Value::Null;
    net.wait_until("a search finds the host's newest message", || {
        found = net.json(&["search", "more", "--json"]);
        !hit_hosts(&found).is_empty()
    });
    assert_eq!(hit_hosts(&found), ["box"], "{found}");
    let hit = &found["hits"][0];
    assert_eq!(hit["session_id"], remote_session.as_str(), "{hit}");
    assert_eq!(hit["run_id"], remote_run.as_str());
    assert!(hit["snippet"].as_str().unwrap().contains("«more»"), "{hit}");
    // Words both transcripts hold: a hit from each place.
    net.wait_until("a search finds the local transcript too", || {
        let mut hosts = hit_hosts(&net.json(&["search", "hello", "--json"]));
        hosts.sort();
        hosts == ["box", "local"]
    });
    let on_box = format!("run {} on box", &remote_run[..10]);
    let mut human = String::new();
    net.wait_until("a printed search the host answered", || {
        // `search` exits 1 when nothing matches: here, when the host did not
        // answer in time.
        human = String::from_utf8_lossy(&net.run(&["search", "more"]).stdout).into_owned();
        human.contains(&on_box)
    });
    // Within the remote run: its host alone answers.
    let within = net.json(&["search", "hello", "--in", &remote_run, "--json"]);
    assert_eq!(hit_hosts(&within), ["box"], "{within}");
    assert_eq!(within["hits"][0]["run_id"], remote_run.as_str());

    for run in [&remote_run, &local_run] {
        net.ok(&["cancel", "--force", run]);
        net.wait_until("the run ends", || box_.ended_here(run));
    }
}

/// What "promptly" is with a host that does not answer: well past the 2 s a
/// list waits for a host, well short of the 15 s and more a stalled link
/// takes to be given up.
const PROMPTLY: Duration = Duration::from_secs(12);

#[test]
fn with_the_link_stalled_or_cut_lists_answer_promptly_with_local_rows_naming_the_host() {
    let net = Net::with_proxy();
    let target = net.target_via_proxy();
    let box_ = Remote::new(net, &target);
    let net = &box_.net;
    let (remote_run, remote_session) = box_.start_claude();
    let (local_run, local_session) = box_.start_claude_on("local");
    net.wait_until("the host's session is listed", || {
        listed(&net.json(&["sessions", "list", "--json"]), &remote_session).is_some()
    });
    for run in [&remote_run, &local_run] {
        net.wait_until("the transcript is indexed", || box_.texts(run).len() == 2);
    }
    // Ended while linked: nothing waits on the host when the test ends.
    for run in [&remote_run, &local_run] {
        net.ok(&["cancel", "--force", run]);
        net.wait_until("the run ends", || box_.ended_here(run));
    }
    net.wait_until("both transcripts are searched", || {
        let mut hosts = hit_hosts(&net.json(&["search", "hello", "--json"]));
        hosts.sort();
        hosts == ["box", "local"]
    });

    // The link looks up but nothing comes back: the host's budget runs out.
    let partial = |why: &str| {
        let asked = Instant::now();
        let list = net.json(&["sessions", "list", "--json"]);
        let took = asked.elapsed();
        assert_eq!(list["partial"], true, "{list}");
        assert_eq!(list["hosts_unreachable"][0]["host"], "box", "{list}");
        let error = list["hosts_unreachable"][0]["error"].as_str().unwrap().to_string();
        assert!(error.contains("host box") && error.contains(why), "{error}");
        assert!(listed(&list, &local_session).is_some(), "local rows stay: {list}");
        assert!(listed(&list, &remote_session).is_none(), "{list}");
        // Not the 15 to 20 s a stalled link takes to be given up (the 2 s
        // budget, and room for a busy machine).
        assert!(took < PROMPTLY, "took {took:?}");

        let asked = Instant::now();
        let found = net.json(&["search", "hello", "--json"]);
        assert!(asked.elapsed() < PROMPTLY, "took {:?}", asked.elapsed());
        assert_eq!(found["partial"], true, "{found}");
        assert_eq!(found["hosts_unreachable"][0]["host"], "box", "{found}");
        assert_eq!(hit_hosts(&found), ["local"], "{found}");

        let out = net.run(&["sessions", "list"]);
        assert!(out.status.success(), "never a failure of the whole");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&local_session), "{stdout}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(
            err.contains("host box") && err.contains("sessions are not listed"),
            "{err}"
        );
        let out = net.run(&["search", "hello"]);
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("host box") && err.contains("matches are not listed"),
            "{err}"
        );
    };
    net.proxy().stall();
    partial("did not answer within 2 s");

    // Back: every row again.
    net.proxy().restore();
    net.wait_until("the host answers again", || {
        let list = net.json(&["sessions", "list", "--json"]);
        list["partial"] == false && listed(&list, &remote_session).is_some()
    });

    // Cut: connections refused at once. Until the local daemon has seen the
    // old connection end, a call may still go out on it and fail as "the
    // link ended during" the call instead.
    net.proxy().cut();
    net.wait_until("the local daemon sees the link down", || {
        net.json(&["hosts", "ls", "--json"])[0]["link"] != "up"
    });
    partial("unreachable");
}
