//! A history of ended runs written straight into a real database, as the
//! daemon writes them (records, their events, their output logs), for the
//! benchmarks that need many (`tui_first_frame`, `scale`).

use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::params;

use super::Home;

/// Ended states in rough proportion to a real history: most succeed.
fn state_of(i: usize) -> (&'static str, Option<i64>, Option<&'static str>, &'static str) {
    match i % 100 {
        0..=79 => ("succeeded", Some(0), None, "exited with code 0"),
        80..=89 => ("failed", Some(1), None, "exited with code 1"),
        90..=95 => (
            "cancelled",
            Some(130),
            None,
            "cancelled; ended after SIGINT; exited with code 130",
        ),
        96..=97 => ("blocked", None, None, "binary not found: claude"),
        98 => (
            "interrupted",
            None,
            None,
            "the supervisor died and the harness was gone",
        ),
        _ => (
            "timed_out",
            None,
            Some("SIGTERM"),
            "time limit reached; ended after SIGTERM",
        ),
    }
}

/// Writes `n` ended runs, oldest first, spread over the last 30 days.
pub fn fill(home: &Home, n: usize) {
    let mut db = rusqlite::Connection::open(home.home.join("agents.db")).expect("open the database");
    let tx = db.transaction().expect("a transaction");
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    let span_ms = 30 * 24 * 3600 * 1000u64;
    let mut parent: Option<String> = None;
    {
        let mut run = tx
            .prepare(
                "INSERT INTO runs (id, name, harness, host, cwd, command, state, status, parent_run_id, root_run_id,
                    detached, launch_id, pid, pgid, proc_start, boot_id, supervisor_pid, supervisor_start, exit_code,
                    signal, reason, created_at, started_at, ended_at, rows, cols, output_bytes, args)
                 VALUES (?1, ?2, ?3, 'local', ?4, ?5, ?6, 'unknown', ?7, ?8, 0, ?9, ?10, ?10, ?11,
                    'bench-boot', ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, 40, 120, ?20, ?21)",
            )
            .expect("prepare runs");
        let mut event = tx
            .prepare("INSERT INTO events (run_id, seq, kind, at, data) VALUES (?1, ?2, ?3, ?4, ?5)")
            .expect("prepare events");
        for i in 0..n {
            let created = now_ms - span_ms + span_ms * i as u64 / n as u64;
            let id = ulid::Ulid::from_parts(created, i as u128).to_string();
            let launch = ulid::Ulid::from_parts(created, (i + n) as u128).to_string();
            let (state, exit, signal, reason) = state_of(i);
            let (harness, command, args) = match i % 3 {
                0 => ("claude", r#"["/usr/local/bin/claude"]"#, "[]"),
                1 => ("cmd", r#"["/usr/bin/make","test"]"#, r#"["make","test"]"#),
                _ => ("demo", r#"["/usr/local/bin/agents","demo-agent"]"#, "[]"),
            };
            // Every tenth run is a subagent of the run before it.
            let parent_id = if i % 10 == 9 { parent.clone() } else { None };
            let root = parent_id.clone().unwrap_or_else(|| id.clone());
            let pid = 10_000 + i as i64;
            let log = format!("\x1b[1mrun {i}\x1b[0m: \x1b[32mok\x1b[0m\r\n");
            run.execute(params![
                id,
                format!("run-{i:05}"),
                harness,
                format!("/home/user/src/project-{}", i % 7),
                command,
                state,
                parent_id,
                root,
                launch,
                pid,
                created as i64 / 10,
                pid - 3,
                created as i64 / 10 - 1,
                exit,
                signal,
                reason,
                created as i64,
                created as i64 + 12,
                created as i64 + 60_000 + (i as i64 % 600) * 1000,
                log.len() as i64,
                args,
            ])
            .expect("insert a run");
            let events = [
                (
                    "RUN_CREATED",
                    format!(r#"{{"harness":"{harness}","name":"run-{i:05}","state":"pending"}}"#),
                ),
                (
                    "SUPERVISOR_STARTED",
                    format!(r#"{{"state":"starting","supervisor_pid":{}}}"#, pid - 3),
                ),
                (
                    "RUN_STARTED",
                    format!(r#"{{"pgid":{pid},"pid":{pid},"state":"running"}}"#),
                ),
                (
                    "RUN_FINISHED",
                    format!(
                        r#"{{"exit_code":{},"reaped":true,"group_gone":true,"state":"{state}"}}"#,
                        exit.unwrap_or(-1)
                    ),
                ),
            ];
            for (seq, (kind, data)) in events.iter().enumerate() {
                event
                    .execute(params![id, seq as i64 + 1, kind, created as i64 + seq as i64, data])
                    .expect("insert an event");
            }
            let dir = home.home.join("runs").join(&id);
            std::fs::create_dir_all(&dir).expect("run dir");
            std::fs::write(dir.join("output.log"), log).expect("output log");
            if i % 10 != 9 {
                parent = Some(id);
            }
        }
    }
    tx.commit().expect("commit");
}
