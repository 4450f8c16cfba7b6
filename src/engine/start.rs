//! `runs.start`: normalize the intent, check every prerequisite before
//! spawn (a failed one ends the run `blocked` with the reason), then start
//! the run's supervisor and adopt it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::Engine;
use crate::api::{ApiError, ErrorCode, RunRecord, RunState, StartParams};
use crate::protocol::supervisor::{Grace, SuperviseSpec};
use crate::store::harness as harness_store;
use crate::store::names::Held;
use crate::store::run_calls::Creation;
use crate::store::runs::{Ending, NewRun, Resolved, RunRow};

/// Environment variables a harness gets from the client's environment
/// (docs/design.md §4: an allowlist; values are passed, never stored): where things
/// are and the locale (`paths::PLACE_AND_LOCALE`), and these.
const ENV_ALLOWLIST: &[&str] = &[
    "EDITOR",
    "VISUAL",
    "PAGER",
    "AGENTS_HOME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

pub async fn start(engine: &Arc<Engine>, params: StartParams) -> Result<RunRecord, ApiError> {
    start_with(engine, params, None).await
}

/// As [`start`], the run kept `pending` until run `behind` has ended (a
/// resume queued behind the run still writing its conversation): recorded
/// and checked now, launched then, unless cancelled meanwhile.
pub async fn start_after(engine: &Arc<Engine>, params: StartParams, behind: &RunRow) -> Result<RunRecord, ApiError> {
    start_with(engine, params, Some((behind.id.clone(), behind.name.clone()))).await
}

/// What refuses a start before anything is stored: anything too large to
/// list or show again (issue #11), and a mistyped family (nothing could
/// ever start it).
fn refused(engine: &Engine, params: &StartParams) -> Result<(), ApiError> {
    crate::api::bounds::check_start(params)?;
    match crate::harness::unknown(&params.spec.harness, &engine.config().profiles) {
        Some(why) => Err(ApiError::bad_request(why)),
        None => Ok(()),
    }
}

async fn start_with(
    engine: &Arc<Engine>,
    mut params: StartParams,
    behind: Option<(String, String)>,
) -> Result<RunRecord, ApiError> {
    crate::harness::apply_model(&mut params.spec, &engine.config().profiles)?;
    refused(engine, &params)?;
    let _once = match once_for(engine, &params).await? {
        Ok(guard) => guard,
        Err(started) => return Ok(started),
    };
    let config = engine.config();
    let id = ulid::Ulid::new().to_string();
    // The parent: named, or the run this request proves it comes from.
    let parent = match engine.proofs.parent_of(params.parent.as_ref(), &params.env) {
        Some(reference) => Some(resolve_row(engine, &reference).await?),
        None => None,
    };
    // Held until the row is stored (`store_created`), so a start at the
    // same moment takes another.
    let (held, name_source) = choose_name(engine, &params).await?;
    let name = held.name().to_string();
    crate::harness::apply_first_prompt(&mut params.spec, &config.profiles);

    let agents_bin = crate::harness::agents_binary();
    let prepare = |cwd: &str| {
        let agents_bin = agents_bin.clone()?;
        crate::harness::prepare(
            &params.spec.harness,
            &crate::harness::Request {
                args: &params.spec.args,
                env: &params.env,
                profiles: &config.profiles,
                run_dir: &engine.paths.run_dir(&id),
                agents_bin: &agents_bin,
                cwd: std::path::Path::new(cwd),
            },
        )
    };
    let mut prepared = prepare(&params.spec.cwd);
    let version = match &prepared {
        Ok(p) => crate::harness::version::launched(p).await,
        Err(_) => None,
    };
    // A profile may ask for the box the request did not.
    let profile_box = prepared.as_ref().ok().and_then(|p| p.profile.as_ref());
    let profile_box = profile_box.and_then(|p| config.profiles.get(p)?.sandbox?.mode());
    let mut row = new_row(&id, name, &params, &prepared, parent.as_ref(), config.default_size());
    row.sandbox = params.spec.sandbox.or(profile_box);

    // Every prerequisite, before anything is spawned.
    let mut blocked: Option<String> = (prepared.as_ref().err().cloned())
        .or_else(|| blocker(&params, &row))
        .or_else(|| unboxable(&row, prepared.as_ref().ok()?));
    let mut origin: Option<crate::worktree::Origin> = None;
    if blocked.is_none() && params.spec.worktree {
        let dest = engine.paths.worktrees().join(&row.name);
        match crate::worktree::create(std::path::Path::new(&params.spec.cwd), &row.name, &dest) {
            Ok(created) => {
                row.worktree = Some(dest.to_string_lossy().into_owned());
                row.cwd = created.cwd.to_string_lossy().into_owned();
                origin = Some(created.origin);
                // The harness keeps its transcript by cwd: plan for the new one.
                prepared = prepare(&row.cwd);
            }
            Err(reason) => blocked = Some(reason),
        }
    }
    let launch = prepared.as_ref().ok().map(|p| p.launch.clone()).unwrap_or_default();
    let query = prepared.as_ref().ok().map(|p| launch_query(p, &params, &row.cwd));
    if blocked.is_none() {
        row.command = launch.argv.clone();
        blocked = write_launch(&engine.paths.run_dir(&id), &launch, query.as_ref()).err();
    }
    let created = Created {
        version,
        profile: prepared.as_ref().ok().and_then(|p| p.profile.clone()),
        // The names passed with `--env`, so a resume passes them again; only
        // well-formed names (`KEY=value` would carry a value into the store).
        pass_env: params
            .spec
            .pass_env
            .iter()
            .filter(|n| crate::harness::is_env_name(n))
            .cloned()
            .collect(),
        // The harness's own variables the client had set (names only).
        harness_env: prepared.as_ref().map(|p| p.harness_env.clone()).unwrap_or_default(),
        session: launch.session.clone(),
        origin: origin.and_then(|o| serde_json::to_value(o).ok()),
        placed: params.placed,
        name_source,
    };
    store_created(engine, &row, created, parent.as_ref()).await?;
    // The row wears the name now.
    drop(held);

    let prepared = match (blocked, prepared) {
        (None, Ok(prepared)) => prepared,
        (Some(reason), _) | (None, Err(reason)) => return end_blocked(engine, &id, reason).await,
    };
    // Its session looked for once it runs, when the launch does not name it.
    let discover = query
        .filter(|_| launch.session.is_none() && prepared.adapter.has_sessions())
        .map(|(_, query)| query);
    let launching = Launching {
        row,
        prepared,
        params,
        config,
        discover,
    };
    match behind {
        None => launching.launch(engine).await,
        Some(behind) => launching.after(engine, behind).await,
    }
}

/// A caller's launch id makes a retry return the run the first attempt
/// created (issue #5): the hold to keep until this start is recorded, or
/// that run's record.
async fn once_for<'a>(
    engine: &'a Engine,
    params: &StartParams,
) -> Result<Result<Option<super::once::StartGuard<'a>>, RunRecord>, ApiError> {
    let Some(launch_id) = &params.launch_id else {
        return Ok(Ok(None));
    };
    super::once::validate_id("launch id", launch_id)?;
    let guard = engine.starts.hold(launch_id).await;
    match super::once::started(engine, launch_id).await? {
        Some(run) => Ok(Err(run.to_record())),
        None => Ok(Ok(Some(guard))),
    }
}

