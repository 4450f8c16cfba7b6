//! Drawing the whole screen from the app state (docs/design.md §9).

use std::time::SystemTime;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout as Split, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};

use super::app::{App, Layout, Mode, Overlay, Panel};
use super::form::Field;
use super::keymap::{Action, Keymap};
use super::pane::PaneView;
use super::side;
use crate::api::{ActivityStatus, RunRecord, RunState};

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;
/// The tree is as wide as its widest row wants, within these bounds (and
/// at most a quarter of the screen): the agent's pane gets the rest.
const TREE_MIN: u16 = 26;
const TREE_MAX: u16 = 40;
const SIDE_WIDTH: u16 = 38;
/// The side panel starts beside the panes from this width: below it the
/// agent's own UI would be cut (Claude Code's first screen wants ~80
/// columns besides the tree); `p` shows or hides it at any width.
pub const SIDE_BESIDE_FROM: u16 = 140;
/// Below this, the side panel is never beside the panes (Tab shows it).
const SIDE_BESIDE_MIN: u16 = 100;

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
    }
}

fn glyph_style(run: &RunRecord, theme: &Theme) -> Style {
    match run.state {
        RunState::Succeeded => theme.ok,
        RunState::Running if matches!(run.status, ActivityStatus::WaitingInput | ActivityStatus::NeedsApproval) => {
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

pub fn draw(f: &mut Frame, app: &mut App) {
    let area = f.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "agents needs at least {MIN_WIDTH}×{MIN_HEIGHT}; this window is {}×{}",
            area.width, area.height
        );
        f.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
        return;
    }
    let theme = Theme::new(app.no_color);
    let now = app.now.unwrap_or_else(SystemTime::now);
    if app.fullscreen {
        draw_fullscreen(f, app, area);
        return;
    }
    let [header, body, status] =
        Split::vertical([Constraint::Length(1), Constraint::Min(1), Constraint::Length(1)]).areas(area);
    draw_header(f, app, header, &theme);
    draw_status(f, app, status, &theme);

    app.side_beside_by_width = area.width >= SIDE_BESIDE_FROM;
    let show_side_beside =
        app.side_shown.unwrap_or(app.side_beside_by_width) && area.width >= SIDE_BESIDE_MIN && !app.zoom;
    let mut constraints = Vec::new();
    if !app.zoom {
        // Kept while a filter is: typing one must not resize every pane's run.
        app.tree_width = match app.filter.is_empty() {
            true => tree_width(app, area.width),
            false => app
                .tree_width
                .clamp(TREE_MIN, TREE_MAX.min(area.width / 4).max(TREE_MIN)),
        };
        constraints.push(Constraint::Length(app.tree_width));
    }
    constraints.push(Constraint::Min(20));
    if show_side_beside {
        constraints.push(Constraint::Length(SIDE_WIDTH.max(area.width / 5)));
    }
    let columns = Split::horizontal(constraints).split(body);
    // Set again by what is drawn this frame.
    app.tree_rect.set(None);
    app.side_rect.set(None);
    let mut i = 0;
    if !app.zoom {
        draw_tree(f, app, columns[0], &theme, now);
        i = 1;
    }
    let centre = columns[i];
    if !show_side_beside && app.panel == Panel::Side && !app.zoom {
        side::draw(f, app, centre, &theme, now);
    } else {
        draw_panes(f, app, centre, &theme, now);
    }
    if show_side_beside {
        side::draw(f, app, columns[i + 1], &theme, now);
    }
    draw_overlay(f, app, area, &theme);
}

/// The runs the tree shows: all of them, or those a kept filter keeps.
fn shown_runs(app: &App) -> Vec<&RunRecord> {
    if app.filter.is_empty() {
        return app.runs.iter().collect();
    }
    let shown: std::collections::HashSet<&str> = app.rows.iter().filter_map(|r| r.run.as_deref()).collect();
    app.runs.iter().filter(|r| shown.contains(r.id.as_str())).collect()
}

fn draw_header(f: &mut Frame, app: &App, area: Rect, theme: &Theme) {
    let runs = shown_runs(app);
    let count = |keep: &dyn Fn(&RunRecord) -> bool| runs.iter().filter(|r| keep(r)).count();
    let live = |s: &[ActivityStatus]| count(&|r| r.state.is_live() && s.contains(&r.status));
    let working = live(&[ActivityStatus::Working]);
    let waiting = live(&[ActivityStatus::WaitingInput, ActivityStatus::NeedsApproval]);
    let idle = live(&[ActivityStatus::Idle, ActivityStatus::Unknown]);
    let succeeded = count(&|r| r.state == RunState::Succeeded);
    let failed = count(&|r| !r.state.is_live() && r.state != RunState::Succeeded);
    // The TUI loads the newest ended runs only (`agents ls --all` has all).
    let more = if app.runs.iter().filter(|r| !r.state.is_live()).count() >= crate::api::ListParams::DEFAULT_LIMIT {
        "+"
    } else {
        ""
    };
    let need = runs.iter().filter(|r| app.notices.unseen.contains(&r.id)).count();
    let need = (need > 0).then(|| format!("· {need} need you ({}) ", app.keymap.key_of(Action::NextUnseen)));
    // In words where they fit beside the links, else in the tree's glyphs.
    let words = format!(
        "── {working} working · {waiting} waiting · {idle} idle · {succeeded}{more} succeeded · {failed} failed "
    );
    // As the links are placed below: 12 spare, `local ●`, then ` name ●` each.
    let links: usize = 12 + 7 + app.hosts.iter().map(|h| h.name.chars().count() + 3).sum::<usize>();
    let wanted = 8 + words.chars().count() + need.as_ref().map_or(0, |n| n.chars().count()) + links;
    let counts = match wanted <= area.width as usize {
        true => words,
        false => format!("── ● {working} · ◉ {waiting} · ○ {idle} · ✓ {succeeded}{more} · ✗ {failed} "),
    };
    let mut spans = vec![Span::styled(" agents ", theme.accent), Span::raw(counts)];
    if let Some(need) = need {
        spans.push(Span::styled(need, theme.warn.add_modifier(Modifier::BOLD)));
    }
    let mut link = if app.connected { "local ●" } else { "local ◌" }.to_string();
    // Each remote host with its link's glyph, while they fit.
    let room = (area.width as usize).saturating_sub(spans.iter().map(|s| s.width()).sum::<usize>() + 12);
    for host in &app.hosts {
        let more = format!(" {} {}", host.name, link_glyph(&host.link));
        if link.chars().count() + more.chars().count() > room {
            break;
        }
        link.push_str(&more);
    }
    let used: usize = spans.iter().map(|s| s.width()).sum::<usize>() + link.chars().count() + 2;
    let fill = (area.width as usize).saturating_sub(used);
    spans.push(Span::styled("─".repeat(fill), theme.dim));
    spans.push(Span::raw(format!(" {link} ")));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// A host's link in one glyph (the header): up, on its way, down, unused.
fn link_glyph(link: &str) -> &'static str {
    match link {
        "up" => "●",
        "connecting" | "reconnecting" => "◌",
        "down" => "✗",
        _ => "○",
    }
}

/// A host's link in words: `up 12ms`, `reconnecting 34s`, `down: <reason>`.
pub fn link_state(host: &crate::api::HostRecord, now: SystemTime) -> String {
    let since = || {
        host.since
            .as_deref()
            .and_then(|s| humantime::parse_rfc3339(s).ok())
            .and_then(|t| now.duration_since(t).ok())
            .map(|d| format!(" {}s", d.as_secs()))
            .unwrap_or_default()
    };
    match host.link.as_str() {
        "up" => match host.latency_ms {
            Some(ms) => format!("up {ms}ms"),
            None => "up".into(),
        },
        "connecting" | "reconnecting" => format!("{}{}", host.link, since()),
        "down" => format!(
            "down: {}",
            host.error
                .as_deref()
                .map(|e| e.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_else(|| "-".into())
        ),
        other => other.to_string(),
    }
}

/// A host heading in the tree: `▾ gpu1 up 12ms`, cut to the width.
fn host_row<'a>(app: &App, name: &str, width: usize, theme: &Theme, now: SystemTime) -> Line<'a> {
    let heading = format!("▾ {name}");
    let Some(host) = app.hosts.iter().find(|h| h.name == name) else {
        return Line::styled(heading, theme.dim);
    };
    let state = link_state(host, now);
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

fn draw_status(f: &mut Frame, app: &App, area: Rect, theme: &Theme) {
    let (mode, style) = match app.mode {
        Mode::Normal if app.copy.is_some() => (" COPY ", theme.warn.add_modifier(Modifier::REVERSED)),
        Mode::Normal => (" NORMAL ", theme.accent.add_modifier(Modifier::REVERSED)),
        Mode::Insert => (" INSERT ", theme.insert.add_modifier(Modifier::REVERSED)),
    };
    let hints = match (app.mode, &app.overlay, app.filtering) {
        (Mode::Normal, _, _) if app.copy.is_some() => {
            "hjkl move · v select · V select lines · y copy · Esc leave".to_string()
        }
        (Mode::Insert, _, _) => {
            let p = app.keymap.prefix.to_string();
            format!("keys go to the run · {p} back to NORMAL · {p} {p} sends {p}")
        }
        (_, Some(Overlay::Compose(_)), _) => "Enter send · Alt-Enter new line · Esc close".into(),
        (_, Some(Overlay::NewRun(_)), _) => {
            "Tab next field · ←/→ harness · Ctrl-U/W erase · Enter start · Esc close".into()
        }
        (_, Some(Overlay::Confirm { .. }), _) => "y confirm · any other key keeps it running".into(),
        (_, Some(Overlay::ConfirmRerun { .. }), _) => "y start another · any other key: no".into(),
        (_, Some(Overlay::Help), _) => "Esc close".into(),
        (_, None, true) => format!("filter: {}▏ Enter keep · Esc clear", app.filter),
        _ => String::new(),
    };
    let mut spans = vec![Span::styled(mode, style), Span::raw(" ")];
    if app.mode == Mode::Normal
        && app.overlay.is_none()
        && let Some(r) = app.selected_run()
        && r.state.is_live()
        && r.status == ActivityStatus::NeedsApproval
    {
        let keys = &app.keymap;
        spans.push(Span::styled(
            format!(
                "{} waits for approval: {} yes · {} no  ",
                r.name,
                keys.key_of(Action::Approve),
                keys.key_of(Action::Deny)
            ),
            theme.warn,
        ));
    }
    if let Some(banner) = &app.banner {
        spans.push(Span::styled(format!("{banner}  "), theme.bad));
    } else if let Some(msg) = &app.message {
        spans.push(Span::styled(format!("{msg}  "), theme.warn));
    }
    let hints = match hints.is_empty() {
        true => {
            let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
            normal_hints(&app.keymap, usize::from(area.width).saturating_sub(used))
        }
        false => hints,
    };
    spans.push(Span::styled(hints, theme.dim));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// NORMAL mode's hints from the configured keys, as many as fit in `room`
/// columns, help and quit always last.
fn normal_hints(keys: &Keymap, room: usize) -> String {
    let layouts = [Action::Single, Action::Split, Action::Grid]
        .map(|a| keys.key_of(a))
        .join(" ");
    let wanted = [
        (keys.key_of(Action::Focus), "focus"),
        (keys.key_of(Action::New), "new"),
        (keys.key_of(Action::Send), "send"),
        (keys.key_of(Action::Cancel), "cancel"),
        (keys.key_of(Action::Rerun), "rerun"),
        (keys.key_of(Action::Attach), "attach"),
        (keys.key_of(Action::Zoom), "zoom"),
        (layouts, "layout"),
        (keys.key_of(Action::Filter), "filter"),
    ];
    let last = format!("{} help  {} quit", keys.key_of(Action::Help), keys.key_of(Action::Quit));
    let mut said = String::new();
    for (key, what) in wanted {
        let hint = format!("{key} {what}  ");
        if said.chars().count() + hint.chars().count() + last.chars().count() > room {
            break;
        }
        said.push_str(&hint);
    }
    said + &last
}

/// The tree's width: its widest run row (indent, glyph, mark, name, the
/// time or outcome column) and the borders, within `TREE_MIN`..`TREE_MAX`
/// and a quarter of the screen.
fn tree_width(app: &App, screen: u16) -> u16 {
    let widest = app
        .rows
        .iter()
        .filter(|row| row.subagent.is_none())
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

fn draw_tree(f: &mut Frame, app: &App, area: Rect, theme: &Theme, now: SystemTime) {
    let focused = app.panel == Panel::Tree;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(if focused { theme.accent } else { theme.dim })
        .title(match app.filter.is_empty() {
            true => " RUNS ".to_string(),
            false => format!(" RUNS /{} ", crate::text::inert(&app.filter)),
        });
    let inner = block.inner(area);
    f.render_widget(block, area);
    if app.runs.is_empty() {
        // The hosts' headings first (their links), when there are hosts.
        let mut lines: Vec<Line> = Vec::new();
        if !app.hosts.is_empty() {
            lines.extend(
                app.rows
                    .iter()
                    .filter(|r| r.run.is_none())
                    .map(|r| host_row(app, &r.host, inner.width as usize, theme, now)),
            );
            lines.push(Line::from(""));
        }
        lines.extend([
            Line::from("no runs yet"),
            Line::from(""),
            Line::styled("n  start one", theme.dim),
            Line::styled("?  all keys", theme.dim),
        ]);
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
        return;
    }
    let height = inner.height as usize;
    let top = app.selected.saturating_sub(height.saturating_sub(1));
    app.tree_rect
        .set(Some(([inner.x, inner.y, inner.width, inner.height], top)));
    let mut lines = Vec::new();
    for (i, row) in app.rows.iter().enumerate().skip(top).take(height) {
        let Some(id) = &row.run else {
            lines.push(host_row(app, &row.host, inner.width as usize, theme, now));
            continue;
        };
        if let Some(agent) = &row.subagent {
            lines.push(subagent_row(
                app,
                id,
                agent,
                row,
                inner.width as usize,
                i == app.selected,
                theme,
            ));
            continue;
        }
        let Some(run) = app.run(id) else { continue };
        let indent = if row.depth <= 1 {
            " ".to_string()
        } else {
            format!("{}{}", "  ".repeat(row.depth - 2), if row.last { " └" } else { " ├" })
        };
        let time = if run.state.is_live() {
            duration(run, now)
        } else {
            run.state.as_str().replace('_', " ")
        };
        let width = inner.width as usize;
        // A run that needs you: marked until it is selected.
        let unseen = app.notices.unseen.contains(&run.id);
        let left = format!("{indent}{}{}", glyph(run), if unseen { "•" } else { " " });
        let room = width.saturating_sub(left.chars().count() + time.chars().count() + 1);
        // A name cut to the room says so.
        let name: String = match run.name.chars().count() > room {
            true => run.name.chars().take(room.saturating_sub(1)).chain(['…']).collect(),
            false => run.name.clone(),
        };
        let pad = width.saturating_sub(left.chars().count() + name.chars().count() + time.chars().count());
        let mut spans = vec![
            Span::raw(indent),
            Span::styled(glyph(run), glyph_style(run, theme)),
            if unseen {
                Span::styled("•", theme.warn.add_modifier(Modifier::BOLD))
            } else {
                Span::raw(" ")
            },
            Span::raw(name),
            Span::raw(" ".repeat(pad)),
            Span::styled(time, theme.dim),
        ];
        if i == app.selected {
            spans = spans.into_iter().map(|s| s.patch_style(theme.selected)).collect();
        }
        lines.push(Line::from(spans));
    }
    f.render_widget(Paragraph::new(lines), inner);
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

fn draw_panes(f: &mut Frame, app: &mut App, area: Rect, theme: &Theme, now: SystemTime) {
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
    let areas = pane_areas(area, runs.len(), app.layout, app.zoom);
    let selected = app.selected_run().map(|r| r.id.clone());
    let mut sizes = Vec::new();
    app.pane_rects.clear();
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
        sizes.push((id.clone(), inner.height, inner.width));
        app.pane_rects
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
        let Some(screen) = app.screens.get(id) else {
            f.render_widget(Paragraph::new(Span::styled("connecting…", theme.dim)), inner);
            continue;
        };
        if let Some(copy) = app.copy.as_ref().filter(|c| c.run == *id) {
            draw_copy(f, copy, inner, theme);
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
            && app.overlay.is_none()
            && let Some(pos) = cursor
        {
            f.set_cursor_position(pos);
        }
    }
    app.panes_laid_out(sizes);
}

/// `a`: one run over the whole terminal, as `agents attach` shows it.
fn draw_fullscreen(f: &mut Frame, app: &mut App, area: Rect) {
    let Some(id) = app.selected_run().map(|r| r.id.clone()) else {
        app.fullscreen = false;
        return;
    };
    app.pane_rects = vec![(id.clone(), [area.x, area.y, area.width, area.height])];
    if let Some(screen) = app.screens.get(&id) {
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
    app.panes_laid_out(vec![(id, area.height, area.width)]);
}

/// Copy mode: the pane's lines with the cursor and the selection shown.
fn draw_copy(f: &mut Frame, copy: &super::copy::CopyMode, area: Rect, theme: &Theme) {
    let h = area.height as usize;
    if h == 0 {
        return;
    }
    // Keep the cursor's line in view, near the bottom when it can be.
    let top = (copy.cursor.0 + 1).saturating_sub(h);
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

/// What each glyph of the tree and the panes means.
const LEGEND: [(&str, &str); 13] = [
    ("●", "working"),
    ("◉", "waits for you: input or an approval"),
    ("○", "idle"),
    ("◍", "status unknown (no recent evidence)"),
    ("◌", "starting"),
    ("✓", "succeeded"),
    ("✗", "failed"),
    ("⊘", "cancelled"),
    ("⧗", "timed out"),
    ("⊗", "could not start (blocked)"),
    ("!", "interrupted: supervisor and agent gone"),
    ("?", "lost: supervisor gone, agent may live"),
    ("◇", "a subagent of the run above"),
];

/// `?`: the keys, and beside them, where there is room, the glyphs.
fn draw_help(f: &mut Frame, app: &App, area: Rect, theme: &Theme) {
    const KEYS_WIDTH: u16 = 64;
    const LEGEND_WIDTH: u16 = 40;
    let with_legend = area.width >= KEYS_WIDTH + LEGEND_WIDTH + 6;
    let width = if with_legend {
        KEYS_WIDTH + LEGEND_WIDTH
    } else {
        KEYS_WIDTH
    };
    let rect = centered(area, width, 25);
    f.render_widget(Clear, rect);
    let lines: Vec<Line> = help_keys(&app.keymap)
        .into_iter()
        .map(|(k, what)| Line::from(vec![Span::styled(format!("{k:>16}  "), theme.accent), Span::raw(what)]))
        .collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .title(if with_legend { " keys · glyphs " } else { " keys " });
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    let [keys, legend] = Split::horizontal([Constraint::Length(KEYS_WIDTH - 2), Constraint::Min(0)]).areas(inner);
    f.render_widget(Paragraph::new(lines), keys);
    if with_legend {
        let lines: Vec<Line> = LEGEND
            .iter()
            .map(|(glyph, what)| Line::from(vec![Span::styled(format!("{glyph}  "), theme.accent), Span::raw(*what)]))
            .collect();
        f.render_widget(Paragraph::new(lines), legend);
    }
}

/// The help overlay's lines: each action with the keys configured for it.
fn help_keys(keys: &Keymap) -> Vec<(String, String)> {
    let of = |actions: &[Action], between: &str| {
        actions
            .iter()
            .map(|a| keys.keys_of(*a))
            .collect::<Vec<_>>()
            .join(between)
    };
    let prefix = keys.prefix.to_string();
    let said = |k: String, what: &str| (k, what.to_string());
    vec![
        said(
            format!(
                "{} {} {}",
                of(&[Action::Down, Action::Up], " "),
                keys.key_of(Action::Top),
                keys.key_of(Action::Bottom)
            ),
            "move in the run tree; first, last",
        ),
        said(of(&[Action::Focus], ""), "type into the run (INSERT)"),
        said(prefix.clone(), "back to NORMAL from INSERT"),
        said(of(&[Action::New], ""), "new run"),
        said(of(&[Action::Send], ""), "send a prompt (queued while busy)"),
        said(
            of(&[Action::Cancel, Action::ForceCancel], " / "),
            "cancel / force-cancel (asks first)",
        ),
        said(
            of(&[Action::Approve, Action::Deny], " / "),
            "answer a run waiting for approval",
        ),
        said(of(&[Action::NextUnseen], ""), "next run that needs you (•)"),
        said(of(&[Action::Rerun], ""), "resume its conversation, or run it again"),
        said(
            of(&[Action::Attach], ""),
            &format!("attach full-screen ({prefix} returns)"),
        ),
        said(of(&[Action::Zoom], ""), "zoom the pane"),
        said(of(&[Action::ToggleSide], ""), "side panel beside the panes, or not"),
        said(
            of(&[Action::Single, Action::Split, Action::Grid], " "),
            "one pane, side by side, grid",
        ),
        said(of(&[Action::NextPanel], ""), "next panel: tree, panes, side"),
        said(of(&[Action::PrevTab, Action::NextTab], " "), "previous / next side tab"),
        said(
            format!("{} wheel", of(&[Action::ScrollUp, Action::ScrollDown], " ")),
            "scroll back",
        ),
        said(of(&[Action::Copy], ""), "copy mode: select, y copies (OSC 52)"),
        said("Shift-drag".into(), "select text with the terminal's own mouse"),
        said(of(&[Action::Filter], ""), "filter runs"),
        said(of(&[Action::Quit], ""), "quit (runs keep going)"),
    ]
}

/// A yes-or-no question in a box as wide as its words (within the screen),
/// wrapped when they do not fit on one line.
fn draw_question(f: &mut Frame, area: Rect, title: &str, question: &str, theme: &Theme) {
    let words = question.chars().count() as u16;
    let width = (words + 4).clamp(40, area.width.saturating_sub(4).max(40));
    let lines = words.div_ceil(width.saturating_sub(4).max(1));
    let rect = centered(area, width, lines + 4);
    f.render_widget(Clear, rect);
    let text = vec![
        Line::from(question.to_string()),
        Line::styled("y yes · any other key no", theme.dim),
    ];
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .title(title.to_string());
    f.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }).block(block), rect);
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width.saturating_sub(4));
    let h = height.min(area.height.saturating_sub(2));
    Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h)
}

fn draw_overlay(f: &mut Frame, app: &App, area: Rect, theme: &Theme) {
    let Some(overlay) = &app.overlay else { return };
    match overlay {
        Overlay::Help => draw_help(f, app, area, theme),
        Overlay::Confirm { name, force, .. } => {
            let how = if *force { "Force-cancel (SIGKILL)" } else { "Cancel" };
            let question = format!("{how} {name} and the runs it owns?");
            draw_question(f, area, " cancel ", &question, theme);
        }
        Overlay::ConfirmRerun { name, .. } => {
            let question = format!("{name} is still running. Start another one?");
            draw_question(f, area, " run again ", &question, theme);
        }
        Overlay::Compose(c) => {
            let rect = centered(area, 72, 10);
            f.render_widget(Clear, rect);
            let block = Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .title(format!(" send to {} ", c.run_name));
            let block = match c.discarding {
                true => block.title_bottom(Line::styled(
                    " throw the draft away? y / Esc: yes, any other key: no ",
                    theme.accent,
                )),
                false => block,
            };
            let inner = block.inner(rect);
            f.render_widget(block, rect);
            f.render_widget(&c.text, inner);
        }
        Overlay::NewRun(form) => {
            let rect = centered(area, 72, 13);
            f.render_widget(Clear, rect);
            let mut lines = Vec::new();
            for field in Field::ALL {
                let active = form.field == field;
                let label = Span::styled(
                    format!("{:>8} ", field.label()),
                    if active { theme.accent } else { theme.dim },
                );
                let mut value = form.value(field);
                if active && field != Field::Harness {
                    value.push('▏');
                }
                let value = if active {
                    Span::raw(value).bold()
                } else {
                    Span::raw(value)
                };
                lines.push(Line::from(vec![label, value]));
            }
            lines.push(Line::from(""));
            match &form.error {
                Some(e) => lines.push(Line::styled(e.clone(), theme.bad)),
                None => lines.push(Line::styled("Enter start · Tab next · Esc close", theme.dim)),
            }
            let block = Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .title(" new run ");
            f.render_widget(Paragraph::new(lines).block(block), rect);
        }
    }
}
