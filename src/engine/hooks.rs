//! `hooks.report` (docs/design.md §7): a harness hook fired in a run. The report is
//! recorded (a `HOOK` event, the session and transcript it names, subagent
//! lineage, the run's name from its first prompt) and its status handed to
//! the run's status loop (`queue.rs`), the one writer of status. Also the
//! search for a run's session when its harness names it only in its files.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::broadcast;

use super::Engine;
use crate::api::{ApiError, ErrorCode, HookOutcome, HookReport};
use crate::harness::status::{self, HookSeen};
use crate::harness::{self, SessionQuery};
use crate::store::harness as store;

/// How long a report waits for a run that is still starting to become
/// live: hooks such as `SessionStart` can fire before the daemon has
/// adopted the run's supervisor.
const ADOPTION_WAIT: Duration = Duration::from_secs(10);

/// How far a hook's own clock may be trusted back: a report claiming to be
/// older than this is taken as this old.
const MAX_HOOK_AGE_MS: i64 = 60_000;

pub async fn report(engine: &Arc<Engine>, mut r: HookReport) -> Result<HookOutcome, ApiError> {
    harness::hooks::bound(&mut r);
    let proof = r.proof.take();
    let (run, launch) = (r.run.clone(), r.launch_id.clone());
    let row = engine
        .store
        .harness()
        .run_of_hook(run, launch)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::new(ErrorCode::UnknownRun, "the hook names no run of this daemon"))?;
    // A run's id is printed by `agents ls`: only its proof, in the run's
    // own environment, says the hook ran inside it (issue #34).
    if !proof.is_some_and(|p| engine.proofs.holds(&row.id, &p)) {
        return Err(ApiError::bad_request(format!(
            "the hook carries no proof that it ran in run {}",
            row.id
        )));
    }
    take(engine, row, r).await
}

/// A report a boxed run's supervisor relayed from its hook socket: the
/// supervisor's link says which run it is, whatever the report claims.
pub async fn report_of_run(engine: &Arc<Engine>, run: &str, mut r: HookReport) {
    harness::hooks::bound(&mut r);
    (r.run, r.launch_id, r.proof) = (Some(run.to_string()), None, None);
    let row = match engine.store.harness().run_of_hook(r.run.clone(), None).await {
        Ok(Some(row)) => row,
        _ => return,
    };
    if let Err(e) = take(engine, row, r).await {
        tracing::info!("run {run}: a hook from its box was not taken: {}", e.message);
    }
}

