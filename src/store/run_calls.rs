//! `store.runs()`: the run records' reads and writes, each one call on the
//! owner thread; a call that writes several rows writes them in one
//! transaction where the SQL functions it calls say so.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension};
use serde_json::{Value, json};

use super::runs::{self, Ending, Resolved, RunRow, Spawned};
use super::{Store, StoreError, attempts, harness, lineage, prompts, tasks, usage};
use crate::api::{AttemptRecord, Event, SubagentRecord};

/// `store.runs()`: single reads and writes of run records and their
/// events, each on the owner thread.
pub struct Runs<'a>(&'a Store);

impl Store {
    pub fn runs(&self) -> Runs<'_> {
        Runs(self)
    }
}

impl Runs<'_> {
    pub async fn get(&self, id: &str) -> Result<Option<RunRow>, StoreError> {
        let id = id.to_string();
        self.0.call(move |c| runs::get_run(c, &id)).await
    }

    /// The run a reference names (see [`runs::resolve`]), when exactly one does.
    pub async fn find(&self, reference: &str) -> Result<Option<RunRow>, StoreError> {
        let reference = reference.to_string();
        self.0
            .call(move |c| match runs::resolve(c, &reference)? {
                Resolved::One(id) => runs::get_run(c, &id),
                _ => Ok(None),
            })
            .await
    }

    /// The runs `ids` name, in their order (`None` for one not stored),
    /// read together.
    pub async fn get_many(&self, ids: Vec<String>) -> Result<Vec<Option<RunRow>>, StoreError> {
        self.0
            .call(move |c| ids.iter().map(|id| runs::get_run(c, id)).collect::<Result<Vec<_>, _>>())
            .await
    }

    pub async fn insert(&self, row: RunRow) -> Result<(), StoreError> {
        self.0.call(move |c| runs::insert_run(c, &row)).await
    }

    /// Ends the run (see [`runs::finish`]); answers whether this call ended it.
    pub async fn finish(&self, id: &str, ending: Ending) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.0.call(move |c| runs::finish(c, &id, &ending)).await
    }

    pub async fn children(&self, parent: &str) -> Result<Vec<RunRow>, StoreError> {
        let parent = parent.to_string();
        self.0.call(move |c| runs::children(c, &parent)).await
    }

    pub async fn events(&self, id: &str) -> Result<Vec<Event>, StoreError> {
        let id = id.to_string();
        self.0.call(move |c| runs::events(c, &id)).await
    }

    /// Appends one event; answers its `seq`.
    pub async fn append_event(&self, id: &str, kind: &'static str, data: Value) -> Result<i64, StoreError> {
        let id = id.to_string();
        self.0.call(move |c| runs::append_event(c, &id, kind, &data)).await
    }

    pub async fn set_size(&self, id: &str, rows: u16, cols: u16) -> Result<(), StoreError> {
        let id = id.to_string();
        self.0.call(move |c| runs::set_size(c, &id, rows, cols)).await
    }

    /// The run and its children, read together.
    pub async fn with_children(&self, id: &str) -> Result<(Option<RunRow>, Vec<RunRow>), StoreError> {
        let id = id.to_string();
        self.0
            .call(move |c| Ok((runs::get_run(c, &id)?, runs::children(c, &id)?)))
            .await
    }

    /// A reference resolved to its row: `Err` when it names none or
    /// several (see [`runs::resolve`]).
    pub async fn resolve(&self, reference: &str) -> Result<Result<Option<RunRow>, Resolved>, StoreError> {
        let reference = reference.to_string();
        self.0
            .call(move |c| {
                Ok(match runs::resolve(c, &reference)? {
                    Resolved::One(id) => Ok(runs::get_run(c, &id)?),
                    other => Err(other),
                })
            })
            .await
    }

    /// Every live run (`all`: every run), see [`runs::list_runs`].
    pub async fn list(&self, all: bool) -> Result<Vec<RunRow>, StoreError> {
        self.0.call(move |c| runs::list_runs(c, all)).await
    }

    /// A page of `runs.list`: the rows (newest first, or older than
    /// `before` when `paged`; or the runs of `these` ids), with what
    /// [`Page`] holds of them, read together.
    pub async fn page(&self, which: PageOf) -> Result<Page, StoreError> {
        self.0
            .call(move |c| {
                let rows = match which {
                    PageOf::Older {
                        all,
                        limit,
                        before,
                        only,
                    } => runs::list_older(c, all, limit, before.as_deref(), &only)?,
                    PageOf::Newest {
                        all,
                        limit,
                        before,
                        only,
                    } => runs::list_page(c, all, limit, before.as_deref(), &only)?,
                    PageOf::These(ids) => runs::these_and_parents(c, &ids)?,
                };
                let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
                let live: Vec<&str> = rows
                    .iter()
                    .filter(|r| r.state.is_live())
                    .map(|r| r.id.as_str())
                    .collect();
                Ok(Page {
                    waiting: prompts::waiting(c, &live)?,
                    sources: usage::runs_sources(c, &ids)?,
                    working_children: runs::working_children(c, &ids)?,
                    rows,
                })
            })
            .await
    }

    /// Everything `runs.show` tells of a run beside its row, read together.
    pub async fn detail(&self, id: &str) -> Result<Detail, StoreError> {
        let id = id.to_string();
        self.0
            .call(move |c| {
                Ok(Detail {
                    events: runs::events(c, &id)?,
                    harness: harness::harness_info(c, &id)?,
                    subagents: harness::subagents(c, &id)?,
                    edge: lineage::edge_of(c, &id)?,
                    attempts: attempts::list(c, &id)?,
                    sources: usage::run_sources(c, &id)?,
                    waiting: prompts::waiting(c, &[id.as_str()])?,
                    undelivered: prompts::undelivered(c, &id)?,
                    children: runs::children(c, &id)?,
                })
            })
            .await
    }

    /// The data of the run's first event of `kind`.
    pub async fn first_event(&self, id: &str, kind: &'static str) -> Result<Option<Value>, StoreError> {
        let id = id.to_string();
        self.0.call(move |c| runs::first_event(c, &id, kind)).await
    }

    /// Whether any run, live or ended, is or was on `host`.
    pub async fn any_on_host(&self, host: &str) -> Result<bool, StoreError> {
        let host = host.to_string();
        self.0
            .call(move |c| {
                let found = c
                    .query_row("SELECT 1 FROM runs WHERE host = ?1 LIMIT 1", [&host], |_| Ok(()))
                    .optional()?;
                Ok(found.is_some())
            })
            .await
    }

    /// When the run's activity status last changed, as stored.
    pub async fn status_since(&self, id: &str) -> Result<Option<i64>, StoreError> {
        let id = id.to_string();
        self.0.call(move |c| runs::status_since(c, &id)).await
    }

    /// The supervisor pids of those of `ids` that have one.
    pub async fn supervisor_pids(&self, ids: Vec<String>) -> Result<Vec<i64>, StoreError> {
        self.0
            .call(move |c| {
                let mut pids = Vec::new();
                for id in &ids {
                    if let Some(pid) = runs::get_run(c, id)?.and_then(|r| r.supervisor_pid) {
                        pids.push(pid);
                    }
                }
                Ok(pids)
            })
            .await
    }

    /// See [`runs::mark_starting`].
    pub async fn mark_starting(&self, id: &str, supervisor_pid: i64, supervisor_start: i64) -> Result<(), StoreError> {
        let id = id.to_string();
        self.0
            .call(move |c| runs::mark_starting(c, &id, supervisor_pid, supervisor_start))
            .await
    }

    /// See [`runs::mark_running`].
    pub async fn mark_running(&self, id: &str, spawned: Spawned) -> Result<(), StoreError> {
        let id = id.to_string();
        self.0.call(move |c| runs::mark_running(c, &id, &spawned)).await
    }

    /// Writes the run's end and what it tells (see [`tasks::end`]), in one
    /// transaction; answers who was told.
    pub async fn end(
        &self,
        id: &str,
        ending: Ending,
        awaited: bool,
        read_whole: bool,
    ) -> Result<Vec<String>, StoreError> {
        let id = id.to_string();
        self.0
            .call(move |c| tasks::end(c, &id, &ending, awaited, read_whole))
            .await
    }

    /// A mirrored child's end told to its parent here (see
    /// [`tasks::mirror_ended`]); answers who was told.
    pub async fn mirror_ended(&self, child: &str, awaited: bool) -> Result<Vec<String>, StoreError> {
        let child = child.to_string();
        self.0.call(move |c| tasks::mirror_ended(c, &child, awaited)).await
    }

    /// Stores the runs' output lengths that `pending` holds when the owner
    /// thread gets to them (taken there, in order with its other jobs), in
    /// one transaction.
    pub async fn store_output_bytes(&self, pending: Arc<Mutex<HashMap<String, u64>>>) -> Result<(), StoreError> {
        self.0
            .call(move |c| {
                let batch = std::mem::take(&mut *pending.lock());
                let tx = c.transaction()?;
                for (id, offset) in batch {
                    runs::set_output_bytes(&tx, &id, offset)?;
                }
                tx.commit()?;
                Ok(())
            })
            .await
    }

    /// The run a start with this launch id created.
    pub async fn by_launch_id(&self, launch_id: &str) -> Result<Option<RunRow>, StoreError> {
        let launch_id = launch_id.to_string();
        self.0.call(move |c| runs::run_by_launch_id(c, &launch_id)).await
    }

    /// See [`runs::answer_outcome`].
    pub async fn answer_outcome(&self, run: &str, answer_id: &str) -> Result<Option<Event>, StoreError> {
        let (run, answer_id) = (run.to_string(), answer_id.to_string());
        self.0.call(move |c| runs::answer_outcome(c, &run, &answer_id)).await
    }

    /// Stores a new run and what its creation says (see [`Creation`]).
    pub async fn create(&self, row: RunRow, creation: Creation) -> Result<(), StoreError> {
        self.0.call(move |c| create(c, &row, creation)).await
    }
}

