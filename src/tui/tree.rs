//! The runs as a tree: host → run → subagents and child runs, flattened
//! into rows.

use std::collections::HashMap;

use crate::api::{RunRecord, SubagentRecord};

/// The run tree as the app shows it: its rows, the one selected, the
/// filter typed over it and the runs marked in it.
#[derive(Default)]
pub struct Tree {
    pub(super) rows: Vec<TreeRow>,
    pub(super) selected: usize,
    pub(super) filter: String,
    /// `/` was pressed: keys go into the filter.
    pub(super) filtering: bool,
    /// The run to select once the runs are known (the one selected when
    /// the TUI was last closed).
    pub(super) reselect: Option<String>,
    /// Runs marked for a broadcast (Space), in the order marked.
    pub(super) marked: Vec<String>,
}

impl Tree {
    /// The rows built again from what the tree shows, the selection kept
    /// on its run (or subagent); a run gone (deleted), on the run that took
    /// its row, else the one above it, not back at the top.
    pub(super) fn rebuild(
        &mut self,
        runs: &[RunRecord],
        subagents: &HashMap<String, Vec<SubagentRecord>>,
        hosts: &[&str],
        routines: &[&str],
        teams: &[crate::api::TeamRecord],
    ) {
        let keep = self
            .rows
            .get(self.selected)
            .map(|r| (r.run.clone(), r.subagent.clone()));
        let rows = build_with(runs, subagents, hosts, routines, &self.filter);
        let leaders: HashMap<String, String> = teams
            .iter()
            .filter_map(|t| Some((t.members.iter().find(|m| m.leader)?.run.id.clone(), team_heading(t))))
            .collect();
        self.rows = with_teams(rows, &leaders);
        let was = self.selected;
        let is_run = |r: &TreeRow| r.run.is_some();
        self.selected = keep
            .and_then(|(id, agent)| {
                let id = id?;
                self.rows
                    .iter()
                    .position(|r| r.run.as_deref() == Some(&id) && r.subagent == agent && r.team.is_none())
                    .or_else(|| self.row_of(&id))
            })
            .or_else(|| self.rows.iter().skip(was).position(is_run).map(|at| was + at))
            .or_else(|| self.rows.iter().take(was).rposition(is_run))
            .unwrap_or(0);
    }

    /// A key typed into the filter (after `/`); true when the rows must be
    /// built again.
    pub(super) fn filter_key(&mut self, key: &crossterm::event::KeyEvent) -> bool {
        use crossterm::event::{KeyCode, KeyModifiers};
        match key.code {
            KeyCode::Esc => {
                self.filtering = false;
                self.filter.clear();
                true
            }
            KeyCode::Enter => {
                self.filtering = false;
                false
            }
            KeyCode::Backspace => {
                self.filter.pop();
                true
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.filter.push(c);
                true
            }
            _ => false,
        }
    }

    /// Moves the selection `by` runs' rows (headings are passed over);
    /// false where there is no run that way.
    pub(super) fn step(&mut self, by: isize) -> bool {
        let mut i = self.selected as isize;
        loop {
            i += by;
            if i < 0 || i >= self.rows.len() as isize {
                return false;
            }
            if self.rows[i as usize].run.is_some() {
                self.selected = i as usize;
                return true;
            }
        }
    }

    /// Selects the first run's row, or the last's; false with no runs.
    pub(super) fn select_end(&mut self, last: bool) -> bool {
        let mut runs = (0..self.rows.len()).filter(|&k| self.rows[k].run.is_some());
        let pick = if last { runs.next_back() } else { runs.next() };
        if let Some(k) = pick {
            self.selected = k;
        }
        pick.is_some()
    }

