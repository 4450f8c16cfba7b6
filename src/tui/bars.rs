//! The header and status bars: counts of runs by what they do, the hosts'
//! links, the mode, the message of the moment and the keys that apply.

use std::time::SystemTime;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{App, Mode, Overlay};
use super::keymap::{Action, Keymap};
use super::view::Theme;
use crate::api::{ActivityStatus, RunRecord, RunState};

/// The runs the tree shows: all of them, or those a kept filter keeps.
fn shown_runs(app: &App) -> Vec<&RunRecord> {
    if app.tree.filter.is_empty() {
        return app.runs.iter().collect();
    }
    let shown: std::collections::HashSet<&str> = app.tree.rows.iter().filter_map(|r| r.run.as_deref()).collect();
    app.runs.iter().filter(|r| shown.contains(r.id.as_str())).collect()
}

pub(super) fn draw_header(f: &mut Frame, app: &App, area: Rect, theme: &Theme) {
    let runs = shown_runs(app);
    let count = |keep: &dyn Fn(&RunRecord) -> bool| runs.iter().filter(|r| keep(r)).count();
    // Pending runs (a start under way, a resume queued behind its run)
    // have no status yet: counted as themselves, never as idle.
    let live =
        |s: &[ActivityStatus]| count(&|r| r.state.is_live() && r.state != RunState::Pending && s.contains(&r.status));
    let (pending_words, pending_glyph) = match count(&|r| r.state == RunState::Pending) {
        0 => (String::new(), String::new()),
        n => (format!("· {n} pending "), format!("· ◌ {n} ")),
    };
    let working = live(&[ActivityStatus::Working]);
    let stalled = live(&[ActivityStatus::Stalled]);
    let (stalled_words, stalled_glyph) = match stalled {
        0 => (String::new(), String::new()),
        n => (format!("· {n} stalled "), format!("· ◐ {n} ")),
    };
    let waiting = live(&[ActivityStatus::WaitingInput, ActivityStatus::NeedsApproval]);
    let idle = live(&[ActivityStatus::Idle, ActivityStatus::Unknown]);
    let succeeded = count(&|r| r.state == RunState::Succeeded);
    let failed = count(&|r| r.state == RunState::Failed);
    // Every other way a run ended, each as itself, where there are any
    // (a cancelled run did not fail; a skipped fire tried nothing).
    let others: Vec<(usize, &str, &str)> = [
        (RunState::Cancelled, "⊘", "cancelled"),
        (RunState::TimedOut, "⧗", "timed out"),
        (RunState::Blocked, "⊗", "blocked"),
        (RunState::Interrupted, "!", "interrupted"),
        (RunState::Lost, "?", "lost"),
    ]
    .into_iter()
    .map(|(state, glyph, word)| (count(&|r| r.state == state), glyph, word))
    .filter(|(n, _, _)| *n > 0)
    .collect();
    let other_words: String = others.iter().map(|(n, _, w)| format!("· {n} {w} ")).collect();
    let other_glyphs: String = others.iter().map(|(n, g, _)| format!("· {g} {n} ")).collect();
    // The TUI loads the newest ended runs only (`agents ls --all` has all).
    let more = if app.runs.iter().filter(|r| !r.state.is_live()).count() >= crate::api::ListParams::DEFAULT_LIMIT {
        "+"
    } else {
        ""
    };
    let need = runs.iter().filter(|r| app.notices.unseen.contains(&r.id)).count();
    let need = (need > 0).then(|| format!("· {need} need you ({}) ", app.keymap.key_of(Action::NextUnseen)));
    let done = runs.iter().filter(|r| app.notices.done.contains(&r.id)).count();
    let need = match (need, done) {
        (need, 0) => need,
        (Some(need), done) => Some(format!("{need}· {done} done, unseen ")),
        (None, done) => Some(format!("· {done} done, unseen ")),
    };
    // In words where they fit beside the links, else in the tree's glyphs.
    let words = format!(
        "── {working} working {stalled_words}· {waiting} waiting · {idle} idle {pending_words}· {succeeded}{more} succeeded · {failed} failed {other_words}"
    );
    // As the links are placed below: 12 spare, `local ●`, then ` name ●` each.
    let links: usize = 12 + 7 + app.hosts.iter().map(|h| h.name.chars().count() + 3).sum::<usize>();
    let wanted = 8 + words.chars().count() + need.as_ref().map_or(0, |n| n.chars().count()) + links;
    let counts = match wanted <= area.width as usize {
        true => words,
        false => format!(
            "── ● {working} {stalled_glyph}· ◉ {waiting} · ○ {idle} {pending_glyph}· ✓ {succeeded}{more} · ✗ {failed} {other_glyphs}"
        ),
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

pub(super) fn draw_status(f: &mut Frame, app: &App, area: Rect, theme: &Theme) {
    let (mode, style) = match app.mode {
        Mode::Normal if app.panes.copy.is_some() => (" COPY ", theme.warn.add_modifier(Modifier::REVERSED)),
        Mode::Normal => (" NORMAL ", theme.accent.add_modifier(Modifier::REVERSED)),
        Mode::Insert => (" INSERT ", theme.insert.add_modifier(Modifier::REVERSED)),
    };
    let question = app.overlay.shown.as_ref().and_then(super::overlay::question_keys);
    let hints = match (app.mode, &app.overlay.shown, app.tree.filtering) {
        (Mode::Normal, _, _) if app.panes.copy.is_some() => {
            "hjkl move · v select · V select lines · y copy · Esc leave".to_string()
        }
        (Mode::Insert, _, _) => {
            let p = app.keymap.prefix.to_string();
            format!("keys go to the run · {p} back to NORMAL · {p} {p} sends {p}")
        }
        (_, Some(Overlay::Compose(c)), _) if !c.targets.is_empty() => {
            "Enter send to each (its own prompt id) · Alt-Enter new line · Esc close".into()
        }
        (_, Some(Overlay::Compose(_)), _) => "Enter send · Alt-Enter new line · Esc close".into(),
        (_, Some(Overlay::NewRun(_)), _) => {
            "Tab next field · ←/→ choose · Ctrl-U/W erase · Enter start · Esc close".into()
        }
        (_, Some(_), _) if question.is_some() => question.unwrap_or_default().into(),
        (_, Some(Overlay::Help), _) => "Esc close".into(),
        (_, Some(Overlay::Rename(_)), _) => "Enter rename · Ctrl-U erase · Esc close".into(),
        (_, Some(Overlay::Peek(p)), _) => match app.run(&p.run) {
            Some(r) if r.state.is_live() && r.status == ActivityStatus::NeedsApproval => {
                "Enter answer · Esc close".into()
            }
            Some(r) if r.state.is_live() => "Enter send without focusing · Esc close".into(),
            _ => "Esc close".into(),
        },
        (_, None, true) => format!("filter: {}▏ Enter keep · Esc clear", app.tree.filter),
        _ => String::new(),
    };
    let mut spans = vec![Span::styled(mode, style), Span::raw(" ")];
    if app.mode == Mode::Normal
        && app.overlay.shown.is_none()
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
    // A prompt held for the user's draft (or typing) in the selected run,
    // in any mode: the draft is theirs to send or erase.
    if app.overlay.shown.is_none()
        && let Some(r) = app.selected_run()
        && let Some(held) = r.waiting.iter().find(|w| w.held)
    {
        spans.push(Span::styled(
            format!(
                "{} prompt{} waiting, {}  ",
                r.waiting.len(),
                if r.waiting.len() == 1 { "" } else { "s" },
                crate::text::inert_line(&held.why)
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
            // With runs marked, what the marks do comes first.
            let keys = &app.keymap;
            let marks = match app.tree.marked.len() {
                _ if !app.tree.filter.is_empty() => format!("{} clears the filter  ", keys.key_of(Action::ClearMarks)),
                0 => String::new(),
                n => format!(
                    "{n} marked · {} sends to each · {} clears  ",
                    keys.key_of(Action::Send),
                    keys.key_of(Action::ClearMarks)
                ),
            };
            let used: usize = spans.iter().map(|s| s.content.chars().count()).sum::<usize>() + marks.chars().count();
            marks + &normal_hints(keys, usize::from(area.width).saturating_sub(used))
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
        (keys.key_of(Action::Peek), "peek"),
        (keys.key_of(Action::ToggleSide), "panel"),
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
