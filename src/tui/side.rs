//! The right-hand tabs: Record, Transcript, Lineage, Events, Changes, Mail.

use std::collections::HashMap;
use std::time::SystemTime;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph, Wrap};

use super::app::{App, Command, Panel};
use super::view::{Theme, duration, glyph};
use crate::api::{Edge, LineageNode, RunRecord};

/// The side panel beside the panes: which tab it shows, how far it is
/// scrolled, and what its tabs loaded of each run.
#[derive(Default)]
pub struct SidePanel {
    /// Shown or hidden by `p`; `None` until then, shown where the agent's
    /// pane keeps 80 columns beside it (`view::render`).
    pub(super) shown: Option<bool>,
    pub(super) tab: Tab,
    /// Lines scrolled down (at most `Measured::side_scroll_max`).
    pub(super) scroll: u16,
    /// Transcripts loaded for the Transcript tab: messages, or why none.
    pub(super) transcripts: HashMap<String, Result<Vec<crate::api::TranscriptMessage>, String>>,
    /// The tree around a run for the Lineage tab (its resume and fork
    /// edges), reloaded when a run appears or the run changes.
    pub(super) lineages: HashMap<String, crate::api::Lineage>,
    /// Each run's and team's newest mail (the Mail tab), reloaded when the
    /// run or the teams change.
    pub(super) mail: HashMap<super::mail::MailOf, Result<Vec<crate::api::MailRecord>, String>>,
    /// The Changes tab's runs and its hunk cursor.
    pub(super) changes: super::changes::ChangesTab,
}

impl SidePanel {
    /// Scrolls by `lines`, never past `most` (its last page as drawn).
    pub(super) fn scroll_by(&mut self, lines: i32, most: u16) {
        let to = i32::from(self.scroll) + lines;
        self.scroll = to.clamp(0, i32::from(most)) as u16;
    }

    /// The next tab (`by` 1) or the one before (-1), from its top.
    pub(super) fn cycle(&mut self, by: isize) {
        let i = Tab::ALL.iter().position(|t| *t == self.tab).unwrap_or(0) as isize;
        self.tab = Tab::ALL[(i + by).rem_euclid(Tab::ALL.len() as isize) as usize];
        self.scroll = 0;
    }
}

/// The side panel's tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    #[default]
    Record,
    Transcript,
    Lineage,
    Events,
    Changes,
    Mail,
}

impl Tab {
    pub const ALL: [Tab; 6] = [
        Tab::Record,
        Tab::Transcript,
        Tab::Lineage,
        Tab::Events,
        Tab::Changes,
        Tab::Mail,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Tab::Record => "Record",
            Tab::Transcript => "Transcript",
            Tab::Lineage => "Lineage",
            Tab::Events => "Events",
            Tab::Changes => "Changes",
            Tab::Mail => "Mail",
        }
    }

    /// The titles as the side panel's top border shows them in `room`
    /// columns: whole, or, when they do not all fit, the `shown` tab whole
    /// and the others by their first three letters.
    pub fn titles(shown: Tab, room: usize) -> Vec<(Tab, &'static str)> {
        let whole: usize = Tab::ALL.iter().map(|t| t.title().len() + 1).sum();
        Tab::ALL
            .iter()
            .map(|&t| match whole <= room || t == shown {
                true => (t, t.title()),
                false => (t, &t.title()[..3]),
            })
            .collect()
    }
}

