//! Hardening II (issue #34): a run is named by its id, which anyone can
//! read, so only the proof in its own environment makes a request that
//! run's; the sockets' folder outside the state directory is trusted only
//! when it is a directory of ours, and a daemon socket only when its
//! process is.

mod common;

use common::Home;
use serde_json::Value;

/// `hooks.report` as a forger sends it, straight to the daemon: its
/// answer (the CLI hook never says, so as not to fail its harness).
fn report_hook(home: &Home, report: agents::api::HookReport) -> Result<Value, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let paths = agents::paths::Paths::at(home.path().to_path_buf());
        let client = agents::client::Client::connect_existing(&paths, false).await.unwrap();
        client
            .call::<agents::api::method::HooksReport>(report)
            .await
            .map(|taken| serde_json::to_value(taken).unwrap())
            .map_err(|e| e.to_string())
    })
}

/// Issue #34 (1): a run's id is printed by `agents ls`, so naming it is no
/// proof of being it. A hook that names a run without the proof its
/// environment carries is refused (the probe's forged `SessionStart` then
/// let a purge delete a settings file); a mail's sender, a cancel's asker
/// and a start's parent that only name a run are the user's.
#[test]
fn a_run_named_without_its_proof_is_not_that_run() {
    let home = Home::new();
    let victim = home.start(&["--name", "victim", "demo"]);
    let other = home.start(&["--name", "other", "cmd", "--", "sleep", "600"]);
    let app = tempfile::tempdir().unwrap();
    let settings = app.path().join("config/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{\"theme\": \"dark\"}").unwrap();
    let forged = |proof: Option<String>| agents::api::HookReport {
        run: Some(victim.clone()),
        proof,
        event: "SessionStart".into(),
        session_id: Some("config".into()),
        transcript_path: Some(settings.to_string_lossy().into_owned()),
        ..Default::default()
    };
    // Named only, and named with another run's proof: both refused.
    let other_proof = home.run_env(&other)[1].1.clone();
    for proof in [None, Some(other_proof), Some("00".repeat(32))] {
        let refused = report_hook(&home, forged(proof)).unwrap_err();
        assert!(refused.contains("no proof"), "{refused}");
    }
    // The same through `agents hook`, as the probe ran it: still a hook
    // that never fails its harness, and still refused.
    let payload = serde_json::json!({ "session_id": "config", "transcript_path": settings }).to_string();
    let out = home
        .cmd(&["hook", "SessionStart", &payload])
        .env("AGENTS_RUN_ID", &victim)
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    assert_eq!(home.show(&victim)["session_id"], Value::Null);
    let purge = home.run(&["sessions", "rm", "config", "--purge-transcripts"]);
    assert!(!purge.status.success());
    assert!(settings.exists(), "the forged transcript was deleted");
    // The run's own hook, with its proof, is taken.
    let taken = report_hook(&home, forged(Some(home.run_env(&victim)[1].1.clone()))).unwrap();
    assert_eq!(taken["run"], victim.as_str(), "{taken}");

    // Mail, a cancel and a start that only name a run are the user's.
    let mail = home
        .cmd(&["mail", "send", "victim", "from whom?", "--json"])
        .env("AGENTS_RUN_ID", &other)
        .output()
        .unwrap();
    assert!(mail.status.success(), "{}", String::from_utf8_lossy(&mail.stderr));
    let mail: Value = serde_json::from_slice(&mail.stdout).unwrap();
    assert_eq!(mail["from_name"], "user", "{mail}");
    let kid = kid_output(
        home.cmd(&["run", "-d", "--name", "kid", "cmd", "--", "sleep", "600"])
            .env("AGENTS_RUN_ID", &victim),
    );
    assert_eq!(home.show(&kid)["parent_id"], Value::Null);
    let cancel = home
        .cmd(&["cancel", "other"])
        .env("AGENTS_RUN_ID", &victim)
        .output()
        .unwrap();
    assert!(cancel.status.success(), "{}", String::from_utf8_lossy(&cancel.stderr));
    let asked = home
        .events(&other)
        .into_iter()
        .find(|e| e["kind"] == "CANCEL_REQUESTED")
        .unwrap();
    assert_eq!(asked["data"]["by"], "user", "{asked}");
}