/// A run recorded and checked, to be spawned: now, or once the run it is
/// queued behind has ended.
struct Launching {
    row: RunRow,
    prepared: crate::harness::Prepared,
    params: StartParams,
    config: crate::config::Config,
    discover: Option<crate::harness::SessionQuery>,
}

impl Launching {
    async fn launch(self, engine: &Arc<Engine>) -> Result<RunRecord, ApiError> {
        let Launching {
            row,
            prepared,
            params,
            config,
            discover,
        } = self;
        let id = row.id.clone();
        if let Some(blocked) = spawn_and_adopt(engine, row, &prepared, &params, &config).await? {
            return Ok(blocked);
        }
        if let Some(query) = discover {
            super::hooks::discover_session(engine.clone(), id.clone(), prepared.adapter, query);
        }
        if let Some(known) = &prepared.launch.session
            && let Some(path) = &known.transcript
        {
            super::hooks::follow_transcript(engine.clone(), id.clone(), known.id.clone(), path.clone());
        }
        if let Some(prompt) = params.spec.prompt.filter(|p| !p.is_empty()) {
            super::queue::enqueue(engine, &id, &ulid::Ulid::new().to_string(), &prompt).await?;
        }
        record(engine, &id).await
    }

    /// Kept `pending` (`QUEUED` says behind which run) until `behind` has
    /// ended, then launched — unless it was cancelled meanwhile. The record
    /// is answered now.
    async fn after(self, engine: &Arc<Engine>, (behind, name): (String, String)) -> Result<RunRecord, ApiError> {
        let id = self.row.id.clone();
        let data = json!({ "behind": behind, "name": name });
        let _ = engine.store.runs().append_event(&id, "QUEUED", data).await;
        engine.queued.lock().insert(id.clone(), (behind.clone(), name));
        let (engine_then, id_then) = (engine.clone(), id.clone());
        tokio::spawn(async move {
            let engine = engine_then;
            // A run live but unfollowed a while is waited for again.
            while let Ok(seen) = super::waits::wait(&engine, &behind, false).await
                && seen.state.is_live()
            {}
            let still_queued = engine.queued.lock().remove(&id_then).is_some();
            if still_queued && let Err(e) = self.launch(&engine).await {
                let _ = end_blocked(&engine, &id_then, e.message).await;
            }
        });
        record(engine, &id).await
    }
}