/// Draws the panel; its box and how far it can scroll go into `hits`.
pub fn draw(f: &mut Frame, app: &App, area: Rect, theme: &Theme, now: SystemTime, hits: &mut super::hits::Hits) {
    let focused = app.panel == Panel::Side;
    let titles: Vec<Span> = Tab::titles(app.side.tab, usize::from(area.width.saturating_sub(2)))
        .into_iter()
        .flat_map(|(t, title)| {
            let style = if t == app.side.tab {
                theme.accent.add_modifier(Modifier::UNDERLINED)
            } else {
                theme.dim
            };
            [Span::styled(title, style), Span::raw(" ")]
        })
        .collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(if focused { theme.accent } else { theme.dim })
        .title(Line::from(titles));
    let inner = block.inner(area);
    f.render_widget(block, area);
    hits.side = Some([area.x, area.y, area.width, area.height]);
    let Some(run) = app.selected_run() else {
        f.render_widget(Paragraph::new(Span::styled("no run selected", theme.dim)), inner);
        return;
    };
    let lines = match app.side.tab {
        Tab::Record => record(app, run, theme, now),
        Tab::Transcript => transcript(app, run, theme, inner.height as usize),
        Tab::Lineage => lineage(app, run, theme),
        Tab::Events => events(app, run, theme),
        Tab::Changes => changes(app, run, theme, usize::from(inner.width)),
        Tab::Mail => super::mail::lines(app, &super::mail::of_selected(app, run.id.clone()), theme),
    };
    // Lines as wrapped to the panel (a diff's are cut instead, so a hunk's
    // line is its place): scrolling stops at the last page.
    let diff = app.side.tab == Tab::Changes && matches!(app.side.changes.loaded.get(&run.id), Some(Ok(_)));
    let text = match diff {
        true => Paragraph::new(lines),
        false => Paragraph::new(lines).wrap(Wrap { trim: false }),
    };
    let wrapped = text.line_count(inner.width);
    let most = u16::try_from(wrapped.saturating_sub(usize::from(inner.height))).unwrap_or(u16::MAX);
    hits.side_scroll_max = Some(most);
    f.render_widget(text.scroll((app.side.scroll.min(most), 0)), inner);
}

/// The Changes tab: the run's diff, or why there is none.
fn changes<'a>(app: &App, run: &RunRecord, theme: &Theme, width: usize) -> Vec<Line<'a>> {
    if run.worktree.is_none() {
        return vec![
            Line::styled(format!("{} has no worktree.", run.name), theme.dim),
            Line::styled(
                "A run started with --worktree (worktree: yes in the new-run form) works on a branch of its own; its changes are reviewed and merged here.",
                theme.dim,
            ),
        ];
    }
    match app.side.changes.loaded.get(&run.id) {
        None => vec![Line::styled("reading its changes…", theme.dim)],
        Some(Err(e)) => vec![Line::styled(format!("changes not read: {e}"), theme.warn)],
        Some(Ok(loaded)) => {
            super::changes::lines(loaded, app.side.changes.cursor(&run.id), &app.keymap, theme, width).0
        }
    }
}

fn field<'a>(k: &str, v: String, theme: &Theme) -> Line<'a> {
    Line::from(vec![Span::styled(format!("{k:<8} "), theme.dim), Span::raw(v)])
}

fn record<'a>(app: &App, run: &RunRecord, theme: &Theme, now: SystemTime) -> Vec<Line<'a>> {
    let state = if run.state.is_live() {
        format!(
            "{} · {} {}",
            run.state.as_str(),
            run.status.as_str(),
            duration(run, now)
        )
    } else {
        format!("{} {}", run.state.as_str(), duration(run, now))
    };
    let mut lines = Vec::new();
    // A subagent's row: what it is, then the record of the run that started it.
    if let Some(sub) = app.selected_subagent() {
        subagent_fields(sub, theme, &mut lines);
    }
    lines.extend([
        field("name", run.name.clone(), theme),
        field("id", run.id.clone(), theme),
        field("harness", run.harness.clone(), theme),
        field("state", state, theme),
    ]);
    if run.state.is_live() {
        lines.push(field("why", status_why(app, run, now), theme));
    }
    let optional = [
        ("reason", run.reason.clone()),
        ("exit", run.exit_code.map(|c| c.to_string())),
        ("signal", run.signal.clone()),
    ];
    lines.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| field(k, v, theme))));
    lines.push(field("cwd", run.cwd.clone(), theme));
    lines.push(field("command", shell_words::join(&run.command), theme));
    lines.push(field("host", run.host.clone(), theme));
    lines.push(field(
        "pid",
        run.pid.map(|p| p.to_string()).unwrap_or_else(|| "—".into()),
        theme,
    ));
    let parent = run
        .parent_id
        .as_deref()
        .map(|p| app.run(p).map(|r| r.name.clone()).unwrap_or_else(|| p.to_string()))
        .unwrap_or_else(|| "—".into());
    lines.push(field("parent", parent, theme));
    if let Some(of) = rerun_of(app, &run.id) {
        lines.push(field("rerun of", of, theme));
    }
    if run.detached {
        lines.push(field("detached", "yes".into(), theme));
    }
    lines.push(field(
        "session",
        run.session_id.clone().unwrap_or_else(|| "—".into()),
        theme,
    ));
    if let Some(detail) = app.details.get(&run.id) {
        detail_fields(detail, theme, &mut lines);
    }
    tail_fields(run, theme, &mut lines);
    lines
}

