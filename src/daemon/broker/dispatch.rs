//! The tool table (docs/design.md §2): every method a client can call, routed
//! by its type in one place.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use super::connection::Subscriptions;
use super::run_methods::OfRun;
use super::subscribe::Outbox;
use crate::api::method::Method;
use crate::api::{AckParams, ApiError, DaemonStatus, Done, ErrorCode};
use crate::daemon::Daemon;
use crate::engine::start::resolve_row;
use crate::store::runs;

/// A method's reply as it goes on the wire; the reply's type is the
/// method's (`M::Reply`), so a handler cannot answer another's.
fn reply<M: Method>(reply: Result<M::Reply, ApiError>) -> Result<Answer, ApiError> {
    serde_json::value::to_raw_value(&reply?).map_err(ApiError::internal)
}

/// An answer written as JSON, as it goes on the wire.
pub type Answer = Box<serde_json::value::RawValue>;

/// An answer another host gave, as it goes on the wire.
fn relayed(answer: Result<Value, ApiError>) -> Result<Answer, ApiError> {
    serde_json::value::to_raw_value(&answer?).map_err(ApiError::internal)
}

fn unknown(name: &str) -> ApiError {
    ApiError::new(ErrorCode::UnknownMethod, format!("unknown method '{name}'"))
}

/// The route: each method by its type (`api::method`), its parameters
/// decoded once, and where it is answered decided once
/// (`remote::answer_there`: the host a run, session or start lives on
/// answers it as it came; the rest is answered here, by the handler of its
/// line). `run` methods name one run: their parameters are checked
/// (`OfRun::check`), then the run resolved, before they are placed. Each
/// line's future is boxed: all of them inline would make one future too
/// large for a worker's stack.
macro_rules! routes {
    ($daemon:ident, $name:ident, $p:ident;
     $($kind:ident $m:ident |$($arg:ident),*| $body:expr,)*) => {
        match $name {
            $(name if name == $m::NAME => routes!(@$kind $daemon, $p, $m, |$($arg),*| $body),)*
            other => Err(unknown(other)),
        }
    };
    (@run $daemon:ident, $p:ident, $m:ident, |$row:ident, $params:ident| $body:expr) => {
        of_run::<$m, _, _>($daemon, $p, move |$row, $params| async move { $body }).await
    };
    (@any $daemon:ident, $p:ident, $m:ident, |$params:ident| $body:expr) => {
        any::<$m, _, _>($daemon, $p, move |$params| async move { reply::<$m>($body) }).await
    };
    (@written $daemon:ident, $p:ident, $m:ident, |$params:ident| $body:expr) => {
        any::<$m, _, _>($daemon, $p, move |$params| async move { $body }).await
    };
}

type Answering<'a> = Pin<Box<dyn Future<Output = Result<Answer, ApiError>> + Send + 'a>>;

/// A method of one run: checked, its run resolved, answered by the run's
/// host or by `handler`.
fn of_run<'a, M, F, Fut>(daemon: &'a Arc<Daemon>, raw: Value, handler: F) -> Answering<'a>
where
    M: Method,
    M::Params: OfRun,
    F: FnOnce(runs::RunRow, M::Params) -> Fut + Send + 'a,
    Fut: Future<Output = Result<M::Reply, ApiError>> + Send + 'a,
{
    Box::pin(async move {
        let params = M::params(raw.clone())?;
        params.check()?;
        let row = resolve_row(&daemon.engine, params.run()).await?;
        match crate::remote::answer_there(&daemon.here(), M::NAME, Some(&row), &raw).await {
            Some(answer) => relayed(answer),
            None => reply::<M>(handler(row, params).await),
        }
    })
}

/// Any other method: answered where it lives (a start placed on a host, a
/// remote session or transcript), or by `handler`, which writes the
/// answer (`M::Reply` as JSON: `reply`, or written as it is built).
fn any<'a, M, F, Fut>(daemon: &'a Arc<Daemon>, raw: Value, handler: F) -> Answering<'a>
where
    M: Method,
    F: FnOnce(M::Params) -> Fut + Send + 'a,
    Fut: Future<Output = Result<Answer, ApiError>> + Send + 'a,
{
    Box::pin(async move {
        match crate::remote::answer_there(&daemon.here(), M::NAME, None, &raw).await {
            Some(answer) => relayed(answer),
            None => handler(M::params(raw)?).await,
        }
    })
}

