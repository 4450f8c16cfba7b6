//! Drawing the whole screen from the app state (docs/design.md §9): the
//! layout, the run tree and the panes; the bars and overlays have files of
//! their own (`bars.rs`, `overlay.rs`).

use std::time::SystemTime;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout as Split, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph, Wrap};

use super::app::{App, Layout, Mode, Panel};
use super::hits::Hits;
use super::keymap::Action;
use super::pane::PaneView;
use super::side;
use super::{bars, overlay};
use crate::api::{ActivityStatus, RunRecord, RunState};

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;
/// The tree is as wide as its widest row wants, within these bounds (and
/// at most a quarter of the screen): the agent's pane gets the rest.
const TREE_MIN: u16 = 26;
const TREE_MAX: u16 = 40;
const SIDE_WIDTH: u16 = 38;
/// The side panel is shown by default wherever the agent's pane keeps this
/// beside it: 80 columns for the agent inside the pane's border (Claude
/// Code's first screen wants ~80; at 54 its UI was cut). `p` shows or
/// hides it at any width from `SIDE_BESIDE_MIN`.
const PANE_MIN: u16 = 82;
/// Below this, the side panel is never beside the panes (Tab shows it).
pub const SIDE_BESIDE_MIN: u16 = 100;

pub struct Theme {
    pub accent: Style,
    pub dim: Style,
    pub selected: Style,
    pub insert: Style,
    pub warn: Style,
    pub ok: Style,
    pub bad: Style,
}

impl Theme {
    pub fn new(no_color: bool) -> Theme {
        if no_color {
            let plain = Style::default();
            return Theme {
                accent: plain.add_modifier(Modifier::BOLD),
                dim: plain.add_modifier(Modifier::DIM),
                selected: plain.add_modifier(Modifier::REVERSED),
                insert: plain.add_modifier(Modifier::BOLD),
                warn: plain.add_modifier(Modifier::BOLD),
                ok: plain,
                bad: plain.add_modifier(Modifier::BOLD),
            };
        }
        Theme {
            accent: Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            dim: Style::default().fg(Color::DarkGray),
            selected: Style::default().bg(Color::DarkGray).add_modifier(Modifier::BOLD),
            insert: Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            warn: Style::default().fg(Color::Yellow),
            ok: Style::default().fg(Color::Green),
            bad: Style::default().fg(Color::Red),
        }
    }
}

/// The glyph for a run: activity while live, outcome once ended.
pub fn glyph(run: &RunRecord) -> &'static str {
    match run.state {
        RunState::Pending | RunState::Starting => "◌",
        RunState::Running => match run.status {
            ActivityStatus::Working => "●",
            ActivityStatus::Stalled => "◐",
            ActivityStatus::WaitingInput | ActivityStatus::NeedsApproval => "◉",
            ActivityStatus::Idle => "○",
            ActivityStatus::Unknown => "◍",
        },
        RunState::Succeeded => "✓",
        RunState::Failed => "✗",
        RunState::Cancelled => "⊘",
        RunState::TimedOut => "⧗",
        RunState::Blocked => "⊗",
        RunState::Interrupted => "!",
        RunState::Lost => "?",
        RunState::Skipped => "↷",
    }
}

fn glyph_style(run: &RunRecord, theme: &Theme) -> Style {
    match run.state {
        RunState::Succeeded => theme.ok,
        RunState::Running
            if matches!(
                run.status,
                ActivityStatus::WaitingInput | ActivityStatus::NeedsApproval | ActivityStatus::Stalled
            ) =>
        {
            theme.warn
        }
        RunState::Running | RunState::Pending | RunState::Starting => theme.accent,
        RunState::Cancelled => theme.dim,
        _ => theme.bad,
    }
}

pub fn duration(run: &RunRecord, now: SystemTime) -> String {
    let parse = |s: &Option<String>| s.as_deref().and_then(|s| humantime::parse_rfc3339(s).ok());
    let Some(start) = parse(&run.started_at) else {
        return String::new();
    };
    let end = parse(&run.ended_at).unwrap_or(now);
    let secs = end.duration_since(start).map(|d| d.as_secs()).unwrap_or(0);
    if secs >= 3600 {
        format!("{}h{:02}", secs / 3600, secs / 60 % 60)
    } else {
        format!("{:02}:{:02}", secs / 60, secs % 60)
    }
}