/// What a subagent row is, above the record of the run that started it.
fn subagent_fields<'a>(sub: &crate::api::SubagentRecord, theme: &Theme, lines: &mut Vec<Line<'a>>) {
    lines.push(field("subagent", sub.agent_id.clone(), theme));
    if let Some(kind) = &sub.agent_type {
        lines.push(field("type", kind.clone(), theme));
    }
    if let Some(task) = &sub.description {
        lines.push(field("task", task.clone(), theme));
    }
    let state = if sub.ended_at.is_some() { "done" } else { "running" };
    lines.push(field("state", state.into(), theme));
    if let Some(t) = &sub.transcript_path {
        lines.push(field("transcript", t.clone(), theme));
    }
    lines.push(Line::styled("── started by", theme.dim));
}

/// Why a live run has its status: the freshest evidence line, else the
/// last `STATUS` event's reason.
fn status_why(app: &App, run: &RunRecord, now: SystemTime) -> String {
    let fresh = app.details.get(&run.id).and_then(|d| d.run.evidence_line(now));
    let why = fresh.or_else(|| run.evidence_line(now)).or_else(|| {
        app.details.get(&run.id).and_then(|d| {
            d.events.iter().rev().find(|e| e.kind == "STATUS").map(|e| {
                let why = e.data["why"].as_str().unwrap_or("").to_string();
                let ago = humantime::parse_rfc3339(&e.at)
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .map(|d| format!(" ({}s ago)", d.as_secs()))
                    .unwrap_or_default();
                format!("{why}{ago}")
            })
        })
    });
    why.unwrap_or_else(|| "no status evidence yet".into())
}

/// What the run's detail adds: its harness's version, profile and
/// transcript, its usage, where it resumed from, the attempts it took.
fn detail_fields<'a>(detail: &crate::api::RunDetail, theme: &Theme, lines: &mut Vec<Line<'a>>) {
    let harness = &detail.harness;
    let optional = [
        ("version", harness.harness_version.clone()),
        ("profile", harness.profile.clone()),
        ("transcript", harness.transcript_path.clone()),
    ];
    lines.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| field(k, v, theme))));
    for u in &detail.undelivered {
        let text: String = u.text.chars().take(30).collect();
        let said = format!("{text}: {}", u.reason);
        lines.push(field("unsent", crate::text::inert_line(&said).into_owned(), theme));
    }
    // Short lines for a narrow pane; `agents show` has the whole of it.
    if let Some(u) = &detail.usage {
        use crate::transcript::usage::{count, dollars};
        let in_out = |t: &crate::transcript::Usage| format!("{} in · {} out", count(t.input), count(t.output));
        lines.push(field("tokens", in_out(&u.tokens), theme));
        let t = &u.tokens;
        let cache: Vec<String> = [(t.cache_read, "read"), (t.cache_write, "write")]
            .iter()
            .filter(|(n, _)| *n != 0)
            .map(|(n, kind)| format!("{} {kind}", count(*n)))
            .collect();
        if !cache.is_empty() {
            lines.push(field("cache", cache.join(" · "), theme));
        }
        let cost = u.estimated_cost_usd.map(dollars).unwrap_or_else(|| "—".into());
        lines.push(field("cost", format!("est. {cost}"), theme));
        if !u.subagents.tokens.is_zero() {
            lines.push(field("subagents", in_out(&u.subagents.tokens), theme));
        }
    }
    if let Some(from) = &harness.resumed_from {
        let how = harness.resume_mode.as_deref().unwrap_or("fork");
        lines.push(field("from", format!("session {from} ({how})"), theme));
    }
    if harness.attempts.len() > 1 {
        let tried: Vec<String> = harness
            .attempts
            .iter()
            .map(|a| {
                format!(
                    "{} {}",
                    a.profile.as_deref().unwrap_or("-"),
                    a.outcome.as_deref().unwrap_or("running")
                )
            })
            .collect();
        lines.push(field("attempts", tried.join(" → "), theme));
    }
}