/// Ends a run queued behind another before it was launched: cancelled.
/// Whether it was such a run.
pub async fn cancel_queued(engine: &Arc<Engine>, id: &str) -> bool {
    let Some((_, name)) = engine.queued.lock().remove(id) else {
        return false;
    };
    let ending = Ending {
        state: RunState::Cancelled,
        exit_code: None,
        signal: None,
        reason: Some(format!("cancelled while queued behind run {name}; never started")),
        output_bytes: None,
        event_kind: "RUN_CANCELLED",
        evidence: json!({}),
        ended_at: None,
    };
    super::adopt::finish(engine, id, ending).await;
    true
}

/// The run's name and where it came from: the one given (refused while a
/// live run wears it; an ended run's name may be worn again, and then
/// finds the new run), else one made from the first prompt when it is
/// known now, else a placeholder the first prompt replaces
/// (`hooks.report`).
async fn choose_name(engine: &Arc<Engine>, params: &StartParams) -> Result<(Held, &'static str), ApiError> {
    if let Some(name) = &params.spec.name {
        crate::api::bounds::validate_name(name)?;
        let held = engine
            .store
            .names()
            .hold_given(name)
            .await
            .map_err(ApiError::internal)?;
        let Some(held) = held else {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("a live run is named '{name}' already"),
            ));
        };
        return Ok((held, harness_store::NAME_GIVEN));
    }
    match params.spec.prompt.as_deref().and_then(crate::harness::naming::slug) {
        Some(base) => Ok((
            engine
                .store
                .names()
                .hold_unique(&base)
                .await
                .map_err(ApiError::internal)?,
            harness_store::NAME_FROM_PROMPT,
        )),
        None => Ok((
            free_name(engine, &params.spec.harness).await?,
            harness_store::NAME_PLACEHOLDER,
        )),
    }
}

/// The new run's record as it is stored first: `pending`, under its
/// parent's root, the command it will run (or the one asked for, when the
/// harness could not be prepared).
fn new_row(
    id: &str,
    name: String,
    params: &StartParams,
    prepared: &Result<crate::harness::Prepared, String>,
    parent: Option<&RunRow>,
    (default_rows, default_cols): (u16, u16),
) -> RunRow {
    let (harness, command) = match prepared {
        Ok(p) => (p.adapter.family().to_string(), p.launch.argv.clone()),
        Err(_) => {
            let mut c = vec![params.spec.harness.clone()];
            c.extend(params.spec.args.iter().cloned());
            (params.spec.harness.clone(), c)
        }
    };
    let row = RunRow::new(NewRun {
        id: id.to_string(),
        name,
        harness,
        host: "local".into(),
        cwd: params.spec.cwd.clone(),
        command,
        args: params.spec.args.clone(),
    });
    RunRow {
        parent_run_id: parent.map(|p| p.id.clone()),
        root_run_id: parent.map_or_else(|| id.to_string(), |p| p.root_run_id.clone()),
        detached: params.spec.detached,
        launch_id: params.launch_id.clone().unwrap_or(row.launch_id.clone()),
        rows: params.rows.unwrap_or(default_rows),
        cols: params.cols.unwrap_or(default_cols),
        timeout_secs: params.spec.timeout_secs,
        sandbox: params.spec.sandbox,
        ..row
    }
}

