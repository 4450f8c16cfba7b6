//! The questions asked of every host (docs/design.md §7, §8): a remote run's
//! session and transcript live on its host, so `sessions.list` and
//! `transcripts.search` answer with this daemon's rows and those of each
//! stored host, every row saying its host. The hosts are asked in
//! parallel, each given `HOST_BUDGET`: a host that is down, stalled or slow
//! to connect is named in the answer (`partial`, `hosts_unreachable`),
//! never a failure of the whole, and never holds the answer up longer than
//! that. A host is asked for its own rows only (`local_only`), so hosts
//! that list each other never ask in circles.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::Here;
use crate::api::method::Method;
use crate::api::{
    ApiError, HostUnreachable, SearchHit, SearchParams, SearchResults, SessionList, SessionRecord, SessionsListParams,
    method,
};

/// How long a listing waits for each host. An up link answers in one round
/// trip plus a query there (~10 ms on loopback, a few hundred over a slow
/// WAN); opening a link (SSH, probe, serve) takes ~0.5 s on loopback. Two
/// seconds covers both with room, and is as long as a person waits for a
/// list without wondering. A host that misses it is still asked to the
/// end in the background, so a link it was opening is up next time.
pub const HOST_BUDGET: Duration = Duration::from_secs(2);

/// As many sessions as the local list gives (`daemon::sessions::list`).
const MAX_SESSIONS: usize = 1000;

/// The hosts being asked, each on a task of its own.
struct Asking {
    hosts: Vec<(String, JoinHandle<Result<Value, ApiError>>)>,
    deadline: Instant,
}

/// Starts asking every stored host method `M`; collect the answers with
/// `Asking::answers`. They stay as they came: a host of an older build
/// answers in an older shape (`rows`).
async fn ask_every_host<M: Method>(daemon: &Here, params: M::Params) -> Asking {
    let name = M::NAME;
    let params = serde_json::to_value(params).unwrap_or(Value::Null);
    let deadline = Instant::now() + HOST_BUDGET;
    let hosts = daemon.store().hosts().list().await.unwrap_or_else(|e| {
        tracing::warn!("listing hosts to ask {name}: {e}");
        Vec::new()
    });
    let hosts = hosts
        .into_iter()
        .map(|host| {
            let link = daemon.hosts().for_host(&host);
            let params = params.clone();
            // Its own task: past the budget it goes on rather than being
            // dropped mid-connection (which would leave the link's state
            // saying `connecting`).
            let task = tokio::spawn(async move { link.call(name, params).await });
            (host.name, task)
        })
        .collect();
    Asking { hosts, deadline }
}

impl Asking {
    /// Each host's answer, or why it has none (one line naming the host).
    async fn answers(self) -> Vec<(String, Result<Value, String>)> {
        let mut answers = Vec::with_capacity(self.hosts.len());
        for (host, task) in self.hosts {
            let answer = match tokio::time::timeout_at(self.deadline, task).await {
                Ok(Ok(Ok(value))) => Ok(value),
                Ok(Ok(Err(e))) => Err(naming(&host, &e.message)),
                Ok(Err(e)) => Err(format!("host {host}: asking it failed ({e})")),
                Err(_) => Err(format!("host {host} did not answer within {} s", HOST_BUDGET.as_secs())),
            };
            answers.push((host, answer));
        }
        answers
    }
}

/// One line that names the host (a remote stderr may hold several).
fn naming(host: &str, message: &str) -> String {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = crate::text::bounded(&line, 300);
    if line.contains(&format!("host {host}")) || line.starts_with(&format!("{host}:")) {
        line
    } else {
        format!("host {host}: {line}")
    }
}

/// A host's rows: the list object's `key`, or a bare array (the answer of
/// an agents from before lists said what was missing).
pub fn rows<T: DeserializeOwned>(value: Value, key: &str) -> Result<Vec<T>, String> {
    let list = match value {
        Value::Object(mut object) => object.remove(key).unwrap_or(Value::Null),
        other => other,
    };
    serde_json::from_value(list).map_err(|e| format!("an unexpected answer ({e})"))
}