/// Which runs a page of `runs.list` (see [`Runs::page`]) holds.
#[derive(Clone, PartialEq)]
pub enum PageOf {
    /// At most `limit` older than `before` (live ones only unless `all`)
    /// of those `only` keeps.
    Older {
        all: bool,
        limit: usize,
        before: Option<String>,
        only: runs::Only,
    },
    /// Every live run and the newest `limit` (any state with `all`) of
    /// those `only` keeps; or, given `before`, as `Older`.
    Newest {
        all: bool,
        limit: usize,
        before: Option<String>,
        only: runs::Only,
    },
    /// These, by id, and their parents (whose children's work shows on
    /// them).
    These(Vec<String>),
}

/// A page of `runs.list`: the rows, oldest first; the transcripts'
/// tokens of each; the prompts waiting for the live ones; and how many
/// live child runs work for each run that has such.
pub struct Page {
    pub rows: Vec<RunRow>,
    pub sources: HashMap<String, Vec<usage::SourceTokens>>,
    pub waiting: HashMap<String, Vec<prompts::Waiting>>,
    pub working_children: HashMap<String, usize>,
}

/// What `runs.show` tells of a run beside its row.
pub struct Detail {
    pub events: Vec<Event>,
    pub harness: harness::HarnessInfo,
    pub subagents: Vec<SubagentRecord>,
    pub edge: Option<lineage::SessionEdge>,
    pub attempts: Vec<AttemptRecord>,
    pub sources: Vec<usage::SourceTokens>,
    pub waiting: HashMap<String, Vec<prompts::Waiting>>,
    pub undelivered: Vec<prompts::Undelivered>,
    pub children: Vec<RunRow>,
}