/// The first prerequisite of the request itself that fails: its cwd, its
/// timeout, its size.
fn blocker(params: &StartParams, row: &RunRow) -> Option<String> {
    let cwd = std::path::Path::new(&params.spec.cwd);
    let (rows, cols) = (row.rows, row.cols);
    if !(cwd.is_absolute() && cwd.is_dir()) {
        Some(format!("cwd does not exist or is not a directory: {}", params.spec.cwd))
    } else if params.spec.timeout_secs == Some(0) {
        Some("bad option: --timeout must be at least 1 second".into())
    } else if !(2..=1000).contains(&rows) | !(2..=2000).contains(&cols) {
        Some(format!("bad option: size {cols}x{rows} out of range"))
    } else {
        None
    }
}

/// Why a run asked to be boxed cannot be: its family (one declared in
/// `config.toml`) does not say it may.
fn unboxable(row: &RunRow, prepared: &crate::harness::Prepared) -> Option<String> {
    let family = prepared.adapter.family();
    (row.sandbox.is_some() && !prepared.adapter.sandbox_ready()).then(|| {
        format!("{family} is not sandbox-ready: its runs are not boxed until its [harnesses.{family}] says sandbox_ready = true")
    })
}

/// What the creation of a run records beside its row.
struct Created {
    version: Option<String>,
    profile: Option<String>,
    pass_env: Vec<String>,
    harness_env: Vec<String>,
    session: Option<crate::harness::KnownSession>,
    /// A worktree run's `WORKTREE_CREATED` data.
    origin: Option<serde_json::Value>,
    placed: bool,
    name_source: &'static str,
}

/// Stores the new run, `RUN_CREATED` and what else its creation says, in
/// one transaction; then its parent's `CHILD_STARTED` (a daemon that
/// mirrors the parent from another host learns this way of children
/// started inside it, docs/design.md §8).
async fn store_created(
    engine: &Arc<Engine>,
    row: &RunRow,
    created: Created,
    parent: Option<&RunRow>,
) -> Result<(), ApiError> {
    let Created {
        version,
        profile,
        pass_env,
        harness_env,
        session,
        origin,
        placed,
        name_source,
    } = created;
    let creation = Creation {
        version,
        profile,
        pass_env,
        harness_env,
        session: session.map(|s| (s.id, s.transcript.map(|p| p.to_string_lossy().into_owned()))),
        origin: origin.map(|data| (crate::worktree::CREATED_EVENT, data)),
        placed,
        name_source,
    };
    engine
        .store
        .runs()
        .create(row.clone(), creation)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    engine.changed(&row.id);
    if let Some(parent) = parent {
        let data = json!({ "child": row.id });
        let _ = engine
            .store
            .runs()
            .append_event(&parent.id, "CHILD_STARTED", data)
            .await;
        engine.changed(&parent.id);
    }
    Ok(())
}

/// Spawns the run's supervisor and adopts it; a supervisor that cannot be
/// spawned ends the run `blocked`, and its record is the answer.
async fn spawn_and_adopt(
    engine: &Arc<Engine>,
    mut row: RunRow,
    prepared: &crate::harness::Prepared,
    params: &StartParams,
    config: &crate::config::Config,
) -> Result<Option<RunRecord>, ApiError> {
    let id = row.id.clone();
    // A profile with fallbacks keeps what a next attempt needs, in memory,
    // before the harness can end.
    super::fallback::remember(&id, prepared.profile.as_deref(), &config.profiles, params);
    let (sup_pid, sup_start) = match supervise(engine, &row, prepared, params, config).await {
        Ok(identity) => identity,
        Err(reason) => return end_blocked(engine, &id, reason).await.map(Some),
    };
    let key = id.clone();
    engine
        .store
        .runs()
        .mark_starting(&key, sup_pid, sup_start)
        .await
        .map_err(ApiError::internal)?;
    row.state = RunState::Starting;
    row.supervisor_pid = Some(sup_pid);
    row.supervisor_start = Some(sup_start);
    if let Err(e) = super::adopt::adopt(engine, &row).await {
        tracing::warn!("cannot adopt new run {id}: {e}");
        super::adopt::supervisor_gone(engine, &id).await;
    }
    Ok(None)
}