/// Records a report of run `row` (its identity established) and hands its
/// status on.
async fn take(
    engine: &Arc<Engine>,
    row: crate::store::runs::RunRow,
    mut r: HookReport,
) -> Result<HookOutcome, ApiError> {
    // A transcript it names must be where its harness keeps sessions: a
    // path is indexed, shown and, with `--purge-transcripts`, deleted.
    let named = r.transcript_path.is_some() || r.agent_transcript_path.is_some();
    let roots = match named {
        true => harness::roots::of_run(&engine.paths.run_dir(&row.id), &row.harness, &row.cwd),
        false => Vec::new(),
    };
    for path in [&mut r.transcript_path, &mut r.agent_transcript_path] {
        if path
            .as_deref()
            .is_some_and(|p| !harness::roots::inside(std::path::Path::new(p), &roots))
        {
            // Not the path: a transcript's name is its session's id.
            tracing::info!(
                "run {}: a hook named a transcript outside its harness's sessions; not taken",
                row.id
            );
            *path = None;
        }
    }
    if r.launch_id.as_ref().is_some_and(|l| *l != row.launch_id) {
        return Err(ApiError::bad_request(format!(
            "the hook's launch id does not match run {}",
            row.id
        )));
    }
    if !row.state.is_live() {
        return Ok(HookOutcome::Ignored {
            run: row.id,
            ignored: "the run has ended".into(),
        });
    }
    let (id, family, report) = (row.id.clone(), row.harness.clone(), r.clone());
    let said = store::HookSaid {
        summary: harness::hooks::summary(&r),
        name: r.prompt.as_deref().and_then(harness::naming::slug),
    };
    let outcome = engine
        .store
        .harness()
        .record_hook(&id, &family, report, said)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    if let Some((agent, description)) = subagent_description(&r) {
        let id = row.id.clone();
        let _ = engine
            .store
            .lineage()
            .set_subagent_description(&id, &agent, &description)
            .await;
    }
    if let Some((status, why)) = harness::hooks::status_of(&r) {
        let now_ms = crate::store::now_ms();
        let ran_ms = r.at_ms.clamp(now_ms - MAX_HOOK_AGE_MS, now_ms);
        let at = Instant::now()
            .checked_sub(Duration::from_millis((now_ms - ran_ms) as u64))
            .unwrap_or_else(Instant::now);
        let seen = HookSeen {
            background: !r.background.is_empty(),
            from_subagent: harness::hooks::from_subagent(&r),
            ..HookSeen::new(status, why, at, ran_ms)
        };
        tokio::spawn(hand_to_status_loop(engine.clone(), row.id.clone(), seen));
    }
    // The transcript is read from the harness's own file: registered when
    // first named, read again as each turn or subagent ends (the tailer
    // also follows it as it grows).
    let transcripts: Vec<String> = match r.event.as_str() {
        "SessionStart" | "Stop" | "agent-turn-complete" => r.transcript_path.iter().cloned().collect(),
        "SubagentStop" => r.agent_transcript_path.iter().cloned().collect(),
        _ if outcome.session_learned => r.transcript_path.iter().cloned().collect(),
        _ => Vec::new(),
    };
    if let (Some(session), false) = (r.session_id.clone(), transcripts.is_empty()) {
        tokio::spawn(index(engine.clone(), row.id.clone(), session, transcripts));
    }
    engine.changed(&row.id);
    Ok(HookOutcome::Taken {
        run: row.id,
        session_learned: outcome.session_learned,
        renamed: outcome.renamed,
    })
}

/// A subagent's task description, from the `.meta.json` Claude writes
/// beside the subagent's transcript: named by `SubagentStop`, or where
/// `SubagentStart`'s session transcript says it will be.
fn subagent_description(r: &HookReport) -> Option<(String, String)> {
    use crate::transcript::claude::SubagentLink;
    let agent = r.agent_id.as_deref()?;
    if !agent.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return None;
    }
    let file = match (r.event.as_str(), &r.agent_transcript_path, &r.transcript_path) {
        ("SubagentStop", Some(own), _) => std::path::PathBuf::from(own),
        ("SubagentStart" | "SubagentStop", _, Some(session)) => std::path::Path::new(session)
            .with_extension("")
            .join("subagents")
            .join(format!("agent-{agent}.jsonl")),
        _ => return None,
    };
    let link = SubagentLink::beside(&file)?;
    (link.agent_id == agent)
        .then_some(link.description)
        .flatten()
        .map(|d| (agent.to_string(), d))
}

async fn index(engine: Arc<Engine>, run: String, session: String, paths: Vec<String>) {
    for path in paths {
        if let Err(e) =
            super::transcripts::index_transcript(&engine, std::path::Path::new(&path), &session, Some(&run)).await
        {
            tracing::debug!("transcript {path} of run {run} not indexed: {e}");
        }
    }
}

/// Gives the run's status loop the hook's word, once the run is live.
async fn hand_to_status_loop(engine: Arc<Engine>, run: String, seen: HookSeen) {
    let deadline = tokio::time::Instant::now() + ADOPTION_WAIT;
    let mut changes = engine.changes.subscribe();
    loop {
        if let Some(live) = engine.live(&run) {
            status::keep_newer(&mut live.hook.lock(), seen);
            live.wake.notify_waiters();
            return;
        }
        // Adoption announces the run (`daemon.changed`); wait for that.
        match tokio::time::timeout_at(deadline, changes.recv()).await {
            Ok(Ok(_) | Err(broadcast::error::RecvError::Lagged(_))) => continue,
            Ok(Err(broadcast::error::RecvError::Closed)) | Err(_) => return,
        }
    }
}