/// What a new run's creation says beside its row: its `RUN_CREATED`
/// event's data, a worktree run's origin, whether it was
/// placed here by another daemon, and its launch.
pub struct Creation {
    pub version: Option<String>,
    pub profile: Option<String>,
    pub pass_env: Vec<String>,
    pub harness_env: Vec<String>,
    /// The session known at launch, and its transcript's path.
    pub session: Option<(String, Option<String>)>,
    /// A worktree run's origin: its event's kind and data.
    pub origin: Option<(&'static str, Value)>,
    pub placed: bool,
    pub name_source: &'static str,
}

fn create(c: &Connection, row: &RunRow, creation: Creation) -> Result<(), StoreError> {
    let Creation {
        version,
        profile,
        pass_env,
        harness_env,
        session,
        origin,
        placed,
        name_source,
    } = creation;
    runs::insert_run(c, row)?;
    let data = json!({
        "state": "pending",
        "harness": row.harness,
        "name": row.name,
        "version": version,
        "profile": profile,
        "pass_env": pass_env,
        "harness_env": harness_env,
    });
    runs::append_event(c, &row.id, "RUN_CREATED", &data)?;
    if let Some((kind, data)) = &origin {
        runs::append_event(c, &row.id, kind, data)?;
    }
    if placed {
        runs::append_event(c, &row.id, super::outbox::PLACED_EVENT, &json!({}))?;
    }
    harness::record_launch(
        c,
        &row.id,
        &harness::Launched {
            family: &row.harness,
            version: version.as_deref(),
            profile: profile.as_deref(),
            name_source,
            session: session
                .as_ref()
                .map(|(id, transcript)| (id.as_str(), transcript.as_deref())),
        },
    )
}
