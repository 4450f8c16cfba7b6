//! `agents supervise`: one small process per run (docs/design.md §2). It owns the PTY
//! and the harness child, appends every output byte to the run's log, feeds
//! the run's emulator, and serves the run socket. It never exits because a
//! client or the daemon left: only when the run has ended.

mod child;
pub mod hooks;
mod keeper;
mod notes;
mod output;
mod screens;
mod server;
mod typing;
mod yielding;
pub use screens::{FRAME as SCREEN_FRAME, SCROLLED_KEPT, SMALL_CHANGE_ROWS, method as screen_method, scrolled_budget};

use std::sync::Arc;

use anyhow::{Context, Result};

pub use crate::protocol::exit::{EndedBy, ExitEvidence, ProcessNote};
pub use crate::protocol::supervisor::{Grace, SuperviseSpec};

use crate::paths::Paths;

/// Entry point of `agents supervise`: reads the spec from stdin and runs
/// until the harness has ended and the daemon has the evidence (or is gone).
pub fn main(paths: Paths) -> Result<i32> {
    // A session of its own, before anything else: signals to the daemon's
    // group or session never reach it, and the scheduler weighs it apart
    // from the daemon (autogroup; a flood's yield renices this session).
    // Spawned by an older daemon, it leads one already and this fails.
    let _ = nix::unistd::setsid();
    let spec: SuperviseSpec =
        serde_json::from_reader(std::io::stdin().lock()).context("reading the run spec from stdin")?;
    if let Some(soft) = spec.open_files {
        take_back_open_files(soft).context("taking back the user's open-files limit")?;
    }
    // Orphaned descendants of the harness are re-parented to us, so we can
    // report the ones that escaped the process group (docs/design.md §4).
    nix::sys::prctl::set_child_subreaper(true).context("becoming a child subreaper")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the supervisor runtime")?;
    rt.block_on(run(paths, spec))
}

/// The user's soft limit of open files again (the daemon raised its own,
/// which the supervisor inherited), so the harness gets it.
fn take_back_open_files(soft: u64) -> std::io::Result<()> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).map_err(std::io::Error::from)?;
    setrlimit(Resource::RLIMIT_NOFILE, soft.min(hard), hard).map_err(std::io::Error::from)
}

async fn run(paths: Paths, spec: SuperviseSpec) -> Result<i32> {
    let socket = paths.run_socket(&spec.run);
    let _ = std::fs::remove_file(&socket);
    let listener = tokio::net::UnixListener::bind(&socket).with_context(|| format!("binding {}", socket.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
    }
    let (log, checkpoints) = output::OutputLog::create(&paths, &spec.run)?;
    // A boxed run's hook socket is there before its box binds it.
    let hook_listener = match &spec.hook_socket {
        Some(path) => Some(hooks::bind(std::path::Path::new(path)).with_context(|| format!("binding {path}"))?),
        None => None,
    };
    let started = match child::spawn(&spec) {
        Ok(started) => started,
        Err(e) => {
            // The daemon reads this line and blocks the run with the reason.
            println!("error: {e:#}");
            let _ = std::fs::remove_file(&socket);
            return Ok(1);
        }
    };
    let sizes = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(paths.sizes(&spec.run))
        .ok();
    let run = Arc::new(server::Supervised::new(
        &spec,
        started.master,
        started.writer,
        started.leader.clone(),
        sizes,
        log.end_offset(),
    ));
    run.record_first_size();
    output::start_reader(
        run.clone(),
        started.reader,
        log,
        checkpoints,
        std::time::Duration::from_millis(spec.disk_full_patience_ms),
        spec.flood_bytes_per_s,
    )?;
    let exited = child::watch_exit(run.clone(), started.leader.pid);

    if let Some(listener) = hook_listener {
        tokio::spawn(hooks::serve(listener, run.hooks.clone()));
    }
    let serve = tokio::spawn(server::serve(listener, run.clone()));
    let keeper = tokio::spawn(keeper::keep_daemon(run.clone(), paths.clone()));
    let run_dir = paths.run_dir(&spec.run);
    tokio::spawn(keeper::end_when_removed(run.clone(), run_dir.clone()));
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "ready");
        let _ = out.flush();
    }
    if let Some(secs) = spec.timeout_secs {
        let run = run.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
            run.cancel(EndedBy::Timeout, false);
        });
    }

    let evidence = child::finish(run.clone(), exited, &paths, &spec).await;
    let written = evidence.write(&paths.exit_evidence(&spec.run)).is_ok();
    run.exited.send_replace(Some(evidence.clone()));
    if !written && !keeper::removed(&run_dir) {
        // A full disk refused exit.json (and the daemon's database may be
        // on it too): this process is then the only keeper of how the run
        // ended, so it stays until a daemon says the end is stored or the
        // file can be written. (Not logged: supervise.log is on that disk.)
        keep_evidence(&run, &evidence, &paths.exit_evidence(&spec.run)).await;
    }
    // Give a connected daemon a bounded moment to record the evidence; a
    // daemon that is down reads exit.json when it comes back (none will
    // for a run whose folder was removed).
    if !keeper::removed(&run_dir) {
        run.wait_for_exit_ack(std::time::Duration::from_secs(10)).await;
    }
    serve.abort();
    keeper.abort();
    let _ = std::fs::remove_file(&socket);
    Ok(0)
}

/// Waits for the daemon's word that the end is stored, writing `exit.json`
/// again now and then; returns at the first of the two.
async fn keep_evidence(run: &server::Supervised, evidence: &ExitEvidence, path: &std::path::Path) {
    const RETRY: std::time::Duration = std::time::Duration::from_secs(5);
    loop {
        if run.wait_for_exit_ack(RETRY).await || evidence.write(path).is_ok() {
            return;
        }
    }
}