/// The record's last fields: worktree, box, size, output, routine, times.
fn tail_fields<'a>(run: &RunRecord, theme: &Theme, lines: &mut Vec<Line<'a>>) {
    if let Some(w) = &run.worktree {
        lines.push(field("worktree", w.clone(), theme));
    }
    if let Some(how) = run.sandbox.as_deref() {
        let how = crate::values::sandbox::Sandbox::parse(how).unwrap_or(crate::values::sandbox::Sandbox::On);
        lines.push(field("sandbox", how.describe().to_string(), theme));
    }
    lines.push(field("size", format!("{}x{}", run.cols, run.rows), theme));
    lines.push(field("output", human_bytes(run.output_bytes), theme));
    if let Some(at) = &run.log_pruned_at {
        lines.push(field("log", format!("pruned at {at}"), theme));
    }
    if let Some(routine) = &run.routine {
        let at = run.scheduled_at.as_deref().unwrap_or("-");
        lines.push(field("routine", format!("{routine} at {at}"), theme));
    }
    lines.push(field("created", run.created_at.clone(), theme));
    if let Some(t) = &run.ended_at {
        lines.push(field("ended", t.clone(), theme));
    }
}

/// Until the harness adapters read native transcripts, the transcript is the
/// run's output as text: its scrollback and screen.
fn transcript<'a>(app: &App, run: &RunRecord, theme: &Theme, height: usize) -> Vec<Line<'a>> {
    match app.side.transcripts.get(&run.id) {
        Some(Ok(messages)) if !messages.is_empty() => return conversation(messages, theme, height),
        Some(Err(e)) => return vec![Line::styled(format!("the transcript cannot be read: {e}"), theme.bad)],
        _ => {}
    }
    // A run's harness is its family (a profile's too).
    let family = run.harness.clone();
    // No conversation to show: say why, rather than repeat the pane.
    let keeps_one = crate::harness::adapter_for(&family).is_some_and(|a| a.has_sessions());
    let said = if !keeps_one {
        format!(
            "no transcript: a {family} run keeps none. Its output is in the pane and in `agents logs {}`.",
            run.name
        )
    } else if app
        .details
        .get(&run.id)
        .is_some_and(|d| d.harness.transcript_path.is_some())
    {
        "the transcript has no messages yet".to_string()
    } else {
        format!("no transcript yet: {family} writes one once its conversation starts")
    };
    vec![Line::styled(said, theme.dim)]
}

/// The harness's own conversation, newest at the bottom: a header per
/// message, its text, tool calls folded to one line, errors marked.
fn conversation<'a>(messages: &[crate::api::TranscriptMessage], theme: &Theme, height: usize) -> Vec<Line<'a>> {
    use crate::transcript::Role;
    let mut lines: Vec<Line> = Vec::new();
    for m in messages {
        let (who, style) = match m.role {
            Role::User => ("you", theme.accent),
            Role::Assistant => ("agent", theme.ok),
            Role::System => ("system", theme.dim),
            Role::Tool => ("tool", theme.dim),
        };
        let error = m.tool_result.as_ref().is_some_and(|r| r.is_error);
        let sub = if m.sidechain { " (subagent)" } else { "" };
        let head_style = if error { theme.bad } else { style };
        lines.push(Line::styled(
            format!("▌{who}{sub}{}", if error { " — error" } else { "" }),
            head_style,
        ));
        for text in m.text.lines().take(12) {
            lines.push(Line::raw(format!("  {text}")));
        }
        if m.text.lines().count() > 12 {
            lines.push(Line::styled("  …", theme.dim));
        }
        for call in &m.tool_calls {
            let input = match &call.input {
                serde_json::Value::Object(map) => map
                    .values()
                    .next()
                    .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
                    .unwrap_or_default(),
                other => other.to_string(),
            };
            let input: String = input.chars().take(60).collect();
            lines.push(Line::styled(format!("  ⏵ {}({input})", call.name), theme.warn));
        }
    }
    let start = lines.len().saturating_sub(height.max(1) * 4);
    lines.split_off(start)
}

/// The name of the run this one started again, from its `RERUN_OF` event.
fn rerun_of(app: &App, run: &str) -> Option<String> {
    let event = app.details.get(run)?.events.iter().find(|e| e.kind == "RERUN_OF")?;
    let id = event.data["run"].as_str()?;
    let name = app.run(id).map(|r| r.name.clone());
    name.or_else(|| event.data["name"].as_str().map(str::to_string))
}