/// What the launch's variables name as folders: among them the harness's
/// config home, which a box writes through.
fn config_homes(prepared: &crate::harness::Prepared) -> Vec<std::path::PathBuf> {
    prepared.launch.env.iter().map(|(_, v)| v.into()).collect()
}

/// Spawns the supervisor of `row`'s harness as `prepared` launches it,
/// boxed as the run asks (a first attempt, or the next one of a fallback):
/// its identity, or why it could not start.
pub(super) async fn supervise(
    engine: &Arc<Engine>,
    row: &RunRow,
    prepared: &crate::harness::Prepared,
    params: &StartParams,
    config: &crate::config::Config,
) -> Result<(i64, i64), String> {
    let spec = SuperviseSpec {
        run: row.id.clone(),
        argv: prepared.launch.argv.clone(),
        cwd: row.cwd.clone(),
        env: harness_env(engine, params, row, prepared),
        rows: row.rows,
        cols: row.cols,
        timeout_secs: row.timeout_secs,
        grace: Grace {
            after_sigint_ms: config.engine.cancel_sigint_grace_ms,
            after_sigterm_ms: config.engine.cancel_sigterm_grace_ms,
        },
        family: row.harness.clone(),
        umask: super::user_umask(),
        disk_full_patience_ms: config.engine.disk_full_patience_ms,
        flood_bytes_per_s: config.engine.flood_bytes_per_s,
        screen_rules: super::user_screen_rules(&engine.paths),
        open_files: None,
        hook_socket: None,
    };
    let paths = engine.paths.clone();
    let (sandbox, config_homes) = (row.sandbox, config_homes(prepared));
    tokio::task::spawn_blocking(move || {
        let spec = match sandbox {
            Some(mode) => boxed(spec, mode, &config_homes, &paths)?,
            None => spec,
        };
        spawn_supervisor(&paths, &spec)
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()))
}

/// The run's launch put in a bubblewrap box (`harness::sandbox`); or why
/// it cannot be, and so is not started at all.
fn boxed(
    mut spec: SuperviseSpec,
    mode: crate::values::sandbox::Sandbox,
    config_homes: &[std::path::PathBuf],
    paths: &crate::paths::Paths,
) -> Result<SuperviseSpec, String> {
    use crate::harness::sandbox;
    let var = |name: &str| spec.env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let path = var("PATH");
    let bwrap = sandbox::usable(path.as_deref())?;
    let home = var("HOME").map(std::path::PathBuf::from);
    // The harness's own config home, as its adapter set it: written
    // through. Never the home itself, nor the agents state directory.
    let writable: Vec<std::path::PathBuf> = config_homes
        .iter()
        .filter(|p| p.is_absolute() && p.is_dir())
        .filter(|p| Some(*p) != home.as_ref() && **p != paths.home)
        .cloned()
        .collect();
    let cwd = std::path::PathBuf::from(&spec.cwd);
    // The state directory is not in the box: the run's hooks reach the
    // daemon through a socket of the run's own, which its supervisor
    // serves (`supervise::hooks`), with this binary to run them.
    let run_dir = paths.run_dir(&spec.run);
    let hook_socket = run_dir.join("hook.sock");
    let agents_bin = std::env::current_exe().ok();
    // What of the run's folder its launch names (`--settings FILE`):
    // shown to it read-only, under the box's own `/run`.
    let run_files = sandbox::show_run_files(&mut spec.argv, &run_dir);
    let made = sandbox::Box {
        mode,
        bwrap: &bwrap,
        cwd: &cwd,
        root: &sandbox::writable_root(&cwd),
        home: home.as_deref(),
        writable,
        program: spec.argv.first().and_then(|p| sandbox::program(p, path.as_deref())),
        hook_socket: Some(&hook_socket),
        agents_bin: agents_bin.as_deref(),
        run_files,
    };
    spec.argv = made.wrap(&spec.argv);
    spec.env.push((
        crate::harness::sandbox::HOOK_SOCKET_VAR.into(),
        sandbox::HOOK_SOCKET.into(),
    ));
    spec.hook_socket = Some(hook_socket.display().to_string());
    Ok(spec)
}