    /// The row of run `id` (the first: a team's heading is over its leader).
    pub(super) fn row_of(&self, id: &str) -> Option<usize> {
        self.rows.iter().position(|r| r.run.as_deref() == Some(id))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TreeRow {
    /// `None` for a host heading; for a subagent, the run that started it.
    pub run: Option<String>,
    pub depth: usize,
    pub host: String,
    /// Whether this run is the last among its siblings (for the connector).
    pub last: bool,
    /// A subagent of `run` (its agent id): a row of its own, under the run.
    pub subagent: Option<String>,
    /// A routine's row (its name) under the routines' heading (`Some("")`),
    /// after the hosts, its runs under it; not a run, so never selected.
    pub routine: Option<String>,
    /// A team's heading (its name), just above its leader's row (`run`).
    pub team: Option<String>,
}

/// `rows` with a heading above each team's leader (`leaders`: leader run
/// id → team name), at the leader's depth: team → leader → members.
pub fn with_teams(rows: Vec<TreeRow>, leaders: &HashMap<String, String>) -> Vec<TreeRow> {
    let mut out = Vec::with_capacity(rows.len() + leaders.len());
    for row in rows {
        if row.subagent.is_none()
            && let Some(team) = row.run.as_ref().and_then(|id| leaders.get(id))
        {
            out.push(TreeRow {
                team: Some(team.clone()),
                last: false,
                ..row.clone()
            });
        }
        out.push(row);
    }
    out
}

/// Builds rows: each host, then its root runs in start order, each followed
/// by its children. A filter keeps matching runs and their ancestors.
pub fn build(runs: &[RunRecord], filter: &str) -> Vec<TreeRow> {
    build_with(runs, &HashMap::new(), &[], &[], filter)
}

/// Like [`build`], with each run's subagents (Claude's `Agent` tool) as
/// rows under it, before its child runs, and a heading for every
/// configured host in `hosts` even with no run (its link state is worth
/// seeing before the first run is placed there, and after the last ends),
/// and after the hosts the routines' group: a heading, then each routine
/// of `routines` with the runs and skipped fires it made under it.
pub fn build_with(
    runs: &[RunRecord],
    subagents: &HashMap<String, Vec<SubagentRecord>>,
    hosts: &[&str],
    routines: &[&str],
    filter: &str,
) -> Vec<TreeRow> {
    let by_id: HashMap<&str, &RunRecord> = runs.iter().map(|r| (r.id.as_str(), r)).collect();
    let needle = filter.to_lowercase();
    let matches = |r: &RunRecord| {
        needle.is_empty()
            || r.name.to_lowercase().contains(&needle)
            || r.former_names.iter().any(|n| n.to_lowercase().contains(&needle))
            || r.harness.to_lowercase().contains(&needle)
            || r.state.as_str().contains(&needle)
            || r.id.to_lowercase().starts_with(&needle)
    };
    // Keep matches and every ancestor of a match.
    let mut keep: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for r in runs.iter().filter(|r| matches(r)) {
        let mut cur = Some(r);
        while let Some(run) = cur {
            if !keep.insert(run.id.as_str()) {
                break;
            }
            cur = run.parent_id.as_deref().and_then(|p| by_id.get(p).copied());
        }
    }
    let mut children: HashMap<&str, Vec<&RunRecord>> = HashMap::new();
    let mut roots: Vec<&RunRecord> = Vec::new();
    // A routine's fires go under it, not among the hosts' runs (one of a
    // routine no longer configured stays with its host).
    let mut fired: HashMap<&str, Vec<&RunRecord>> = HashMap::new();
    for r in runs.iter().filter(|r| keep.contains(r.id.as_str())) {
        match r
            .parent_id
            .as_deref()
            .filter(|p| by_id.contains_key(p) && keep.contains(p))
        {
            Some(p) => children.entry(p).or_default().push(r),
            None => match r.routine.as_deref().filter(|n| routines.contains(n)) {
                Some(routine) => fired.entry(routine).or_default().push(r),
                None => roots.push(r),
            },
        }
    }
    roots.sort_by(|a, b| a.id.cmp(&b.id));
    for list in children.values_mut().chain(fired.values_mut()) {
        list.sort_by(|a, b| a.id.cmp(&b.id));
    }
    let configured = hosts;
    let mut hosts: Vec<&str> = roots.iter().map(|r| r.host.as_str()).collect();
    if roots.is_empty() {
        hosts.push("local");
    }
    hosts.extend(configured.iter().copied().filter(|h| *h != "local"));
    hosts.sort_by_key(|h| (*h != "local", *h));
    hosts.dedup();
    let mut rows = Vec::new();
    for host in hosts {
        rows.push(TreeRow {
            run: None,
            depth: 0,
            host: host.to_string(),
            last: false,
            subagent: None,
            routine: None,
            team: None,
        });
        let host_roots: Vec<&RunRecord> = roots.iter().copied().filter(|r| r.host == host).collect();
        let n = host_roots.len();
        for (i, r) in host_roots.into_iter().enumerate() {
            push(&mut rows, r, 1, i + 1 == n, &children, subagents);
        }
    }
    if !routines.is_empty() {
        rows.push(routine_row(""));
    }
    for routine in routines {
        rows.push(routine_row(routine));
        let runs = fired.get(routine).map(Vec::as_slice).unwrap_or_default();
        for (i, r) in runs.iter().enumerate() {
            push(&mut rows, r, 2, i + 1 == runs.len(), &children, subagents);
        }
    }
    rows
}

/// The routines' heading (`""`) or a routine's row: not a run, so never
/// selected.
fn routine_row(name: &str) -> TreeRow {
    TreeRow {
        run: None,
        depth: 1,
        host: String::new(),
        last: false,
        subagent: None,
        routine: Some(name.to_string()),
        team: None,
    }
}

fn push<'a>(
    rows: &mut Vec<TreeRow>,
    run: &'a RunRecord,
    depth: usize,
    last: bool,
    children: &HashMap<&str, Vec<&'a RunRecord>>,
    subagents: &HashMap<String, Vec<SubagentRecord>>,
) {
    rows.push(TreeRow {
        run: Some(run.id.clone()),
        depth,
        host: run.host.clone(),
        last,
        subagent: None,
        routine: None,
        team: None,
    });
    if depth > 16 {
        return; // a cycle cannot form through ids minted before parents, but stay bounded
    }
    let kids = children.get(run.id.as_str()).map(Vec::as_slice).unwrap_or_default();
    let subs = subagents.get(&run.id).map(Vec::as_slice).unwrap_or_default();
    for (i, sub) in subs.iter().enumerate() {
        rows.push(TreeRow {
            run: Some(run.id.clone()),
            depth: depth + 1,
            host: run.host.clone(),
            last: kids.is_empty() && i + 1 == subs.len(),
            subagent: Some(sub.agent_id.clone()),
            routine: None,
            team: None,
        });
    }
    let n = kids.len();
    for (i, k) in kids.iter().enumerate() {
        push(rows, k, depth + 1, i + 1 == n, children, subagents);
    }
}

/// A team's heading in the tree: `review · 3 · ✉ 2` (members, then mail
/// not yet typed into them).
pub fn team_heading(t: &crate::api::TeamRecord) -> String {
    let unread = match t.unread {
        0 => String::new(),
        n => format!(" · ✉ {n}"),
    };
    format!("{} · {}{unread}", t.name, t.members.len())
}