/// For a harness that names its session only in its own files (Codex
/// without a notify yet, Gemini, Continue): looks for the run's transcript,
/// backing off, until found, the run ends, or a hook said it. A session
/// file appears when the first prompt is sent, which may be long after
/// the start (a run left waiting an hour): the looks go on, every
/// half-minute, for as long as the run lives. A run that has written
/// nothing since the last look is not looked for again (a prompt sent is
/// output too), so runs left idle cost neither a query nor a scan.
pub fn discover_session(engine: Arc<Engine>, run: String, adapter: &'static dyn harness::Adapter, query: SessionQuery) {
    /// Backoff between looks; the last repeats. Early looks are cheap
    /// misses and later ones rare.
    const STEPS: &[u64] = &[1, 2, 4, 8, 15, 30];
    let query = Arc::new(query);
    tokio::spawn(async move {
        let mut looked: Option<Instant> = None;
        for step in STEPS.iter().chain(std::iter::repeat(&30)) {
            tokio::time::sleep(Duration::from_secs(*step)).await;
            if let Some(live) = engine.live(&run) {
                let wrote = *live.last_output.lock();
                if looked.is_some() && wrote <= looked {
                    continue;
                }
            }
            looked = Some(Instant::now());
            let Ok(Some(row)) = engine.store.runs().get(&run).await else {
                return;
            };
            if !row.state.is_live() || row.session_id.is_some() {
                return;
            }
            let q = query.clone();
            let Ok(Some(found)) = tokio::task::spawn_blocking(move || adapter.find_session(&q)).await else {
                continue;
            };
            let (id, family, session) = (run.clone(), adapter.family(), found.id.clone());
            let transcript = found.transcript.map(|p| p.to_string_lossy().into_owned());
            let path = transcript.clone();
            let _ = engine
                .store
                .harness()
                .learn_session(&id, family, &session, path, "transcript")
                .await;
            engine.changed(&run);
            index(engine.clone(), run.clone(), found.id, transcript.into_iter().collect()).await;
            return;
        }
    });
}

/// For a session its launch named (a minted id, a resume): indexes and
/// tails its transcript once the file is there, which for a new session is
/// at its first message, looking backing off as `discover_session` does,
/// for as long as the run lives. Without it the file was read only when a
/// client asked for the transcript: `ls`, search and the session's totals
/// knew nothing of it.
pub fn follow_transcript(engine: Arc<Engine>, run: String, session: String, path: std::path::PathBuf) {
    const STEPS: &[u64] = &[0, 1, 2, 4, 8, 15, 30];
    tokio::spawn(async move {
        for step in STEPS.iter().chain(std::iter::repeat(&30)) {
            tokio::time::sleep(Duration::from_secs(*step)).await;
            // A live run is in memory; only one not (yet) adopted costs a
            // read of its record, so thousands of idle runs cost no queries.
            if engine.live(&run).is_none() {
                let Ok(Some(row)) = engine.store.runs().get(&run).await else {
                    return;
                };
                if !row.state.is_live() {
                    return;
                }
            }
            if tokio::fs::metadata(&path).await.is_ok() {
                let file = path.to_string_lossy().into_owned();
                index(engine.clone(), run.clone(), session, vec![file]).await;
                return;
            }
        }
    });
}

/// The query for a run started now in `cwd`, with the launch's environment.
pub fn session_query(cwd: &str, env: &[(String, String)], config_home_var: Option<&str>) -> SessionQuery {
    let var = |k: &str| env.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    SessionQuery {
        cwd: cwd.into(),
        // A little earlier than now: file times are coarse on some systems.
        started: SystemTime::now() - Duration::from_secs(2),
        config_home: config_home_var.and_then(var).map(Into::into),
        home: var("HOME").map(Into::into),
    }
}