/// Draws the whole screen and keeps what the frame measured (`hits.rs`).
pub fn draw(f: &mut Frame, app: &mut App) {
    let hits = render(f, app);
    app.drawn(hits);
}

/// Draws the whole screen from a borrowed app: where things went and how
/// far they scroll come back as `Hits`, for `App::drawn`.
pub fn render(f: &mut Frame, app: &App) -> Hits {
    let area = f.area();
    // The panes this frame draws: none where the side panel takes their
    // column or the window is too small, and a pane frame (`echo`) then
    // draws none.
    let mut hits = Hits::default();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "agents needs at least {MIN_WIDTH}×{MIN_HEIGHT}; this window is {}×{}",
            area.width, area.height
        );
        f.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
        return hits;
    }
    let theme = Theme::new(app.no_color);
    let now = app.now.unwrap_or_else(SystemTime::now);
    if app.panes.fullscreen {
        draw_fullscreen(f, app, area, &mut hits);
        return hits;
    }
    let [header, body, status] =
        Split::vertical([Constraint::Length(1), Constraint::Min(1), Constraint::Length(1)]).areas(area);
    bars::draw_header(f, app, header, &theme);
    bars::draw_status(f, app, status, &theme);

    let mut tree_width = app.tree_width();
    if !app.panes.zoom {
        // Kept while a filter is: typing one must not resize every pane's run.
        tree_width = match app.tree.filter.is_empty() {
            true => self::tree_width(app, area.width),
            false => tree_width.clamp(TREE_MIN, TREE_MAX.min(area.width / 4).max(TREE_MIN)),
        };
        hits.tree_width = Some(tree_width);
    }
    // The side panel goes right of the panes where they keep `PANE_MIN`
    // beside both it and the tree; narrower, under the tree in one column
    // (at 120 columns the agent then keeps 80).
    let side_width = SIDE_WIDTH.max(area.width / 5);
    let under_tree = area.width < tree_width + side_width + PANE_MIN;
    let left_width = match under_tree {
        true => tree_width.max(side_width),
        false => tree_width,
    };
    let beside = if under_tree { 0 } else { side_width };
    let beside_by_width = area.width.saturating_sub(left_width + beside) >= PANE_MIN;
    hits.side_beside_by_width = Some(beside_by_width);
    let show_side_beside =
        app.side.shown.unwrap_or(beside_by_width) && area.width >= SIDE_BESIDE_MIN && !app.panes.zoom;
    let mut constraints = Vec::new();
    if !app.panes.zoom {
        constraints.push(Constraint::Length(if show_side_beside {
            left_width
        } else {
            tree_width
        }));
    }
    constraints.push(Constraint::Min(20));
    if show_side_beside && !under_tree {
        constraints.push(Constraint::Length(side_width));
    }
    let columns = Split::horizontal(constraints).split(body);
    hits.laid_out = true;
    let mut i = 0;
    let mut side_area = columns.last().copied().unwrap_or(body);
    if !app.panes.zoom {
        let mut tree_area = columns[0];
        if show_side_beside && under_tree {
            // The tree as tall as its rows (and the "no runs" words), at
            // most half: the panel below it takes the rest.
            let rows = (app.tree.rows.len() as u16).max(6) + 2;
            let tree_height = rows.min(tree_area.height / 2);
            [tree_area, side_area] =
                Split::vertical([Constraint::Length(tree_height), Constraint::Min(1)]).areas(tree_area);
        }
        hits.tree = draw_tree(f, app, tree_area, &theme, now);
        i = 1;
    }
    let centre = columns[i];
    if !show_side_beside && app.panel == Panel::Side && !app.panes.zoom {
        side::draw(f, app, centre, &theme, now, &mut hits);
    } else {
        draw_panes(f, app, centre, &theme, now, &mut hits);
    }
    if show_side_beside {
        side::draw(f, app, side_area, &theme, now, &mut hits);
    }
    overlay::draw_overlay(f, app, area, &theme, &mut hits);
    hits
}