pub async fn call(
    daemon: &Arc<Daemon>,
    outbox: &Outbox,
    subs: &Subscriptions,
    name: &str,
    p: Value,
) -> Result<Answer, ApiError> {
    use super::run_methods as run;
    use crate::api::method::*;
    use crate::daemon::{mail, prompts, removal, rename, retention, routines, sessions, teams, worktrees};
    use crate::engine::{hooks, queue, start, transcripts, waits};
    let here = &daemon.here();
    routes! { daemon, name, p;
        run RunsShow |row, _p| run::show(daemon, row).await,
        run RunsSend |row, p| run::send_prompt(daemon, row, p).await,
        run RunsCancel |row, p| run::cancel(daemon, row, p).await,
        run RunsAttach |row, p| run::attach_run(daemon, outbox, subs, row, p),
        run RunsDetach |row, p| run::detach_run(daemon, outbox, subs, &row, p).await,
        run RunsResize |row, p| run::resize(daemon, outbox, row, p).await,
        run RunsAnswer |row, p| run::answer_run(daemon, row, p).await,
        run RunsRerun |row, p| run::rerun(daemon, row, p.env).await,
        run RunsRename |row, p| rename::rename(&daemon.engine, row, p.name).await,
        // A wait whose client has gone no longer counts as awaiting.
        run RunsWait |row, p| outbox.unless_gone(waits::wait(&daemon.engine, &row.id, p.takes_result)).await,
        run RunsWaitChildren |row, _p| outbox.unless_gone(waits::children(&daemon.engine, &row)).await,
        run RunsIndex |row, _p| run::index(daemon, row),
        run RunsHistory |row, p| run::history(daemon, row, p).await,
        run RunsSizes |row, _p| run::sizes(daemon, row),
        run RunsLineage |row, _p| sessions::tree(&daemon.engine, &row.id).await,
        run RunsExplain |row, _p| queue::explain(&daemon.engine, &row),
        run RunsChanges |row, _p| worktrees::changes(&daemon.engine, row).await,
        run RunsMerge |row, p| worktrees::merge(&daemon.engine, row, p.squash).await,
        run WorktreeRm |row, p| worktrees::remove(&daemon.engine, row, p.force).await,
        run PromptsList |row, _p| prompts::list(&daemon.engine, &row).await,
        run PromptsEdit |row, p| prompts::edit(&daemon.engine, row, p).await,
        run PromptsDrop |row, p| prompts::drop(&daemon.engine, row, p).await,
        run PromptsSend |row, p| prompts::send(&daemon.engine, row, p).await,
        any RunsStart |p| start::start(&daemon.engine, p).await,
        // Each run written once, as the page is fitted to its frame.
        written RunsList |p| super::listing::list(daemon, outbox, p).await,
        any RunsAck |p| ack(subs, p),
        any RunsRm |p| removal::remove(&daemon.reach(), p).await,
        any SessionsRm |p| removal::remove_session(&daemon.reach(), p).await,
        any RetentionPlan |_p| retention::report(daemon).await,
        any RoutinesList |_p| routines::list(daemon).await,
        any RoutinesRun |p| routines::run_now(daemon, &p.name).await,
        any RoutinesPause |p| routines::pause(daemon, &p.name, true).await,
        any RoutinesResume |p| routines::pause(daemon, &p.name, false).await,
        any MailSend |p| mail::send(&daemon.reach(), mail::vouched(&daemon.engine, p)).await,
        any MailList |p| mail::list(&daemon.reach(), p).await,
        any MailRead |p| mail::read(&daemon.reach(), &p.id).await,
        any MailOutbox |p| crate::daemon::outbox::take(&daemon.reach(), p).await,
        any MailTaken |p| crate::daemon::outbox::taken(&daemon.reach(), p).await,
        any MailWait |p| outbox.unless_gone(mail::wait(&daemon.reach(), p)).await,
        any TeamsStart |p| teams::start(&daemon.reach(), p).await,
        any TeamsList |_p| teams::list(&daemon.reach()).await,
        any TeamsShow |p| teams::show(&daemon.reach(), p).await,
        any TeamsCancel |p| teams::cancel(&daemon.reach(), p).await,
        any SessionsList |p| {
            let all = p.all;
            crate::remote::sessions_list(here, p, sessions::list(&daemon.engine, all)).await
        },
        any SessionsResume |p| sessions::resume(&daemon.engine, p, false).await,
        any SessionsFork |p| sessions::resume(&daemon.engine, p, true).await,
        any SessionsShow |p| sessions::show(&daemon.engine, &p.session).await,
        any SubagentsList |p| sessions::subagents(&daemon.engine, p).await,
        any TranscriptRead |p| transcripts::read(&daemon.engine, p).await,
        any TranscriptsSearch |p| {
            let local = transcripts::search(&daemon.engine, p.clone());
            crate::remote::search(here, p, local).await
        },
        any HooksReport |p| hooks::report(&daemon.engine, p).await,
        any DaemonStatus |_p| status(daemon).await,
        any DaemonStop |_p| stop(daemon),
        any HostsAdd |p| crate::remote::hosts::add(here, p).await,
        any HostsList |_p| crate::remote::hosts::list(here).await,
        any HostsRm |p| crate::remote::hosts::remove(here, &p.name).await,
        any HostsCheck |p| crate::remote::hosts::check(here, &p.name).await,
        any HostsTrust |p| crate::remote::hosts::trust(here, p).await,
        any HostsInstall |p| crate::remote::install::install(here, &p.name).await,
    }
}

