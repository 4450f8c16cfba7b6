//! `runs.list` answers that fit their frame by construction: a page holds
//! as many runs as fit in `api::bounds::LIST_BYTES` of JSON. Each run is
//! written once, and the answer is put together from the runs as written.
//! The page after one answered is built before it is asked for (`Ahead`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;

use super::dispatch::Answer;
use super::subscribe::Outbox;
use crate::api::bounds::LIST_BYTES;
use crate::api::{ActivityStatus, ApiError, ListParams, ListedRun, RunRecord};
use crate::daemon::Daemon;
use crate::store::run_calls::PageOf;

/// `runs.list` (a [`crate::api::RunsListed`], written here): a page of runs with
/// their status's evidence, waiting prompts and usage; without `paged`,
/// every live run and the newest ended ones that fit one answer.
pub async fn list(daemon: &Arc<Daemon>, outbox: &Outbox, list: ListParams) -> Result<Answer, ApiError> {
    let only = crate::store::runs::Only {
        states: list.states()?,
        host: list.host.clone(),
    };
    if let Some(host) = &only.host {
        known_host(daemon, host).await?;
    }
    let ListParams {
        all,
        limit,
        before,
        paged,
        runs,
        brief,
        state,
        host: _,
    } = list;
    // A state named other than `live` may be an ended one.
    let all = all || state.is_some_and(|s| s != "live");
    if runs.len() > ListParams::MAX_LIMIT {
        return Err(ApiError::bad_request(format!(
            "runs.list takes at most {} runs by id, not {}",
            ListParams::MAX_LIMIT,
            runs.len()
        )));
    }
    let limit = limit
        .unwrap_or(ListParams::DEFAULT_LIMIT)
        .clamp(1, ListParams::MAX_LIMIT);
    let (by_id, paged) = (!runs.is_empty(), paged && runs.is_empty());
    let which = match (by_id, paged) {
        (true, _) => PageOf::These(runs),
        (false, true) => PageOf::Older {
            all,
            limit,
            before,
            only: only.clone(),
        },
        (false, false) => PageOf::Newest {
            all,
            limit,
            before,
            only: only.clone(),
        },
    };
    let shape = Shape { paged, brief };
    let built = match Ahead::take(outbox, &which, shape) {
        Some(ahead) => ahead.await.map_err(ApiError::internal)??,
        None => page(daemon.clone(), which, shape).await?,
    };
    if let Some(before) = built.next.clone() {
        Ahead::build(
            daemon,
            outbox,
            PageOf::Older {
                all,
                limit,
                before: Some(before),
                only,
            },
            shape,
        );
    }
    Ok(built.answer)
}

/// A host a list is asked for: `local`, one `agents hosts` knows, or one
/// that runs were once on (a host removed since); else a typo, said so.
async fn known_host(daemon: &Daemon, host: &str) -> Result<(), ApiError> {
    let store = &daemon.engine.store;
    let named = host == "local" || store.hosts().get(host).await.map_err(ApiError::internal)?.is_some();
    if named || store.runs().any_on_host(host).await.map_err(ApiError::internal)? {
        return Ok(());
    }
    Err(ApiError::new(
        crate::api::ErrorCode::UnknownHost,
        format!(
            "no host is named '{}' (agents hosts ls)",
            crate::text::bounded(host, 64)
        ),
    ))
}

/// A page as written, and the `before` of the page after it, if any.
pub struct Built {
    answer: Answer,
    next: Option<String>,
}

/// How a page is answered: as a [`crate::api::ListPage`] or a bare list;
/// of whole records or brief ones.
#[derive(Clone, Copy, PartialEq)]
struct Shape {
    paged: bool,
    brief: bool,
}

async fn page(daemon: Arc<Daemon>, which: PageOf, Shape { paged, brief }: Shape) -> Result<Built, ApiError> {
    let limit = match &which {
        PageOf::Older { limit, .. } | PageOf::Newest { limit, .. } => Some(*limit),
        PageOf::These(_) => None,
    };
    let page = daemon
        .engine
        .store
        .runs()
        .page(which)
        .await
        .map_err(ApiError::internal)?;
    let fetched = page.rows.len();
    let listed = listed_runs(&daemon, page, brief);
    let kept = fit(listed, !paged, brief).map_err(ApiError::internal)?;
    if !paged {
        let answer = serde_json::value::to_raw_value(&kept.runs).map_err(ApiError::internal)?;
        return Ok(Built { answer, next: None });
    }
    // More may follow when the page was full, or cut to fit.
    let next = (kept.runs.len() < fetched || Some(fetched) == limit)
        .then_some(kept.first)
        .flatten();
    let answer = crate::api::ListPage {
        runs: kept.runs,
        next: next.clone(),
    };
    let answer = serde_json::value::to_raw_value(&answer).map_err(ApiError::internal)?;
    Ok(Built { answer, next })
}

