//! Sandboxed runs (`--sandbox`, issue #37) under the real bubblewrap: what
//! a boxed run can write and see, its network on and off, its worktree's
//! changes seen from outside, and a start refused before anything is
//! spawned where no box can be made.

mod common;

use std::io::Read;

use common::Home;

/// Whether bubblewrap can make a box here (the CI installs it), as the
/// daemon decides it.
fn bubblewrap() -> bool {
    agents::harness::sandbox::usable(std::env::var("PATH").ok().as_deref()).is_ok()
}

/// A user's home with secrets in it, and a project folder to work in.
struct Place {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        std::fs::write(home.path().join(".ssh/id_test"), "SECRET-KEY-MATERIAL\n").unwrap();
        // The other places credentials live, each with a secret in it.
        for (folder, file) in [
            (".aws", "credentials"),
            (".kube", "config"),
            (".gnupg", "private-keys"),
            (".config/gcloud", "credentials.db"),
        ] {
            std::fs::create_dir_all(home.path().join(folder)).unwrap();
            std::fs::write(home.path().join(folder).join(file), format!("SECRET-{folder}\n")).unwrap();
        }
        Place {
            home,
            project: tempfile::tempdir().unwrap(),
        }
    }

    /// `agents ARGS` with this HOME, from the project folder.
    fn run(&self, agents: &Home, args: &[&str]) -> String {
        let out = agents
            .cmd(args)
            .env("HOME", self.home.path())
            .current_dir(self.project.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

#[test]
fn a_boxed_run_writes_its_cwd_only_and_sees_neither_secrets_nor_the_state_directory() {
    if !bubblewrap() {
        eprintln!("skipped: no usable bubblewrap (the CI installs it)");
        return;
    }
    let agents = Home::new();
    let place = Place::new();
    // Another repository of the user's, beside the one the run works in.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("SECRET-other-repo"), "SECRET-other-repo\n").unwrap();
    let script = format!(
        r#"echo made > out.txt && echo wrote-cwd
touch "$HOME/x" 2>&1 || echo home-refused
cat "$HOME/.ssh/id_test" 2>&1 || echo ssh-hidden
cat "$HOME/.aws/credentials" 2>&1 || echo aws-hidden
cat "$HOME/.kube/config" 2>&1 || echo kube-hidden
cat "$HOME/.gnupg/private-keys" 2>&1 || echo gnupg-hidden
cat "$HOME/.config/gcloud/credentials.db" 2>&1 || echo gcloud-hidden
ls {other} 2>&1 || echo other-repository-hidden
ls "$AGENTS_HOME" 2>&1 || echo state-hidden
touch /usr/x 2>&1 || echo system-read-only"#,
        other = other.path().display()
    );
    let id = place.run(
        &agents,
        &[
            "run",
            "-d",
            "--sandbox",
            "--name",
            "boxed",
            "cmd",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    let ended = agents.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    let logs = agents.logs(&id);
    for said in [
        "wrote-cwd",
        "home-refused",
        "ssh-hidden",
        "aws-hidden",
        "kube-hidden",
        "gnupg-hidden",
        "gcloud-hidden",
        "other-repository-hidden",
        "state-hidden",
        "system-read-only",
    ] {
        assert!(logs.contains(said), "{said}: {logs}");
    }
    assert!(!logs.contains("SECRET"), "{logs}");
    assert_eq!(
        std::fs::read_to_string(place.project.path().join("out.txt")).unwrap(),
        "made\n"
    );
    assert!(!place.home.path().join("x").exists());
    assert_eq!(agents.show(&id)["sandbox"], "on");
    assert!(agents.ok(&["show", &id]).contains("sandbox"), "show says it is boxed");
}

/// A listener on this machine's loopback, outside any box.
fn listener() -> (std::net::TcpListener, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

#[test]
fn a_boxed_run_reaches_the_network_and_an_offline_one_reaches_nothing() {
    if !bubblewrap() {
        eprintln!("skipped: no usable bubblewrap (the CI installs it)");
        return;
    }
    let agents = Home::new();
    let place = Place::new();
    let (outside, port) = listener();
    let dial = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3 && echo connected || echo refused");
    let online = place.run(&agents, &["run", "-d", "--sandbox", "cmd", "--", "bash", "-c", &dial]);
    outside.set_nonblocking(true).unwrap();
    let mut accepted = None;
    common::wait_until("the boxed run connected", common::PATIENCE, &mut || {
        accepted = outside.accept().ok();
        accepted.is_some()
    });
    let (mut stream, _) = accepted.unwrap();
    stream.set_nonblocking(false).unwrap();
    let mut said = String::new();
    stream.read_to_string(&mut said).unwrap();
    assert_eq!(said, "hello\n");
    agents.wait_end(&online);
    assert!(agents.logs(&online).contains("connected"));

    let offline = place.run(
        &agents,
        &["run", "-d", "--sandbox=offline", "cmd", "--", "bash", "-c", &dial],
    );
    agents.wait_end(&offline);
    let logs = agents.logs(&offline);
    assert!(logs.contains("refused") && !logs.contains("connected"), "{logs}");
    assert_eq!(agents.show(&offline)["sandbox"], "offline");
    // It has ended: had it reached the listener, the connection would wait.
    assert!(outside.accept().is_err(), "nothing reached the machine's loopback");
}

#[test]
fn a_boxed_worktree_runs_changes_are_seen_by_agents_diff() {
    if !bubblewrap() {
        eprintln!("skipped: no usable bubblewrap (the CI installs it)");
        return;
    }
    let agents = Home::new();
    let place = Place::new();
    let repo = place.project.path();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["commit", "-q", "--allow-empty", "-m", "start"],
    ] {
        assert!(
            std::process::Command::new("git")
                .args(args)
                .current_dir(repo)
                .status()
                .unwrap()
                .success()
        );
    }
    let script = "echo boxed > made.txt && git add made.txt \
        && git -c user.name=boxed -c user.email=boxed@agents.invalid commit -q -m boxed && echo committed";
    let id = place.run(
        &agents,
        &["run", "-d", "--sandbox", "--worktree", "cmd", "--", "sh", "-c", script],
    );
    assert_eq!(agents.wait_end(&id)["state"], "succeeded", "{}", agents.logs(&id));
    let diff = agents.ok(&["diff", &id, "--stat"]);
    assert!(diff.contains("made.txt"), "{diff}");
}

#[test]
fn without_bubblewrap_a_boxed_start_is_blocked_before_anything_runs() {
    let agents = Home::new();
    let place = Place::new();
    // A PATH with a shell and nothing else: no bwrap on it.
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.path().join("sh")).unwrap();
    let marker = place.project.path().join("ran");
    let script = format!("touch {}", marker.display());
    let out = agents
        .cmd(&[
            "run",
            "-d",
            "--sandbox",
            "--name",
            "unboxed",
            "cmd",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .env("PATH", bin.path())
        .env("HOME", place.home.path())
        .current_dir(place.project.path())
        .output()
        .unwrap();
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let shown = agents.show("unboxed");
    assert_eq!(shown["state"], "blocked", "{shown}");
    let reason = shown["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("bubblewrap") && reason.contains("install"), "{reason}");
    let kinds = agents.event_kinds("unboxed");
    assert!(
        !kinds.iter().any(|k| k == "SUPERVISOR_STARTED"),
        "nothing spawned: {kinds:?} ({id})"
    );
    assert!(!marker.exists(), "never run without its box");
}

/// The box asked for in config.toml: by a profile, a routine and a team
/// member, each run recorded as boxed and each its box's.
#[test]
fn a_profile_a_routine_and_a_team_member_ask_for_the_box_in_config() {
    if !bubblewrap() {
        eprintln!("skipped: no usable bubblewrap (the CI installs it)");
        return;
    }
    let place = Place::new();
    let project = place.project.path().display().to_string();
    let config = format!(
        r#"[engine]
quiet_ms = 300
cancel_sigint_grace_ms = 700
cancel_sigterm_grace_ms = 700
[profiles.boxed]
family = "cmd"
sandbox = "offline"
[routines.nightly]
schedule = "0 3 * * *"
harness = "cmd"
args = ["sh", "-c", "ls \"$AGENTS_HOME\" || echo routine-boxed"]
cwd = "{project}"
sandbox = true
[teams.crew]
leader = {{ name = "lead", harness = "cmd", args = ["sleep", "600"] }}
[[teams.crew.members]]
name = "boxed"
harness = "cmd"
args = ["sh", "-c", "ls \"$AGENTS_HOME\" || echo member-boxed; sleep 600"]
sandbox = true
"#
    );
    let agents = Home::with_config(&config);
    let dial = "exec 3<>/dev/tcp/127.0.0.1/9 || echo profile-offline";
    let id = place.run(&agents, &["run", "-d", "boxed", "--", "bash", "-c", dial]);
    agents.wait_end(&id);
    assert_eq!(agents.show(&id)["sandbox"], "offline");
    assert!(agents.logs(&id).contains("profile-offline"));

    let fired = agents.json(&["routines", "run", "nightly", "--json"]);
    let fire = fired["run"]["id"].as_str().unwrap().to_string();
    agents.wait_end(&fire);
    assert_eq!(agents.show(&fire)["sandbox"], "on");
    assert!(agents.logs(&fire).contains("routine-boxed"), "{}", agents.logs(&fire));

    place.run(&agents, &["team", "start", "crew", "-d"]);
    let team = agents.json(&["team", "show", "crew", "--json"]);
    let member = team["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["member"] == "boxed")
        .and_then(|m| m["run"]["id"].as_str())
        .expect("the boxed member's run")
        .to_string();
    assert_eq!(agents.show(&member)["sandbox"], "on");
    agents.wait_until("the member ran in its box", || {
        agents.logs(&member).contains("member-boxed")
    });
    // Why a tool of a boxed run failed: `explain` names the box.
    let explained = agents.ok(&["explain", &member]);
    assert!(
        explained.contains("box") && explained.contains("Read-only file system"),
        "{explained}"
    );
}

#[test]
fn a_boxed_agents_hooks_reach_the_daemon_through_its_own_socket_only() {
    if !bubblewrap() {
        eprintln!("skipped: no usable bubblewrap (the CI installs it)");
        return;
    }
    // A stand-in Claude Code whose hook fires as the real one's does: it
    // runs `agents hook Notification` with the payload on stdin. In the
    // box the daemon's socket is not there (the state directory is
    // hidden); the run's own hook socket is.
    let place = Place::new();
    let bin = tempfile::tempdir().unwrap();
    let claude = bin.path().join("claude");
    let payload = r#"{"session_id": "x", "hook_event_name": "Notification", "message": "Claude needs your permission", "notification_type": "permission_prompt"}"#;
    std::fs::write(
        &claude,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.1.197 (Claude Code)'; exit 0; fi\n\
             ls \"$AGENTS_HOME\" 2>/dev/null || echo no-state-directory-here\n\
             echo '{payload}' | '{bin}' hook Notification && echo hook-ran\nexec sleep 600\n",
            bin = common::BIN
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let agents = Home::with_config(&format!(
        "[engine]\nquiet_ms = 300\n[profiles.boxed-claude]\nfamily = \"claude\"\nbinary = \"{}\"\nsandbox = true\n",
        claude.display()
    ));
    let id = place.run(&agents, &["run", "-d", "boxed-claude"]);
    agents.wait_until("the hook ran in the box", || agents.logs(&id).contains("hook-ran"));
    assert!(
        agents.logs(&id).contains("no-state-directory-here"),
        "{}",
        agents.logs(&id)
    );
    agents.wait_until("the hook's status is the run's", || {
        agents.show(&id)["status"] == "needs_approval"
    });
    let hooks: Vec<String> = agents
        .events(&id)
        .iter()
        .filter(|e| e["kind"] == "HOOK")
        .map(|e| e["data"]["event"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(hooks, ["Notification"], "told once, by its own socket");
    agents.ok(&["cancel", "--force", &id]);
}
