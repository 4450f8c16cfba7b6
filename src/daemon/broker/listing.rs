//! `runs.list` answers that fit their frame by construction: a page holds
//! as many runs as fit in `api::bounds::LIST_BYTES` of JSON. Each run is
//! written once, and the answer is put together from the runs as written.

use serde_json::value::RawValue;

use crate::api::bounds::LIST_BYTES;
use crate::api::{ActivityStatus, ListedRun, RunRecord};

/// The runs of a page that fit, written: oldest first, and the id of the
/// oldest (a next page's `before`).
pub struct Fitted {
    pub runs: Vec<Box<RawValue>>,
    pub first: Option<String>,
}

/// The runs of `listed` (oldest first) that fit in `LIST_BYTES`, oldest
/// first: the newest are kept, and with `live_first` every live run before
/// any ended one. At least one run, whatever its size (the stored fields
/// are bounded, so one run is far below a frame).
pub fn fit(listed: Vec<ListedRun>, live_first: bool) -> serde_json::Result<Fitted> {
    let mut order: Vec<(bool, String, Box<RawValue>)> = listed
        .into_iter()
        .map(|r| {
            Ok((
                live_first && r.run.state.is_live(),
                r.run.id.clone(),
                serde_json::value::to_raw_value(&r)?,
            ))
        })
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
        let kept = fit(listed.clone(), false).unwrap();
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
        let live_first = ids_of(fit(listed, true));
        assert!(live_first.iter().any(|id| id == "0003"), "the old live run is kept");
        // One run larger than the budget still comes.
        assert_eq!(ids_of(fit(vec![run(1, "succeeded", LIST_BYTES)], false)).len(), 1);
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