/// The id `agents run -d` printed.
fn kid_output(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Issue #34 (1): an agent can run `agents hook` from inside its own run,
/// proof and all. The transcript a hook names is taken only where the
/// run's harness keeps its sessions (its config home's), and
/// `--purge-transcripts` deletes only there.
#[test]
fn a_transcript_a_hook_names_outside_its_harness_s_sessions_is_not_taken() {
    let home = Home::new();
    let bin = tempfile::tempdir().unwrap();
    let claude = bin.path().join("claude");
    std::fs::write(
        &claude,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo '2.1.197 (Claude Code)'; exit 0; }\nexec sleep 600\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let user = tempfile::tempdir().unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let id = kid_output(
        home.cmd(&["run", "-d", "claude"])
            .env("PATH", &path)
            .env("HOME", user.path())
            .env_remove("CLAUDE_CONFIG_DIR")
            .current_dir(user.path()),
    );
    let session = "33333333-4444-4555-8666-777777777777";
    let own = user
        .path()
        .join(".claude/projects/-elsewhere")
        .join(format!("{session}.jsonl"));
    std::fs::create_dir_all(own.parent().unwrap()).unwrap();
    std::fs::write(&own, "").unwrap();
    let outside = user.path().join("app/config/settings.json");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    std::fs::write(&outside, "{}").unwrap();
    let hook = |event: &str, transcript: &std::path::Path| {
        let payload =
            serde_json::json!({ "session_id": session, "transcript_path": transcript, "hook_event_name": event });
        let out = home
            .cmd_in(&id, &["hook", event, &payload.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success());
    };
    hook("SessionStart", &outside);
    home.wait_until("the hook's session taken", || home.show(&id)["session_id"] == session);
    assert_ne!(home.show(&id)["transcript_path"], outside.to_string_lossy().as_ref());
    hook("Stop", &own);
    home.wait_until("its own transcript taken", || {
        home.show(&id)["transcript_path"] == own.to_string_lossy().as_ref()
    });
    home.ok(&["cancel", &id, "--force"]);
    home.wait_end(&id);
    home.ok(&["sessions", "rm", session, "--purge-transcripts"]);
    assert!(!own.exists(), "its own transcript is purged");
    assert!(outside.exists(), "nothing outside its sessions is");
}

/// Issue #34 (2): with a deep `AGENTS_HOME` the sockets move to a folder
/// under `XDG_RUNTIME_DIR` (or `/tmp`), where another user may have been
/// first. A link planted there, or a folder of another user, is refused by
/// every command in one line naming it (never followed, never a request
/// sent), and `agents doctor` says so; once it is gone all works again.
#[test]
fn a_socket_folder_someone_else_planted_is_refused_by_every_command_and_named_by_doctor() {
    let runtime = tempfile::Builder::new().prefix("rt").tempdir_in("/tmp").unwrap();
    let state = tempfile::tempdir().unwrap();
    let deep = state.path().join("d".repeat(120));
    let agents = |args: &[&str]| {
        std::process::Command::new(common::BIN)
            .args(args)
            .env("AGENTS_HOME", &deep)
            .env("XDG_RUNTIME_DIR", runtime.path())
            .env("XDG_CONFIG_HOME", state.path().join("config"))
            .env_remove("AGENTS_RUN_ID")
            .output()
            .unwrap()
    };
    let planted = runtime.path().join(format!("agents-{}", nix::unistd::getuid()));
    let elsewhere = runtime.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &planted).unwrap();
    let refused = |wrong: &str| {
        let out = agents(&["ls"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            err.contains(&*planted.to_string_lossy()) && err.contains(wrong),
            "{err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        let doctor = agents(&["doctor"]);
        let said = String::from_utf8_lossy(&doctor.stdout);
        assert_eq!(doctor.status.code(), Some(1), "{said}");
        assert!(said.contains("problem") && said.contains(wrong), "{said}");
    };
    refused("is a symbolic link");
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing made through the link"
    );
    std::fs::remove_file(&planted).unwrap();
    // Only root may give a folder away; others skip this case.
    std::fs::create_dir(&planted).unwrap();
    if nix::unistd::chown(&planted, Some(nix::unistd::Uid::from_raw(65534)), None).is_ok() {
        refused("belongs to another user (uid 65534)");
    }
    std::fs::remove_dir(&planted).unwrap();
    let out = agents(&["ls"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::symlink_metadata(&planted).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    agents(&["daemon", "stop"]);
}

/// The pid of run `id`'s supervisor, as the daemon recorded it.
fn supervisor_pid(home: &Home, id: &str) -> nix::unistd::Pid {
    let db = rusqlite::Connection::open(home.path().join("agents.db")).unwrap();
    let pid: i64 = db
        .query_row("SELECT supervisor_pid FROM runs WHERE id = ?1", [id], |r| r.get(0))
        .unwrap();
    nix::unistd::Pid::from_raw(pid as i32)
}

/// Issue #34 (3, 4): a stopped supervisor used to block every client of a
/// restarted daemon until it was continued, and a failed re-adoption was
/// final (`lost`). Now the restart waits on it only briefly, the run stays
/// live and says why it does not answer, and it is adopted again once it
/// does.
#[test]
fn a_stopped_supervisor_holds_up_no_restart_and_is_adopted_again_once_continued() {
    use nix::sys::signal::{Signal, kill};
    let home = Home::new();
    let stopped = home.start(&[
        "--name",
        "stopped",
        "cmd",
        "--",
        "sh",
        "-c",
        "while :; do echo tick; sleep 0.2; done",
    ]);
    let other = home.start(&["--name", "other", "cmd", "--", "sleep", "600"]);
    let supervisor = supervisor_pid(&home, &stopped);
    struct Continue(nix::unistd::Pid);
    impl Drop for Continue {
        fn drop(&mut self) {
            let _ = kill(self.0, Signal::SIGCONT);
        }
    }
    kill(supervisor, Signal::SIGSTOP).unwrap();
    let _continue = Continue(supervisor);
    let daemon = nix::unistd::Pid::from_raw(home.daemon_pid().unwrap());
    kill(daemon, Signal::SIGKILL).unwrap();
    home.wait_until("the daemon is gone", || kill(daemon, None).is_err());

    // The next command starts a daemon, which serves.
    let listed = home.json(&["ls", "--json"]);
    let states: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["running", "running"], "{listed}");
    let out = home.run(&["cancel", "stopped"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains(&format!("kill -CONT {supervisor}")), "{err}");
    home.ok(&["cancel", "other"]);
    assert_eq!(home.wait_end(&other)["state"], "cancelled");
    assert_eq!(home.state(&stopped), "running", "not lost while its supervisor lives");

    kill(supervisor, Signal::SIGCONT).unwrap();
    home.wait_until("adopted again: the cancel reaches it", || {
        home.run(&["cancel", "stopped"]).status.success()
    });
    assert_eq!(home.wait_end(&stopped)["state"], "cancelled");
}

/// Issue #34 (5): 256 connections that say their header and then nothing,
/// or stall in the middle of a frame, took every place the daemon has and
/// locked every client out. The one idle longest now makes room for the
/// newest client, again and again.
#[test]
fn idle_and_stalled_connections_in_every_place_make_room_for_the_next_client() {
    use std::io::{BufRead, Write};
    let home = Home::new();
    home.ok(&["ls"]);
    let socket = home.path().join("daemon.sock");
    let held: Vec<std::os::unix::net::UnixStream> = (0..256)
        .map(|i| {
            let mut s = std::os::unix::net::UnixStream::connect(&socket).unwrap();
            s.write_all(b"agents/1 probe\n").unwrap();
            if i % 2 == 1 {
                // A frame of 1 MiB begun, 100 bytes of it sent.
                s.write_all(&(1u32 << 20).to_be_bytes()).unwrap();
                s.write_all(&[b'{'; 100]).unwrap();
            }
            let mut header = String::new();
            std::io::BufReader::new(&s).read_line(&mut header).unwrap();
            assert!(header.starts_with("agents/"), "{header}");
            s
        })
        .collect();
    for _ in 0..3 {
        let out = home.run(&["ls"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    drop(held);
}

/// Issue #34 (10): a folder whose name is not UTF-8 was stored lossily (a
/// path naming another folder) and the run blocked. It is refused before
/// anything is stored, the path shown with its odd byte escaped.
#[test]
fn a_run_from_a_folder_whose_name_is_not_utf8_is_refused_before_anything_is_stored() {
    use std::os::unix::ffi::OsStrExt;
    let home = Home::new();
    let parent = tempfile::tempdir().unwrap();
    let odd = parent.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir(&odd).unwrap();
    let out = home
        .cmd(&["run", "-d", "cmd", "--", "true"])
        .current_dir(&odd)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("caf\\xe9") && err.contains("not UTF-8"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(home.json(&["ls", "--all", "--json"]), serde_json::json!([]));
}

/// `kill -9` of the daemon, then of run `id`'s supervisor: the run's end
/// is for the next daemon to find.
fn kill_daemon_and_supervisor(home: &Home, id: &str) {
    use nix::sys::signal::{Signal, kill};
    let supervisor = supervisor_pid(home, id);
    let daemon = nix::unistd::Pid::from_raw(home.daemon_pid().unwrap());
    kill(daemon, Signal::SIGKILL).unwrap();
    home.wait_until("the daemon is gone", || kill(daemon, None).is_err());
    kill(supervisor, Signal::SIGKILL).unwrap();
    home.wait_until("the supervisor is gone", || kill(supervisor, None).is_err());
}

/// Issue #34 (9): exit evidence that is there but cannot be read is said
/// to be so; it used to read as "the supervisor died while the run was
/// live", which it had not.
#[test]
fn exit_evidence_that_cannot_be_read_is_named_in_the_runs_reason() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sleep", "600"]);
    kill_daemon_and_supervisor(&home, &id);
    std::fs::write(home.path().join("runs").join(&id).join("exit.json"), "{ not evidence").unwrap();
    let ended = home.wait_end(&id);
    let reason = ended["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("exit.json) cannot be read"), "{ended}");
}

/// Issue #34 (9): a run that lived on while its database was recreated had
/// no record, so nothing could list or cancel it. It is recorded again
/// from its run folder and supervisor, said to be, and can be cancelled.
#[test]
fn a_live_run_whose_record_was_lost_with_the_database_is_adopted_from_its_folder() {
    let home = Home::new();
    let id = home.start(&["--name", "keeper", "cmd", "--", "sleep", "600"]);
    home.ok(&["daemon", "stop"]);
    for file in ["agents.db", "agents.db-wal", "agents.db-shm"] {
        let _ = std::fs::remove_file(home.path().join(file));
    }
    let listed = home.json(&["ls", "--json"]);
    let runs = listed.as_array().unwrap();
    assert_eq!(runs.len(), 1, "{listed}");
    assert_eq!(
        (runs[0]["id"].as_str(), runs[0]["state"].as_str()),
        (Some(id.as_str()), Some("running"))
    );
    let command = runs[0]["command"].as_array().unwrap();
    assert!(
        command[0].as_str().unwrap().ends_with("sleep") && command[1] == "600",
        "{listed}"
    );
    let recovered = home.events(&id).into_iter().find(|e| e["kind"] == "RECOVERED");
    assert!(recovered.is_some(), "{:?}", home.event_kinds(&id));
    home.ok(&["cancel", &id]);
    assert_eq!(home.wait_end(&id)["state"], "cancelled");
}

/// Issue #34 (11): a run cut short by a daemon that died (its supervisor
/// with it) ends `interrupted`, and its name does not block a retry.
#[test]
fn a_name_left_by_an_interrupted_run_is_free_for_the_retry() {
    let home = Home::new();
    let id = home.start(&["--name", "flood14", "cmd", "--", "sleep", "600"]);
    kill_daemon_and_supervisor(&home, &id);
    assert_eq!(home.wait_end(&id)["state"], "interrupted");
    let again = home.start(&["--name", "flood14", "cmd", "--", "sleep", "600"]);
    assert_eq!(home.show("flood14")["id"], again.as_str());
    home.ok(&["cancel", &again]);
}

/// An agent CLI newer than the version agents was verified with is told by
/// `doctor`, with where its screen rules can be updated; the version
/// verified is not. Every family is told of.
#[test]
fn doctor_tells_of_an_agent_cli_newer_than_the_one_verified() {
    use std::os::unix::fs::PermissionsExt;
    let home = Home::new();
    let doctor_with = |version: &str| {
        let bin = tempfile::tempdir().unwrap();
        let claude = bin.path().join("claude");
        std::fs::write(&claude, format!("#!/bin/sh\necho '{version} (Claude Code)'\n")).unwrap();
        std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
        let out = home.cmd(&["doctor"]).env("PATH", path).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let newer = doctor_with("2.1.332");
    assert!(
        newer.contains("claude 2.1.332 is newer than 2.1.197") && newer.contains("screens/claude.toml"),
        "{newer}"
    );
    let pinned = doctor_with("2.1.197");
    assert!(
        pinned.contains("claude 2.1.197") && !pinned.contains("newer than"),
        "{pinned}"
    );
    // Every agent family is told of, found or with how to install it.
    for family in agents::harness::KNOWN
        .iter()
        .filter(|f| !["shell", "cmd", "demo"].contains(f))
    {
        let told = |l: &str| {
            l.starts_with(&format!("ok       {family}")) || l.contains(&format!(" {family}: not installed ("))
        };
        assert!(pinned.lines().any(told), "doctor says nothing of {family}: {pinned}");
    }
}