fn lineage<'a>(app: &App, run: &RunRecord, theme: &Theme) -> Vec<Line<'a>> {
    let mut chain = vec![run];
    let mut cur = run;
    while let Some(parent) = cur.parent_id.as_deref().and_then(|p| app.run(p)) {
        if chain.len() > 32 {
            break;
        }
        chain.push(parent);
        cur = parent;
    }
    chain.reverse();
    let mut lines = Vec::new();
    for (depth, r) in chain.iter().enumerate() {
        let marker = if r.id == run.id { "▶ " } else { "  " };
        lines.push(Line::from(vec![
            Span::raw(format!("{}{marker}", "  ".repeat(depth))),
            Span::raw(format!("{} ", glyph(r))),
            Span::raw(r.name.clone()),
            Span::styled(format!("  {}", r.state.as_str()), theme.dim),
        ]));
    }
    let base = chain.len();
    descendants(app, &run.id, base, &mut lines, theme);
    // Subagents the harness started inside this run (Claude's Agent tool).
    if let Some(detail) = app.details.get(&run.id) {
        for sub in &detail.harness.subagents {
            let state = if sub.ended_at.is_some() { "done" } else { "running" };
            let kind = sub.agent_type.as_deref().unwrap_or("subagent");
            let task = sub
                .description
                .as_deref()
                .map(|d| format!(" \"{d}\""))
                .unwrap_or_default();
            lines.push(Line::from(vec![
                Span::raw(format!("{}└ ", "  ".repeat(base))),
                Span::raw("◇ "),
                Span::raw(format!("{kind} {}", &sub.agent_id[..sub.agent_id.len().min(12)])),
                Span::styled(format!("  {state}{task}"), theme.dim),
            ]));
        }
    }
    // Runs of the same conversation: the one this run resumed or forked,
    // and those that resumed or forked this one.
    if let Some(lineage) = app.side.lineages.get(&run.id)
        && let Some((node, from)) = find_node(&lineage.root, &run.id, None)
    {
        if let Some(from) = from {
            match node.edge {
                Edge::ResumeOf => lines.push(session_edge(app, "resumes", from, node, theme)),
                Edge::ForkOf => lines.push(session_edge(app, "forks", from, node, theme)),
                _ => {}
            }
        }
        for next in &node.children {
            match next.edge {
                Edge::ResumeOf => lines.push(session_edge(app, "resumed by", next, next, theme)),
                Edge::ForkOf => lines.push(session_edge(app, "forked by", next, next, theme)),
                Edge::RerunOf => lines.push(session_edge(app, "rerun as", next, next, theme)),
                _ => {}
            }
        }
    }
    // From the run's own record: a rerun with a parent hangs under that
    // parent in the tree, not under the run it repeats.
    if let Some(of) = rerun_of(app, &run.id) {
        lines.push(Line::from(vec![Span::styled("rerun of ", theme.dim), Span::raw(of)]));
    }
    if lines.len() == 1 {
        lines.push(Line::styled("no parent, no children", theme.dim));
    }
    lines
}

/// The node of run `id` in a lineage tree, with the node it hangs under.
fn find_node<'t>(
    node: &'t LineageNode,
    id: &str,
    parent: Option<&'t LineageNode>,
) -> Option<(&'t LineageNode, Option<&'t LineageNode>)> {
    if node.id == id && node.edge != Edge::Subagent {
        return Some((node, parent));
    }
    node.children.iter().find_map(|c| find_node(c, id, Some(node)))
}

/// `resumes ✓ old-run  succeeded · native`: the other run of the edge, and
/// how the resuming run (`by`) took the conversation up.
fn session_edge<'a>(app: &App, label: &str, other: &LineageNode, by: &LineageNode, theme: &Theme) -> Line<'a> {
    let glyph = app.run(&other.id).map(glyph).unwrap_or("·");
    let mode = by.resume_mode.as_deref().map(|m| format!(" · {m}")).unwrap_or_default();
    Line::from(vec![
        Span::styled(format!("{label} "), theme.dim),
        Span::raw(format!("{glyph} ")),
        Span::raw(other.name.clone()),
        Span::styled(format!("  {}{mode}", other.state), theme.dim),
    ])
}