async fn end_blocked(engine: &Arc<Engine>, id: &str, reason: String) -> Result<RunRecord, ApiError> {
    let ending = Ending {
        state: RunState::Blocked,
        exit_code: None,
        signal: None,
        reason: Some(reason),
        output_bytes: None,
        event_kind: "RUN_ERROR",
        evidence: json!({}),
        ended_at: None,
    };
    super::adopt::finish(engine, id, ending).await;
    record(engine, id).await
}

pub async fn record(engine: &Arc<Engine>, id: &str) -> Result<RunRecord, ApiError> {
    engine
        .store
        .runs()
        .get(id)
        .await
        .map_err(ApiError::internal)?
        .map(|r| engine.held_ends.apply(r).to_record())
        .ok_or_else(|| ApiError::new(ErrorCode::UnknownRun, format!("no run {id}")))
}

/// Resolves a reference (id, unique prefix, or name) to its row.
pub async fn resolve_row(engine: &Arc<Engine>, reference: &str) -> Result<RunRow, ApiError> {
    let r = reference.to_string();
    let found = engine.store.runs().resolve(&r).await.map_err(ApiError::internal)?;
    match found {
        Ok(Some(row)) => Ok(engine.held_ends.apply(row)),
        Ok(None) | Err(Resolved::None) | Err(Resolved::One(_)) => Err(ApiError::new(
            ErrorCode::UnknownRun,
            format!("no run matches '{reference}'"),
        )),
        Err(Resolved::Many(ids)) => Err(ApiError::new(
            ErrorCode::AmbiguousRun,
            format!(
                "'{reference}' matches several runs: {}",
                crate::store::runs::several(&ids)
            ),
        )),
    }
}

async fn free_name(engine: &Arc<Engine>, harness: &str) -> Result<Held, ApiError> {
    let base: String = harness
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(24)
        .collect();
    let base = if base.is_empty() { "run".to_string() } else { base };
    engine.store.names().first_free(&base).await.map_err(ApiError::internal)
}

/// The harness's environment, by precedence (docs/design.md §4): the client's
/// allowlisted variables, those the harness reads (`Adapter::env_names`)
/// and those passed by name (run options and the profile), then the
/// adapter's (config home), then ours.
fn harness_env(
    engine: &Engine,
    params: &StartParams,
    row: &RunRow,
    prepared: &crate::harness::Prepared,
) -> Vec<(String, String)> {
    let passed = |k: &String| {
        params.spec.pass_env.contains(k) || prepared.pass_env.contains(k) || prepared.harness_env.contains(k)
    };
    let mut env: Vec<(String, String)> = params
        .env
        .iter()
        .filter(|(k, _)| ENV_ALLOWLIST.contains(&k.as_str()) || crate::paths::is_place_or_locale(k) || passed(k))
        .filter(|(k, _)| k != "AGENTS_HOME" && !prepared.launch.env.iter().any(|(a, _)| a == k))
        .cloned()
        .collect();
    env.extend(prepared.launch.env.iter().cloned());
    // `agents hook` in the harness must reach this daemon, whatever the
    // client's environment said.
    env.push(("AGENTS_HOME".into(), engine.paths.home.to_string_lossy().into_owned()));
    env.push(("TERM".into(), "xterm-256color".into()));
    env.push(("COLORTERM".into(), "truecolor".into()));
    env.push(("AGENTS_RUN_ID".into(), row.id.clone()));
    env.push((crate::proof::PROOF_VAR.into(), engine.proofs.mint(&row.id)));
    env.push(("AGENTS_LAUNCH_ID".into(), row.launch_id.clone()));
    if let Some(seat) = &params.team {
        env.push(("AGENTS_TEAM".into(), seat.team.clone()));
        env.push(("AGENTS_MEMBER".into(), seat.member.clone()));
    }
    env
}

/// Where the launch's harness looks for its session: its config home as
/// the launch set it.
fn launch_query(
    prepared: &crate::harness::Prepared,
    params: &StartParams,
    cwd: &str,
) -> (&'static dyn crate::harness::Adapter, crate::harness::SessionQuery) {
    let mut env = prepared.launch.env.clone();
    env.extend(params.env.iter().cloned());
    let query = super::hooks::session_query(cwd, &env, prepared.adapter.config_home_var());
    (prepared.adapter, query)
}

