//! Runs whose records were lost (issue #34): a database recreated (deleted,
//! or found empty) while runs lived on under their supervisors left those
//! runs with no record, so nothing could list, watch or cancel them. Their
//! run folders are still there, and each live supervisor says which run it
//! holds: such a run is recorded again from what it says and what `/proc`
//! says of its harness (its command line and folder), adopted, and marked
//! so (`RECOVERED`). Its name, harness family, arguments and lineage are
//! lost with the database: it is recorded as a `cmd` run.

use std::sync::Arc;

use serde_json::json;

use super::Engine;
use crate::api::RunState;
use crate::store::run_calls::Creation;
use crate::store::runs::{NewRun, RunRow};

/// Records and adopts every live run that has a folder and no record:
/// after a start on a database made anew (`Paths::lost_database`).
pub async fn adopt_all(engine: &Arc<Engine>) {
    let with_sockets = runs_with_sockets(engine);
    let Ok(known) = engine.store.runs().get_many(with_sockets.clone()).await else {
        return;
    };
    let orphans = with_sockets.into_iter().zip(known).filter(|(_, row)| row.is_none());
    for (id, _) in orphans {
        match adopt(engine, &id).await {
            Ok(()) => {
                tracing::warn!("run {id} had no record (the database was recreated): adopted from its run folder")
            }
            Err(e) => tracing::info!("run folder {id} has no record and was not adopted: {e}"),
        }
    }
}

/// The runs whose supervisor's socket is there: a few among thousands of
/// ended runs' folders.
fn runs_with_sockets(engine: &Engine) -> Vec<String> {
    let names = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|d| d.flatten().filter_map(|e| e.file_name().into_string().ok()).collect())
            .unwrap_or_default()
    };
    let ids = match engine.paths.socket_dir() {
        // `<id>.sock` beside each other in the short folder.
        Some(dir) => names(dir)
            .into_iter()
            .filter_map(|n| n.strip_suffix(".sock").map(str::to_string))
            .collect(),
        None => names(&engine.paths.home.join("runs")),
    };
    ids.into_iter()
        .filter(|id| id.parse::<ulid::Ulid>().is_ok() && engine.paths.run_socket(id).exists())
        .collect()
}

/// Records the run its supervisor holds, then follows it.
async fn adopt(engine: &Arc<Engine>, id: &str) -> anyhow::Result<()> {
    let greeted = super::adopt::greet_bounded(&engine.paths.run_socket(id)).await?;
    let hello = &greeted.2;
    if hello.run != id {
        anyhow::bail!("its socket answered for run {}", hello.run);
    }
    if hello.exited.is_some() {
        anyhow::bail!("its run has ended");
    }
    let Some(supervisor) = &hello.supervisor else {
        anyhow::bail!("its supervisor does not say who it is");
    };
    let leader = hello.leader.pid;
    let command = proc_command(leader).unwrap_or_else(|| vec![format!("pid {leader}")]);
    let cwd = std::fs::read_link(format!("/proc/{leader}/cwd"))
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
        .unwrap_or_else(|| "/".into());
    let row = RunRow {
        state: RunState::Starting,
        supervisor_pid: Some(i64::from(supervisor.pid)),
        supervisor_start: Some(supervisor.start_ticks as i64),
        boot_id: Some(supervisor.boot_id.clone()),
        rows: hello.rows,
        cols: hello.cols,
        created_at: folder_time(engine, id).unwrap_or_else(crate::store::now_ms),
        ..RunRow::new(NewRun {
            id: id.to_string(),
            name: format!("recovered-{}", id[20..].to_lowercase()),
            harness: "cmd".into(),
            host: "local".into(),
            cwd,
            args: command.iter().skip(1).cloned().collect(),
            command,
        })
    };
    let creation = Creation {
        version: None,
        profile: None,
        pass_env: Vec::new(),
        harness_env: Vec::new(),
        session: None,
        origin: Some((
            "RECOVERED",
            json!({ "why": "its record was lost with the database; recorded again from its run folder and supervisor (name, harness family, arguments and lineage unknown)" }),
        )),
        placed: false,
        name_source: "recovered",
    };
    engine.store.runs().create(row.clone(), creation).await?;
    super::adopt::follow(engine, &row, greeted).await?;
    Ok(())
}

/// A process's command line, from `/proc`.
fn proc_command(pid: i32) -> Option<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let words: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    (!words.is_empty()).then_some(words)
}

/// When the run's folder was made (ms), as near its creation as is known.
fn folder_time(engine: &Engine, id: &str) -> Option<i64> {
    let made = std::fs::metadata(engine.paths.run_dir(id)).ok()?.modified().ok()?;
    let ms = made.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok()
}