fn descendants<'a>(app: &App, id: &str, depth: usize, lines: &mut Vec<Line<'a>>, theme: &Theme) {
    if depth > 32 {
        return;
    }
    for child in app.runs.iter().filter(|r| r.parent_id.as_deref() == Some(id)) {
        let detached = if child.detached { " (detached)" } else { "" };
        lines.push(Line::from(vec![
            Span::raw(format!("{}└ ", "  ".repeat(depth))),
            Span::raw(format!("{} ", glyph(child))),
            Span::raw(child.name.clone()),
            Span::styled(format!("  {}{detached}", child.state.as_str()), theme.dim),
        ]));
        descendants(app, &child.id, depth + 1, lines, theme);
    }
}

/// The fields of an event worth a column, in the order they are shown.
const EVENT_FIELDS: [&str; 14] = [
    "state",
    "status",
    "why",
    "reason",
    "signal",
    "code",
    "exit_code",
    "prompt_id",
    "answer",
    "event",
    "session",
    "name",
    "from",
    "to",
];

/// An event's fields that matter, as `state running · pid 4242`: the known
/// ones first, then any other short scalar.
fn event_summary(data: &serde_json::Value) -> String {
    use serde_json::Value;
    let Value::Object(map) = data else {
        return String::new();
    };
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let known = EVENT_FIELDS
        .iter()
        .filter_map(|k| Some((k.to_string(), scalar(map.get(*k)?)?)));
    let others = map
        .iter()
        .filter(|(k, _)| !EVENT_FIELDS.contains(&k.as_str()))
        .filter_map(|(k, v)| Some((k.clone(), scalar(v)?)));
    let said: Vec<String> = known.chain(others).map(|(k, v)| format!("{k} {v}")).collect();
    crate::text::bounded(&said.join(" · "), 120)
}

/// Newest first: the time and kind, then what matters under them (the
/// panel is narrow). A run of status changes in a row (an agent flapping
/// between working and idle) is one entry that counts them.
fn events<'a>(app: &App, run: &RunRecord, theme: &Theme) -> Vec<Line<'a>> {
    let Some(detail) = app.details.get(&run.id) else {
        return vec![Line::styled("loading…", theme.dim)];
    };
    let mut lines = Vec::new();
    let mut newest = detail.events.iter().rev().peekable();
    while let Some(e) = newest.next() {
        let mut folded = 0;
        while e.kind == "STATUS" && newest.peek().is_some_and(|next| next.kind == "STATUS") {
            newest.next();
            folded += 1;
        }
        let time = e.at.get(11..19).unwrap_or(&e.at).to_string();
        let mut summary = event_summary(&e.data);
        if folded > 0 {
            summary.push_str(&format!("  (+{folded} status changes before)"));
        }
        lines.push(Line::from(vec![
            Span::styled(format!("{time} "), theme.dim),
            Span::raw(e.kind.clone()),
        ]));
        if !summary.is_empty() {
            lines.push(Line::styled(format!("  {summary}"), theme.dim));
        }
    }
    lines
}

/// `889228875` bytes as `848.0 MiB`.
fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{n} bytes"),
        _ => format!("{value:.1} {}", UNITS[unit]),
    }
}

impl App {
    /// What the side tab shows that the run list does not carry: the
    /// Transcript tab the run's native transcript, the Lineage tab the tree
    /// around the run.
    pub fn want_tab_data(&mut self) {
        let Some(id) = self.selected_run().map(|r| r.id.clone()) else {
            return;
        };
        match self.side.tab {
            Tab::Transcript if !self.side.transcripts.contains_key(&id) => self.commands.push(Command::Transcript(id)),
            Tab::Lineage if !self.side.lineages.contains_key(&id) => self.commands.push(Command::Lineage(id)),
            Tab::Changes if !self.side.changes.loaded.contains_key(&id) => self.commands.push(Command::Changes(id)),
            Tab::Mail => {
                let of = super::mail::of_selected(self, id);
                if !self.side.mail.contains_key(&of) {
                    self.commands.push(Command::Mail(of));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn output_sizes_read_in_units() {
        assert_eq!(super::human_bytes(1234), "1.2 KiB");
        assert_eq!(super::human_bytes(889_228_875), "848.0 MiB");
        assert_eq!(super::human_bytes(12), "12 bytes");
    }
}