/// `sessions.list`: `local` (this daemon's sessions) and every host's,
/// newest first.
pub async fn sessions_list(
    daemon: &Here,
    p: SessionsListParams,
    local: impl Future<Output = Result<Vec<SessionRecord>, ApiError>>,
) -> Result<SessionList, ApiError> {
    if p.local_only {
        return Ok(SessionList {
            sessions: local.await?,
            partial: false,
            hosts_unreachable: Vec::new(),
        });
    }
    let there = SessionsListParams {
        local_only: true,
        all: p.all,
    };
    let asking = ask_every_host::<method::SessionsList>(daemon, there).await;
    let mut sessions = local.await?;
    let mut hosts_unreachable = Vec::new();
    for (host, answer) in asking.answers().await {
        match answer.and_then(|v| rows::<SessionRecord>(v, "sessions")) {
            Ok(rows) => sessions.extend(rows.into_iter().map(|s| SessionRecord {
                host: host.clone(),
                ..s
            })),
            Err(error) => hosts_unreachable.push(HostUnreachable { host, error }),
        }
    }
    // Stable: of two rows of one session (a host sharing this home), the
    // local one is kept.
    sessions.sort_by(|a, b| b.created_at.cmp(&a.created_at));
    let mut seen = HashSet::new();
    sessions.retain(|s| seen.insert(s.id.clone()));
    sessions.truncate(MAX_SESSIONS);
    Ok(SessionList {
        sessions,
        partial: !hosts_unreachable.is_empty(),
        hosts_unreachable,
    })
}

/// `transcripts.search` without `within`: `local` (this daemon's hits) and
/// every host's. (A `within` naming a remote run or session is asked of
/// its host alone: `sessions::forward`.)
pub async fn search(
    daemon: &Here,
    p: SearchParams,
    local: impl Future<Output = Result<SearchResults, ApiError>>,
) -> Result<SearchResults, ApiError> {
    if p.local_only || p.within.is_some() {
        return local.await;
    }
    let limit = p
        .limit
        .unwrap_or(SearchParams::DEFAULT_LIMIT)
        .clamp(1, SearchParams::MAX_LIMIT);
    let there = SearchParams { local_only: true, ..p };
    let asking = ask_every_host::<method::TranscriptsSearch>(daemon, there).await;
    // A bad query fails here, as it would there.
    let here = local.await?;
    let mut unindexed_bytes = here.unindexed_bytes;
    let mut lists = vec![here.hits];
    let mut hosts_unreachable = Vec::new();
    for (host, answer) in asking.answers().await {
        let answer = answer.and_then(|v| {
            let unindexed = v.get("unindexed_bytes").and_then(Value::as_u64).unwrap_or(0);
            Ok((rows::<SearchHit>(v, "hits")?, unindexed))
        });
        match answer {
            Ok((hits, unindexed)) => {
                unindexed_bytes += unindexed;
                lists.push(
                    hits.into_iter()
                        .map(|h| SearchHit {
                            host: host.clone(),
                            ..h
                        })
                        .collect(),
                )
            }
            Err(error) => hosts_unreachable.push(HostUnreachable { host, error }),
        }
    }
    Ok(SearchResults {
        hits: interleave(lists, limit),
        partial: !hosts_unreachable.is_empty(),
        hosts_unreachable,
        unindexed_bytes,
    })
}

/// The best of each list, then the second of each, …: every place's own
/// ranking kept, none crowding out the others, at most `limit`.
fn interleave<T>(lists: Vec<Vec<T>>, limit: usize) -> Vec<T> {
    let mut lists: Vec<_> = lists.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    while out.len() < limit {
        let before = out.len();
        for list in &mut lists {
            if out.len() == limit {
                break;
            }
            out.extend(list.next());
        }
        if out.len() == before {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn interleave_takes_each_places_best_in_turn_up_to_the_limit() {
        let lists = vec![vec![1, 2, 3], vec![10], vec![], vec![20, 21]];
        assert_eq!(interleave(lists.clone(), 10), [1, 10, 20, 2, 21, 3]);
        assert_eq!(interleave(lists, 4), [1, 10, 20, 2]);
        assert!(interleave(Vec::<Vec<u8>>::new(), 5).is_empty());
    }

    #[test]
    fn a_hosts_rows_come_from_the_list_object_or_a_bare_array() {
        let old: Vec<u32> = rows(json!([1, 2]), "hits").unwrap();
        let new: Vec<u32> = rows(json!({ "hits": [3], "partial": false }), "hits").unwrap();
        assert_eq!((old, new), (vec![1, 2], vec![3]));
        assert!(rows::<u32>(json!({ "other": [] }), "hits").is_err());
    }

    #[test]
    fn an_unreachable_hosts_reason_is_one_line_naming_it() {
        assert_eq!(naming("box", "no route\n  to host"), "host box: no route to host");
        let said = "host box (u@h:22) is unreachable: refused";
        assert_eq!(naming("box", said), said);
    }
}
