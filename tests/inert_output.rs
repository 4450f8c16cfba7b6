//! Nothing an agent, a transcript or a path carries drives the user's
//! terminal through the CLI: control bytes in a run's cwd, its command, its
//! failure reason or its transcript are printed escaped by `ls`, `show`,
//! `transcript` and `search`, on stdout and stderr; `--json` keeps them
//! exact.

mod common;

use std::io::Write;

use common::Home;
use serde_json::Value;

/// Sets the terminal title, then writes the clipboard (OSC 52).
const HOSTILE: &str = "\x1b]2;owned\x07\x1b]52;c;ZXZpbA==\x07";

fn assert_inert(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !bytes.contains(&0x1b) && !bytes.contains(&0x07),
        "{what} printed raw control bytes: {text:?}"
    );
}

#[test]
fn control_bytes_from_runs_and_transcripts_are_printed_escaped_and_json_stays_exact() {
    let home = Home::new();
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join(format!("proj{HOSTILE}"));
    std::fs::create_dir_all(&cwd).unwrap();
    let out = home
        .cmd(&[
            "run",
            "-d",
            "--name",
            "hostile",
            "cmd",
            "--",
            "sh",
            "-c",
            "echo hi; exit 3",
            HOSTILE,
        ])
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    home.wait_end(&id);

    for args in [vec!["ls", "--all"], vec!["show", &id]] {
        let out = home.run(&args);
        assert!(out.status.success(), "{args:?}");
        assert_inert(&format!("{args:?}"), &out.stdout);
        assert_inert(&format!("{args:?} stderr"), &out.stderr);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("\\x1b]52;c;ZXZpbA==\\x07"),
            "{args:?}: shown escaped"
        );
    }
    let shown: Value = home.json(&["show", &id, "--json"]);
    let command: Vec<String> = serde_json::from_value(shown["command"].clone()).unwrap();
    assert_eq!(command.last().map(String::as_str), Some(HOSTILE), "--json is exact");
    assert!(shown["cwd"].as_str().unwrap().ends_with(HOSTILE));

    // A transcript whose model wrote the same bytes, and a search for them.
    let session = dir.path().join("s.jsonl");
    let line = serde_json::json!({
        "type": "assistant", "uuid": "u1", "sessionId": "S-hostile", "timestamp": "2026-12-01T10:00:00.000Z",
        "message": {"role": "assistant", "model": "m", "content": [{"type": "text", "text": format!("look {HOSTILE} marmot")}]}
    });
    std::fs::File::create(&session)
        .unwrap()
        .write_all(format!("{line}\n").as_bytes())
        .unwrap();
    let mut conn = agents::store::open_migrated(&home.path().join("agents.db")).unwrap();
    agents::transcript::index::index_transcript(&mut conn, &session, "S-hostile", Some(&id)).unwrap();
    drop(conn);
    for args in [vec!["transcript", id.as_str()], vec!["search", "marmot"]] {
        let out = home.run(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_inert(&format!("{args:?}"), &out.stdout);
        assert!(String::from_utf8_lossy(&out.stdout).contains("marmot"), "{args:?}");
    }
    // An error that quotes what the user gave: on stderr, escaped too.
    let out = home.run(&["show", HOSTILE]);
    assert!(!out.status.success());
    assert_inert("an error naming the reference", &out.stderr);
}

/// `agents doctor | head -1`, `agents ls | true`: a reader that went away
/// ends the verb quietly (as other tools do), never with a panic.
#[test]
fn a_verb_whose_reader_went_away_ends_quietly() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "echo hi; sleep 30"]);
    for args in [
        &["doctor"][..],
        &["ls", "--all"][..],
        &["daemon", "status"][..],
        &["logs", &id][..],
        &["ls", "--json"][..],
    ] {
        let (read, write) = nix::unistd::pipe().unwrap();
        drop(read);
        let out = home
            .cmd(args)
            .stdout(std::process::Stdio::from(write))
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
        assert_eq!(
            out.status.code(),
            Some(141),
            "{args:?} ends as a tool killed by SIGPIPE does: {:?}",
            out.status
        );
    }
}