/// A host heading in the tree: `▾ gpu1 up 12ms`, cut to the width.
fn host_row<'a>(app: &App, name: &str, width: usize, theme: &Theme, now: SystemTime) -> Line<'a> {
    let heading = format!("▾ {name}");
    let Some(host) = app.hosts.iter().find(|h| h.name == name) else {
        return Line::styled(heading, theme.dim);
    };
    let state = bars::link_state(host, now);
    let style = match host.link.as_str() {
        "up" => theme.ok,
        "down" => theme.bad,
        "idle" => theme.dim,
        _ => theme.warn,
    };
    let room = width.saturating_sub(heading.chars().count() + 1);
    let state: String = state.chars().take(room).collect();
    Line::from(vec![
        Span::styled(heading, theme.dim),
        Span::raw(" "),
        Span::styled(state, style),
    ])
}

/// The tree's width: its widest run row (indent, glyph, mark, name, the
/// time or outcome column) and the borders, within `TREE_MIN`..`TREE_MAX`
/// and a quarter of the screen.
fn tree_width(app: &App, screen: u16) -> u16 {
    let widest = app
        .tree
        .rows
        .iter()
        .filter(|row| row.subagent.is_none() && row.team.is_none())
        .filter_map(|row| {
            let run = app.run(row.run.as_deref()?)?;
            let indent = if row.depth <= 1 { 1 } else { 2 * (row.depth - 2) + 2 };
            let time = if run.state.is_live() {
                5
            } else {
                run.state.as_str().len()
            };
            Some(indent + 2 + run.name.chars().count() + 1 + time)
        })
        .max()
        .unwrap_or(0);
    let most = TREE_MAX.min(screen / 4).max(TREE_MIN);
    (widest as u16 + 2).clamp(TREE_MIN, most)
}

/// `RUNS`, the filter kept and how many runs are marked: ` RUNS /fix · 2 marked `.
fn tree_title(app: &App) -> String {
    let filter = match app.tree.filter.is_empty() {
        true => String::new(),
        false => format!(" /{}", crate::text::inert(&app.tree.filter)),
    };
    let marked = match app.tree.marked.len() {
        0 => String::new(),
        n => format!(" · {n} marked"),
    };
    format!(" RUNS{filter}{marked} ")
}

/// Draws the tree; where its rows went and the first one shown, when it
/// lists runs.
fn draw_tree(f: &mut Frame, app: &App, area: Rect, theme: &Theme, now: SystemTime) -> Option<([u16; 4], usize)> {
    let focused = app.panel == Panel::Tree;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(if focused { theme.accent } else { theme.dim })
        .title(tree_title(app));
    let inner = block.inner(area);
    f.render_widget(block, area);
    if app.runs.is_empty() {
        f.render_widget(
            Paragraph::new(empty_tree(app, inner, theme, now)).wrap(Wrap { trim: true }),
            inner,
        );
        return None;
    }
    let height = inner.height as usize;
    let top = app.tree.selected.saturating_sub(height.saturating_sub(1));
    let mut lines = Vec::new();
    for (i, row) in app.tree.rows.iter().enumerate().skip(top).take(height) {
        if let Some(name) = &row.routine {
            lines.push(super::routines::line(app, name, inner.width as usize, theme, now));
            continue;
        }
        let Some(id) = &row.run else {
            lines.push(host_row(app, &row.host, inner.width as usize, theme, now));
            continue;
        };
        if let Some(team) = &row.team {
            lines.push(team_row(team, row, inner.width as usize, i == app.tree.selected, theme));
            continue;
        }
        if let Some(agent) = &row.subagent {
            lines.push(subagent_row(
                app,
                id,
                agent,
                row,
                inner.width as usize,
                i == app.tree.selected,
                theme,
            ));
            continue;
        }
        let Some(run) = app.run(id) else { continue };
        lines.push(run_row(
            app,
            run,
            row,
            i == app.tree.selected,
            inner.width as usize,
            theme,
            now,
        ));
    }
    f.render_widget(Paragraph::new(lines), inner);
    Some(([inner.x, inner.y, inner.width, inner.height], top))
}