/// The page after one just answered, built while its client reads that
/// one: a client reading every page asks for it as soon as it has read
/// where it starts, and finds it ready. A few per connection (the TUI
/// reads two lists at once on one); one asked for later than
/// `AHEAD_KEPT` is built anew, and other calls leave them be.
pub struct Ahead {
    which: PageOf,
    shape: Shape,
    since: Instant,
    page: tokio::task::JoinHandle<Result<Built, ApiError>>,
}

/// A page built ahead is a snapshot of when the page before it was: it
/// answers only an ask that follows at once, as a client's next page does.
const AHEAD_KEPT: Duration = Duration::from_secs(1);

/// Pages built ahead one connection holds at most (each up to a frame).
const AHEAD_MAX: usize = 4;

/// A connection's pages built ahead.
pub type Aheads = parking_lot::Mutex<Vec<Ahead>>;

impl Ahead {
    fn build(daemon: &Arc<Daemon>, outbox: &Outbox, which: PageOf, shape: Shape) {
        let page = tokio::spawn(page(daemon.clone(), which.clone(), shape));
        let ahead = Ahead {
            which,
            shape,
            since: Instant::now(),
            page,
        };
        let mut held = outbox.ahead.lock();
        Self::let_go(&mut held, |old| old.since.elapsed() >= AHEAD_KEPT);
        if held.len() == AHEAD_MAX {
            held.remove(0).page.abort();
        }
        held.push(ahead);
    }

    /// Its connection has closed: no page will be asked for.
    pub fn forget(outbox: &Outbox) {
        Self::let_go(&mut outbox.ahead.lock(), |_| true);
    }

    /// The page built ahead for this ask, if one is and is fresh.
    fn take(outbox: &Outbox, which: &PageOf, shape: Shape) -> Option<tokio::task::JoinHandle<Result<Built, ApiError>>> {
        let mut held = outbox.ahead.lock();
        Self::let_go(&mut held, |old| old.since.elapsed() >= AHEAD_KEPT);
        let at = held.iter().position(|a| a.which == *which && a.shape == shape)?;
        Some(held.remove(at).page)
    }

    /// Drops the pages `stale` picks, stopping their building.
    fn let_go(held: &mut Vec<Ahead>, stale: impl Fn(&Ahead) -> bool) {
        held.retain(|a| {
            let keep = !stale(a);
            if !keep {
                a.page.abort();
            }
            keep
        });
    }
}

/// A page's rows as listed: each with its status's evidence, waiting
/// prompts and usage (evidence and prompts left out when `brief`: a
/// brief run does not carry them), and shown working while its child runs
/// work.
fn listed_runs(daemon: &Daemon, page: crate::store::run_calls::Page, brief: bool) -> Vec<ListedRun> {
    let crate::store::run_calls::Page {
        rows,
        sources,
        mut waiting,
        working_children,
    } = page;
    let prices = crate::transcript::price::PriceTable::new(daemon.engine.config().prices);
    let rules = crate::engine::queue::rules(&daemon.engine);
    // The page's live runs, under one lock.
    let lives: Vec<Option<Arc<crate::engine::live::LiveRun>>> = {
        let live = daemon.engine.runs.lock();
        rows.iter().map(|r| live.get(&r.id).cloned()).collect()
    };
    rows.into_iter()
        .zip(lives)
        .map(|(r, live)| (daemon.engine.held_ends.apply(r), live))
        .map(|(r, live)| {
            let usage = sources
                .get(&r.id)
                .and_then(|s| crate::transcript::usage::run_usage(s, &prices))
                .map(|u| (&u).into());
            let working = working_children.get(&r.id).copied().unwrap_or(0);
            let waits = waiting.remove(&r.id);
            let live = live.as_deref().filter(|_| !brief);
            let mut run = super::dispatch::with_evidence(&daemon.engine, live, &rules, r.into_record(), waits);
            show_children_working(&mut run, working);
            ListedRun { run, usage }
        })
        .collect()
}

/// The runs of a page that fit, written: oldest first, and the id of the
/// oldest (a next page's `before`).
pub struct Fitted {
    pub runs: Vec<Box<RawValue>>,
    pub first: Option<String>,
}

