//! `runs.list` answers that fit their frame by construction: a page holds
//! as many runs as fit in `api::bounds::LIST_BYTES` of JSON.

use crate::api::bounds::LIST_BYTES;
use crate::api::{ActivityStatus, ListedRun, RunRecord};

/// The runs of `listed` (oldest first) that fit in `LIST_BYTES`, oldest
/// first: the newest are kept, and with `live_first` every live run before
/// any ended one. At least one run, whatever its size (the stored fields
/// are bounded, so one run is far below a frame).
pub fn fit(listed: Vec<ListedRun>, live_first: bool) -> Vec<ListedRun> {
    let mut order: Vec<(usize, ListedRun)> = listed
        .into_iter()
        .map(|r| (serde_json::to_vec(&r).map_or(0, |v| v.len()) + 1, r))
        .collect();
    // Newest first, live ones ahead when asked.
    order.sort_by(|(_, a), (_, b)| {
        let live = |r: &ListedRun| live_first && r.run.state.is_live();
        live(b).cmp(&live(a)).then_with(|| b.run.id.cmp(&a.run.id))
    });
    let mut bytes = 0;
    let mut kept: Vec<ListedRun> = Vec::new();
    for (size, run) in order {
        if !kept.is_empty() && bytes + size > LIST_BYTES {
            break;
        }
        bytes += size;
        kept.push(run);
    }
    kept.sort_by(|a, b| a.run.id.cmp(&b.run.id));
    kept
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
}

/// [`show_children_working`] for every run of a listing, by the live runs
/// it holds.
pub fn show_each_parents_children(listed: &mut [ListedRun]) {
    let mut working: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for r in listed.iter().map(|l| &l.run) {
        if r.state.is_live()
            && r.status.is_working()
            && let Some(parent) = &r.parent_id
        {
            *working.entry(parent.clone()).or_default() += 1;
        }
    }
    for l in listed.iter_mut() {
        let n = working.get(&l.run.id).copied().unwrap_or(0);
        show_children_working(&mut l.run, n);
    }
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
        let mut parent = run(1, "running", 0);
        parent.run.status = ActivityStatus::Idle;
        let parent_id = parent.run.id.clone();
        let child = |id, status| {
            let mut c = run(id, "running", 0);
            c.run.parent_id = Some(parent_id.clone());
            c.run.status = status;
            c
        };
        let mut listed = vec![
            parent.clone(),
            child(2, ActivityStatus::Working),
            child(3, ActivityStatus::Working),
        ];
        show_each_parents_children(&mut listed);
        assert_eq!(listed[0].run.status, ActivityStatus::Working);
        assert_eq!(listed[0].run.evidence.as_deref(), Some("2 child runs working"));
        let mut resting = vec![parent, child(2, ActivityStatus::Idle)];
        show_each_parents_children(&mut resting);
        assert_eq!(resting[0].run.status, ActivityStatus::Idle);
    }

    #[test]
    fn a_page_keeps_the_newest_runs_that_fit_and_live_ones_first_when_asked() {
        // 200 runs of 12 KiB each: 2.4 MB, three frames' worth.
        let listed: Vec<ListedRun> = (0..200)
            .map(|i| run(i, if i == 3 { "running" } else { "succeeded" }, 12 * 1024))
            .collect();
        let kept = fit(listed.clone(), false);
        let bytes: usize = kept.iter().map(|r| serde_json::to_vec(r).unwrap().len()).sum();
        assert!(
            bytes <= LIST_BYTES && kept.len() > 50,
            "{} runs, {bytes} bytes",
            kept.len()
        );
        assert_eq!(kept.last().unwrap().run.id, "0199", "the newest");
        assert!(kept.windows(2).all(|w| w[0].run.id < w[1].run.id), "oldest first");
        assert!(!kept.iter().any(|r| r.run.id == "0003"));
        let live_first = fit(listed, true);
        assert!(
            live_first.iter().any(|r| r.run.id == "0003"),
            "the old live run is kept"
        );
        // One run larger than the budget still comes.
        assert_eq!(fit(vec![run(1, "succeeded", LIST_BYTES)], false).len(), 1);
    }
}