/// A run's row of the tree: its place under its parent, its glyph and
/// marks, its name cut to the room, its time or end.
fn run_row<'a>(
    app: &App,
    run: &RunRecord,
    row: &super::tree::TreeRow,
    selected: bool,
    width: usize,
    theme: &Theme,
    now: SystemTime,
) -> Line<'a> {
    let indent = if row.depth <= 1 {
        " ".to_string()
    } else {
        format!("{}{}", "  ".repeat(row.depth - 2), if row.last { " └" } else { " ├" })
    };
    // Marked for a broadcast: `*` in the row's first column (always a
    // space otherwise), so the row keeps its width.
    let marked = app.tree.marked.contains(&run.id);
    let indent = match marked {
        true => indent[1..].to_string(),
        false => indent,
    };
    // A prompt held for the user's draft: `✎` before its time.
    let time = if run.waiting.iter().any(|w| w.held) {
        format!("✎{}", duration(run, now))
    } else if run.state.is_live() {
        duration(run, now)
    } else {
        run.state.as_str().replace('_', " ")
    };
    // A run that needs you: marked until it is selected.
    let unseen = app.notices.unseen.contains(&run.id);
    // A turn that ended unseen: `◦` beside an idle glyph.
    let done = !unseen && app.notices.done.contains(&run.id);
    let left = format!(
        "{}{indent}{}{}",
        if marked { "*" } else { "" },
        glyph(run),
        if unseen {
            "•"
        } else if done {
            "◦"
        } else {
            " "
        }
    );
    let room = width.saturating_sub(left.chars().count() + time.chars().count() + 1);
    // A name cut to the room says so.
    let name: String = match run.name.chars().count() > room {
        true => run.name.chars().take(room.saturating_sub(1)).chain(['…']).collect(),
        false => run.name.clone(),
    };
    let pad = width.saturating_sub(left.chars().count() + name.chars().count() + time.chars().count());
    let mut spans = vec![
        match marked {
            true => Span::styled("*", theme.accent),
            false => Span::raw(""),
        },
        Span::raw(indent),
        Span::styled(glyph(run), glyph_style(run, theme)),
        if unseen {
            Span::styled("•", theme.warn.add_modifier(Modifier::BOLD))
        } else if done {
            Span::styled("◦", theme.ok.add_modifier(Modifier::BOLD))
        } else {
            Span::raw(" ")
        },
        Span::raw(name),
        Span::raw(" ".repeat(pad)),
        Span::styled(time, theme.dim),
    ];
    if selected {
        spans = spans.into_iter().map(|s| s.patch_style(theme.selected)).collect();
    }
    Line::from(spans)
}

/// The tree with no runs: the hosts' headings and routines, then how to
/// start one.
fn empty_tree<'a>(app: &App, inner: Rect, theme: &Theme, now: SystemTime) -> Vec<Line<'a>> {
    // The hosts' headings first (their links), when there are hosts.
    let mut lines: Vec<Line> = Vec::new();
    if !app.hosts.is_empty() {
        lines.extend(
            app.tree
                .rows
                .iter()
                .filter(|r| r.run.is_none() && r.routine.is_none())
                .map(|r| host_row(app, &r.host, inner.width as usize, theme, now)),
        );
        lines.push(Line::from(""));
    }
    for row in app.tree.rows.iter().filter_map(|r| r.routine.as_ref()) {
        lines.push(super::routines::line(app, row, inner.width as usize, theme, now));
    }
    if !app.routines.is_empty() {
        lines.push(Line::from(""));
    }
    lines.extend([
        Line::from("no runs yet"),
        Line::from(""),
        Line::styled("n  start one", theme.dim),
        Line::styled("?  all keys", theme.dim),
    ]);
    lines
}

/// A team's heading over its leader: `⚑ review · 3 · ✉ 2`, cut to the row.
fn team_row<'a>(heading: &str, row: &super::tree::TreeRow, width: usize, selected: bool, theme: &Theme) -> Line<'a> {
    let indent = " ".repeat(if row.depth <= 1 { 1 } else { 2 * (row.depth - 1) });
    let text: String = format!("{indent}⚑ {}", crate::text::inert_line(heading))
        .chars()
        .take(width)
        .collect();
    let style = match selected {
        true => theme.accent.patch(theme.selected),
        false => theme.accent,
    };
    Line::from(Span::styled(text, style))
}