/// `daemon.stop`: the daemon ends once the answer has gone.
fn stop(daemon: &Arc<Daemon>) -> Result<Done, ApiError> {
    let daemon = daemon.clone();
    tokio::spawn(async move {
        // Let the answer reach the client before the process ends.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        daemon.shutdown.notify_one();
    });
    Ok(Done)
}

/// `runs.ack`: a client has shown a subscription's output up to `offset`.
fn ack(subs: &Subscriptions, ack: AckParams) -> Result<Done, ApiError> {
    let AckParams {
        run,
        offset,
        screen,
        sub,
    } = ack;
    // Acks name full ids (they come from output frames): no lookup.
    if let Some(sub) = subs.lock().get(&subscription_key(&run, screen.then_some(sub))) {
        sub.acked.send_if_modified(|a| {
            let newer = offset > *a;
            if newer {
                *a = offset;
            }
            newer
        });
    }
    Ok(Done)
}

/// `daemon.status`: who it is, what it holds, which builds supervise.
async fn status(daemon: &Arc<Daemon>) -> Result<DaemonStatus, ApiError> {
    let live: Vec<String> = daemon.engine.runs.lock().keys().cloned().collect();
    let live_runs = live.len();
    Ok(DaemonStatus {
        pid: std::process::id(),
        version: env!("CARGO_PKG_VERSION").into(),
        home: daemon.engine.paths.home.display().to_string(),
        live_runs,
        clients: daemon.clients.load(std::sync::atomic::Ordering::Relaxed),
        exe: crate::daemon::own_exe().to_string(),
        supervisors: crate::daemon::upgrade::supervisor_builds(daemon, live).await,
        screens: true,
        screen_subs: true,
        sandbox: true,
        awaited: daemon.engine.awaited.lock().len(),
        unknown: daemon.engine.unknown.counts(),
        web: daemon.web.url.lock().clone(),
    })
}

/// A live run's record with what its status rests on and how old that is
/// (`rules` read once per answer: a list holds many runs),
/// and its prompts still waiting (`waiting`: as stored). `live`: the run
/// as the engine holds it while it lives.
pub(in crate::daemon) fn with_evidence(
    engine: &crate::engine::Engine,
    live: Option<&crate::engine::live::LiveRun>,
    rules: &crate::harness::status::Rules,
    mut record: crate::api::RunRecord,
    waiting: Option<Vec<crate::store::prompts::Waiting>>,
) -> crate::api::RunRecord {
    if let Some(live) = live {
        crate::engine::queue::status_evidence(live, rules, &mut record);
        record.waiting = crate::engine::queue::waiting(live, rules, waiting.unwrap_or_default());
    } else if record.state == crate::api::RunState::Pending
        && let Some(behind) = crate::engine::queue::queued_behind(engine, &record.id)
    {
        record.evidence = Some(format!("queued behind run {behind}: starts once it ends"));
    }
    record
}

/// The most history rows one `runs.history` answer renders: the TUI's
/// default scrollback (`engine.history_lines`) and then some.
pub(in crate::daemon) const HISTORY_MAX_LINES: usize = 50_000;

/// A connection's subscription of `run`: its bytes, or screen `sub`. A
/// connection may hold both, and several screens (a remote host's link
/// mirrors a run's log and shows its screen in each pane here).
pub(in crate::daemon) fn subscription_key(run: &str, screen: Option<u64>) -> String {
    match screen {
        None => run.to_string(),
        Some(0) => format!("{run}/screen"),
        Some(sub) => format!("{run}/screen/{sub}"),
    }
}