/// Writes into the run's folder what its launch needs (a harness's
/// per-run hook settings) and where its harness keeps sessions, for the
/// transcripts its hooks name (`harness::roots`).
fn write_launch(
    run_dir: &std::path::Path,
    launch: &crate::harness::Launch,
    query: Option<&(&'static dyn crate::harness::Adapter, crate::harness::SessionQuery)>,
) -> Result<(), String> {
    write_run_files(run_dir, &launch.files)?;
    touch_files(&launch.touch);
    match query {
        Some((adapter, query)) => crate::harness::roots::keep(run_dir, &adapter.session_roots(query)),
        None => Ok(()),
    }
}

/// Writes the files a launch needs (a harness's per-run hook settings)
/// into the run's folder; a failure is the reason the run is blocked.
pub(crate) fn write_run_files(run_dir: &std::path::Path, files: &[(std::path::PathBuf, String)]) -> Result<(), String> {
    for (path, contents) in files {
        if !path.starts_with(run_dir) {
            return Err(format!("refusing to write {} outside the run folder", path.display()));
        }
        std::fs::create_dir_all(path.parent().unwrap_or(run_dir))
            .and_then(|()| std::fs::write(path, contents))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Sets the modification time of each existing file a launch names to now
/// (the session Continue resumes is the one it wrote last). A file not
/// there is left so: the harness starts a session of its own.
pub(crate) fn touch_files(files: &[std::path::PathBuf]) {
    for path in files {
        let now = std::time::SystemTime::now();
        if let Err(e) = std::fs::File::options()
            .append(true)
            .open(path)
            .and_then(|f| f.set_modified(now))
        {
            tracing::debug!("cannot touch {}: {e}", path.display());
        }
    }
}

/// How long a new supervisor has to say it is ready (it has bound its socket
/// and spawned the harness).
const SUPERVISOR_READY: Duration = Duration::from_secs(10);

/// Starts `agents supervise` detached in its own session, hands it the spec on
/// stdin, and waits for its ready line. Returns its pid and start time.
fn spawn_supervisor(paths: &crate::paths::Paths, spec: &SuperviseSpec) -> Result<(i64, i64), String> {
    // The file at our path, even when it was replaced since we started (the
    // daemon re-executes on it within `upgrade::CHECK_EVERY`).
    let exe = crate::harness::agents_binary()?;
    std::fs::create_dir_all(paths.run_dir(&spec.run)).map_err(|e| format!("cannot create the run folder: {e}"))?;
    let log = std::fs::File::create(paths.supervisor_log(&spec.run))
        .map_err(|e| format!("cannot create the supervisor log: {e}"))?;
    let mut cmd = Command::new(exe);
    // No closure runs between fork and exec, so the child is spawned
    // without copying the daemon's memory map (posix_spawn: a fork's cost
    // grows with the daemon, and so with the runs it holds). The supervisor
    // leaves our session itself, first thing (`supervise::main`).
    cmd.arg("supervise")
        .env_clear()
        .envs(crate::paths::process_env())
        .env("AGENTS_HOME", &paths.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the run's supervisor: {e}"))?;
    let pid = child.id() as i32;
    // The user's open-files limit, which the supervisor takes back itself.
    let spec = SuperviseSpec {
        open_files: super::limits::user_open_files(),
        ..spec.clone()
    };
    let spec_json = serde_json::to_vec(&spec).map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(&spec_json);
    }
    let stdout = child.stdout.take();
    // Reaped whenever it ends, so it never lingers as a zombie.
    super::reaper::reap(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        if let Some(out) = stdout {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(SUPERVISOR_READY)
        .map_err(|_| "the run's supervisor did not start in time".to_string())?;
    let line = line.trim();
    if let Some(err) = line.strip_prefix("error: ") {
        return Err(err.to_string());
    }
    if line != "ready" {
        return Err("the run's supervisor exited before it was ready".into());
    }
    let start = crate::pty::identity::start_ticks(pid).unwrap_or(0) as i64;
    Ok((pid as i64, start))
}

pub fn ended_state_error(row: &RunRow) -> ApiError {
    super::adopt::not_running(&row.name, row.state)
}