/// A subagent under its run: `◇`, its task (or its type), and whether it
/// is still running.
fn subagent_row<'a>(
    app: &App,
    run: &str,
    agent: &str,
    row: &super::tree::TreeRow,
    width: usize,
    selected: bool,
    theme: &Theme,
) -> Line<'a> {
    let sub = app
        .subagents
        .get(run)
        .and_then(|l| l.iter().find(|s| s.agent_id == agent));
    let what = sub
        .and_then(|s| s.description.clone().or_else(|| s.agent_type.clone()))
        .unwrap_or_else(|| "subagent".into());
    let done = sub.is_some_and(|s| s.ended_at.is_some());
    let state = if done { "done" } else { "running" };
    let indent = format!(
        "{}{}",
        "  ".repeat(row.depth.saturating_sub(2)),
        if row.last { " └" } else { " ├" }
    );
    let left = indent.chars().count() + 2;
    let room = width.saturating_sub(left + state.len() + 1);
    let what: String = what.chars().take(room).collect();
    let pad = width.saturating_sub(left + what.chars().count() + state.len());
    let mut spans = vec![
        Span::raw(indent),
        Span::styled("◇", if done { theme.dim } else { theme.ok }),
        Span::raw(" "),
        Span::styled(what, theme.dim),
        Span::raw(" ".repeat(pad)),
        Span::styled(state, theme.dim),
    ];
    if selected {
        spans = spans.into_iter().map(|s| s.patch_style(theme.selected)).collect();
    }
    Line::from(spans)
}

fn pane_areas(area: Rect, n: usize, layout: Layout, zoom: bool) -> Vec<Rect> {
    if zoom || n <= 1 || layout == Layout::Single {
        return vec![area];
    }
    if n == 2 || layout == Layout::Split {
        return Split::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .split(area)
            .to_vec();
    }
    let halves = Split::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).split(area);
    let mut out = Vec::new();
    for half in halves.iter() {
        out.extend(
            Split::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .split(*half)
                .iter(),
        );
    }
    out.truncate(n.max(3));
    out
}

fn draw_panes(f: &mut Frame, app: &App, area: Rect, theme: &Theme, now: SystemTime, hits: &mut Hits) {
    let runs = app.pane_runs();
    if runs.is_empty() {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.dim);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let text = vec![
            Line::from("Nothing selected."),
            Line::from(""),
            Line::styled("n starts a run: a demo agent, your shell, or any command.", theme.dim),
        ];
        f.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), inner);
        return;
    }
    let areas = pane_areas(area, runs.len(), app.panes.layout, app.panes.zoom);
    let selected = app.selected_run().map(|r| r.id.clone());
    for (id, rect) in runs.iter().zip(areas) {
        let Some(run) = app.run(id).cloned() else { continue };
        let is_selected = selected.as_deref() == Some(id.as_str());
        let border = if is_selected && app.mode == Mode::Insert {
            theme.insert
        } else if is_selected && app.panel == Panel::Panes {
            theme.accent
        } else if is_selected {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            theme.dim
        };
        let status = if run.state.is_live() {
            format!("{} · {}", run.state.as_str(), run.status.as_str())
        } else {
            run.state.as_str().to_string()
        };
        // How long it has run: "up" while live, "ran" once ended.
        let age = match (run.state.is_live(), duration(&run, now)) {
            (_, d) if d.is_empty() => String::new(),
            (true, d) => format!(" · up {d}"),
            (false, d) => format!(" · ran {d}"),
        };
        let title = format!(" {} · {} · {status}{age} ", run.harness, run.name);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(if is_selected {
                BorderType::Thick
            } else {
                BorderType::Rounded
            })
            .border_style(border)
            .title(Span::styled(title, border));
        let inner = block.inner(rect);
        f.render_widget(block, rect);
        hits.pane_sizes.push((id.clone(), inner.height, inner.width));
        hits.panes
            .push((id.clone(), [inner.x, inner.y, inner.width, inner.height]));
        if run.state == RunState::Blocked {
            // Nothing ever ran: no screen will come.
            let text = vec![
                Line::styled("This run could not start:", theme.bad),
                Line::from(run.reason.clone().unwrap_or_else(|| "no reason recorded".into())),
                Line::from(""),
                Line::styled(
                    format!("Fix that, then {} starts it again.", app.keymap.key_of(Action::Rerun)),
                    theme.dim,
                ),
            ];
            f.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), inner);
            continue;
        }
        if run.state == RunState::Skipped {
            // A routine's fire that never became a run.
            let text = vec![
                Line::styled(
                    format!("Routine {} did not fire:", run.routine.as_deref().unwrap_or("?")),
                    theme.warn,
                ),
                Line::from(run.reason.clone().unwrap_or_else(|| "no reason recorded".into())),
            ];
            f.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), inner);
            continue;
        }
        let Some(screen) = app.panes.screens.get(id) else {
            f.render_widget(Paragraph::new(Span::styled("connecting…", theme.dim)), inner);
            continue;
        };
        if let Some(copy) = app.panes.copy.as_ref().filter(|c| c.run == *id) {
            hits.copy_view_end = draw_copy(f, copy, inner, theme);
            continue;
        }
        if screen.scroll > 0 {
            draw_scrolled(f, screen, inner, theme);
            continue;
        }
        let view = PaneView {
            screen: &screen.mirror,
            no_color: app.no_color,
        };
        let cursor = view.cursor(inner);
        f.render_widget(view, inner);
        if is_selected
            && app.mode == Mode::Insert
            && app.overlay.shown.is_none()
            && let Some(pos) = cursor
        {
            f.set_cursor_position(pos);
        }
    }
}