/// The runs of `listed` (oldest first) that fit in `LIST_BYTES`, oldest
/// first, written whole or `brief`: the newest are kept, and with
/// `live_first` every live run before any ended one. At least one run,
/// whatever its size (the stored fields are bounded, so one run is far
/// below a frame).
pub fn fit(listed: Vec<ListedRun>, live_first: bool, brief: bool) -> serde_json::Result<Fitted> {
    let write = |r: ListedRun| -> serde_json::Result<Box<RawValue>> {
        if brief {
            serde_json::value::to_raw_value(&crate::api::BriefRun::from(r))
        } else {
            serde_json::value::to_raw_value(&r)
        }
    };
    let mut order: Vec<(bool, String, Box<RawValue>)> = listed
        .into_iter()
        .map(|r| Ok((live_first && r.run.state.is_live(), r.run.id.clone(), write(r)?)))
        .collect::<serde_json::Result<_>>()?;
    // Newest first, live ones ahead when asked.
    order.sort_by(|(live_a, a, _), (live_b, b, _)| live_b.cmp(live_a).then_with(|| b.cmp(a)));
    let mut bytes = 0;
    let mut kept: Vec<(String, Box<RawValue>)> = Vec::new();
    for (_, id, run) in order {
        let size = run.get().len() + 1;
        if !kept.is_empty() && bytes + size > LIST_BYTES {
            break;
        }
        bytes += size;
        kept.push((id, run));
    }
    kept.sort_by(|(a, _), (b, _)| a.cmp(b));
    Ok(Fitted {
        first: kept.first().map(|(id, _)| id.clone()),
        runs: kept.into_iter().map(|(_, run)| run).collect(),
    })
}

/// A live run at rest (idle) whose child runs still work is shown working,
/// saying how many: its agent waits on them (herdr#507). Its own status,
/// which decides when prompts go in, is unchanged.
pub fn show_children_working(run: &mut RunRecord, working: usize) {
    if working == 0 || !run.state.is_live() || run.status != ActivityStatus::Idle {
        return;
    }
    run.status = ActivityStatus::Working;
    run.evidence = Some(match working {
        1 => "1 child run working".into(),
        n => format!("{n} child runs working"),
    });
    // Its own evidence's time and its own status's start are not these.
    run.evidence_at = None;
    run.status_since = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::RunRecord;

    fn run(id: usize, state: &str, arg: usize) -> ListedRun {
        let record: RunRecord = serde_json::from_value(serde_json::json!({
            "id": format!("{id:04}"), "name": "r", "harness": "cmd", "host": "local", "cwd": "/",
            "command": ["x".repeat(arg)], "state": state, "status": "idle", "parent_id": null,
            "root_id": "r", "detached": false, "session_id": null, "pid": null, "exit_code": null,
            "signal": null, "reason": null, "created_at": "", "started_at": null, "ended_at": null,
            "rows": 40, "cols": 120, "timeout_secs": null, "worktree": null, "output_bytes": 0
        }))
        .expect("a run record");
        ListedRun {
            run: record,
            usage: None,
        }
    }

    #[test]
    fn an_idle_parent_of_working_children_is_shown_working_and_says_why() {
        let mut parent = run(1, "running", 0).run;
        parent.status = ActivityStatus::Idle;
        let mut shown = parent.clone();
        show_children_working(&mut shown, 2);
        assert_eq!(shown.status, ActivityStatus::Working);
        assert_eq!(shown.evidence.as_deref(), Some("2 child runs working"));
        let mut resting = parent.clone();
        show_children_working(&mut resting, 0);
        assert_eq!(resting.status, ActivityStatus::Idle);
        let mut ended = run(4, "succeeded", 0).run;
        show_children_working(&mut ended, 1);
        assert_eq!(ended.status, ActivityStatus::Idle, "an ended run is not shown working");
    }

    #[test]
    fn a_page_keeps_the_newest_runs_that_fit_and_live_ones_first_when_asked() {
        // 200 runs of 12 KiB each: 2.4 MB, three frames' worth.
        let listed: Vec<ListedRun> = (0..200)
            .map(|i| run(i, if i == 3 { "running" } else { "succeeded" }, 12 * 1024))
            .collect();
        let kept = fit(listed.clone(), false, false).unwrap();
        let bytes: usize = kept.runs.iter().map(|r| r.get().len()).sum();
        let ids = ids(&kept);
        assert!(
            bytes <= LIST_BYTES && ids.len() > 50,
            "{} runs, {bytes} bytes",
            ids.len()
        );
        assert_eq!(ids.last().unwrap(), "0199", "the newest");
        assert_eq!(kept.first.as_ref(), ids.first(), "the oldest kept names the next page");
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "oldest first");
        assert!(!ids.iter().any(|id| id == "0003"));
        let live_first = ids_of(fit(listed, true, false));
        assert!(live_first.iter().any(|id| id == "0003"), "the old live run is kept");
        // One run larger than the budget still comes.
        assert_eq!(
            ids_of(fit(vec![run(1, "succeeded", LIST_BYTES)], false, false)).len(),
            1
        );
    }

    /// The ids of the runs as written, read back as a client reads them.
    fn ids(fitted: &Fitted) -> Vec<String> {
        fitted
            .runs
            .iter()
            .map(|raw| serde_json::from_str::<ListedRun>(raw.get()).unwrap().run.id)
            .collect()
    }

    fn ids_of(fitted: serde_json::Result<Fitted>) -> Vec<String> {
        ids(&fitted.unwrap())
    }
}