/// `a`: one run over the whole terminal, as `agents attach` shows it.
fn draw_fullscreen(f: &mut Frame, app: &App, area: Rect, hits: &mut Hits) {
    let Some(id) = app.selected_run().map(|r| r.id.clone()) else {
        hits.fullscreen_gone = true;
        return;
    };
    hits.panes = vec![(id.clone(), [area.x, area.y, area.width, area.height])];
    if let Some(screen) = app.panes.screens.get(&id) {
        let view = PaneView {
            screen: &screen.mirror,
            no_color: app.no_color,
        };
        let cursor = view.cursor(area);
        f.render_widget(view, area);
        if let Some(pos) = cursor {
            f.set_cursor_position(pos);
        }
    }
    hits.pane_sizes = vec![(id, area.height, area.width)];
}

/// Copy mode: the pane's lines with the cursor and the selection shown;
/// the end of the view, for the next frame.
fn draw_copy(f: &mut Frame, copy: &super::copy::CopyMode, area: Rect, theme: &Theme) -> Option<usize> {
    let h = area.height as usize;
    if h == 0 {
        return None;
    }
    let (top, end) = copy.view(h);
    let selected = Style::default().add_modifier(Modifier::REVERSED);
    let mut lines = Vec::new();
    for (i, text) in copy.lines.iter().enumerate().skip(top).take(h) {
        let mut spans = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        let width = chars.len().max(copy.cursor.1 + 1);
        for col in 0..width.min(area.width as usize) {
            let c = chars.get(col).copied().unwrap_or(' ');
            let style = if (i, col) == copy.cursor {
                theme.insert.add_modifier(Modifier::REVERSED)
            } else if copy.is_selected(i, col) {
                selected
            } else {
                Style::default()
            };
            spans.push(Span::styled(c.to_string(), style));
        }
        lines.push(Line::from(spans));
    }
    f.render_widget(Paragraph::new(lines), area);
    Some(end)
}

/// Scrolled back: history rows then screen rows as plain text, a window of
/// them ending `scroll` lines above the live bottom.
fn draw_scrolled(f: &mut Frame, screen: &super::app::PaneScreen, area: Rect, theme: &Theme) {
    let mut all: Vec<String> = screen.mirror.history().cloned().collect();
    all.extend(screen.mirror.visible_lines());
    let h = area.height as usize;
    let max_scroll = all.len().saturating_sub(h);
    let scroll = screen.scroll.min(max_scroll);
    let end = all.len() - scroll;
    let start = end.saturating_sub(h.saturating_sub(1));
    let unseen = match screen.unseen {
        0 => String::new(),
        n => format!(" · {n} new below"),
    };
    let mut lines: Vec<Line> = vec![Line::styled(
        format!("── scrolled back {scroll} lines{unseen} · PgDn / wheel to return ──"),
        theme.warn,
    )];
    lines.extend(all[start..end].iter().map(|l| Line::raw(l.clone())));
    f.render_widget(Paragraph::new(lines), area);
}
