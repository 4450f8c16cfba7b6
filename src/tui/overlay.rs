//! Overlays over the panes: the keys and glyphs (`?`), questions that
//! need a yes, the composer and the new-run form; the peek box draws
//! itself (`peek.rs`).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout as Split, Rect};
use ratatui::style::Stylize;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};

use super::app::{App, Overlay};
use super::form::Field;
use super::keymap::{Action, Keymap};
use super::view::Theme;

/// The overlay over the screen (help, a form, the composer, a question),
/// and what outlives it.
#[derive(Default)]
pub struct Overlays {
    pub(super) shown: Option<super::app::Overlay>,
    /// Lines the help overlay is scrolled down (where it does not fit).
    pub(super) help_scroll: u16,
    /// The prompt's id and its draft while the daemon has not confirmed it.
    pub(super) pending_send: Option<(String, super::app::Draft)>,
}

/// What each glyph of the tree and the panes means.
const LEGEND: [(&str, &str); 20] = [
    ("●", "working"),
    ("◐", "stalled: no change for minutes"),
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
    ("↷", "skipped: a routine's fire did not run"),
    ("◷", "a routine, with its next fire"),
    ("◇", "a subagent of the run above"),
    ("*", "marked: a prompt sent goes to each"),
    ("•", "needs you: not seen since it asked"),
    ("◦", "a turn ended, not seen since"),
    ("✎", "a prompt held for your draft in it"),
];

/// `?`: the keys, and beside them, where there is room, the glyphs (under
/// them where there is not). An entry too long for its column wraps under
/// its text; what the box cannot hold scrolls (`App::help_scroll`).
/// The keys and glyphs; how far they scroll goes into `hits`.
fn draw_help(f: &mut Frame, app: &App, area: Rect, theme: &Theme, hits: &mut super::hits::Hits) {
    let keys: Vec<(Span<'static>, Span<'static>)> = help_keys(&app.keymap)
        .into_iter()
        .map(|(k, what)| (Span::styled(format!("{k:>16}  "), theme.accent), Span::raw(what)))
        .collect();
    let legend: Vec<(Span<'static>, Span<'static>)> = LEGEND
        .iter()
        .map(|(glyph, what)| (Span::styled(format!("{glyph}  "), theme.accent), Span::raw(*what)))
        .collect();
    let widest = |entries: &[(Span, Span)]| entries.iter().map(|(k, w)| k.width() + w.width()).max().unwrap_or(0);
    let (keys_w, legend_w) = (widest(&keys) as u16, widest(&legend) as u16);
    // `centered` keeps two columns clear on each side; two more are the borders.
    let room = area.width.saturating_sub(6);
    let beside = keys_w + 2 + legend_w <= room;
    let lines = |entries: &[(Span<'static>, Span<'static>)], width: u16| -> Vec<Line<'static>> {
        entries
            .iter()
            .flat_map(|(k, what)| super::wrap::hung(k.clone(), what.clone(), usize::from(width)))
            .collect()
    };
    let columns: Vec<(Vec<Line>, u16)> = match beside {
        true => vec![(lines(&keys, keys_w), keys_w + 2), (lines(&legend, legend_w), legend_w)],
        false => {
            let width = keys_w.max(legend_w).min(room);
            let mut all = lines(&keys, width);
            all.push(Line::default());
            all.push(Line::styled("glyphs", theme.dim));
            all.extend(lines(&legend, width));
            vec![(all, width)]
        }
    };
    let tallest = columns.iter().map(|(l, _)| l.len()).max().unwrap_or(0) as u16;
    let width: u16 = columns.iter().map(|(_, w)| *w).sum();
    let rect = centered(area, width + 2, tallest + 2);
    f.render_widget(Clear, rect);
    let shown = rect.height.saturating_sub(2);
    let most = tallest.saturating_sub(shown);
    hits.help_scroll_max = Some(most);
    let scroll = app.overlay.help_scroll.min(most);
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .title(if beside { " keys · glyphs " } else { " keys " });
    if most > 0 {
        let below = most - scroll;
        let said = match below {
            0 => " k ↑ for the lines above ".to_string(),
            n => format!(" j ↓ {n} more lines "),
        };
        block = block.title_bottom(Line::styled(said, theme.dim));
    }
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    let widths: Vec<Constraint> = columns.iter().map(|(_, w)| Constraint::Length(*w)).collect();
    for ((text, _), at) in columns.into_iter().zip(Split::horizontal(widths).split(inner).iter()) {
        f.render_widget(Paragraph::new(text).scroll((scroll, 0)), *at);
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
        said(
            format!("{} / {prefix}", of(&[Action::Focus], "")),
            "type into the run (INSERT) / back to NORMAL",
        ),
        said(of(&[Action::New], ""), "new run"),
        said(of(&[Action::Send], ""), "send a prompt (queued while busy)"),
        said(of(&[Action::Peek], ""), "peek and reply without focusing"),
        said(
            of(&[Action::Mark, Action::ClearMarks], " / "),
            &format!("mark runs for {} to send to each / clear", keys.key_of(Action::Send)),
        ),
        said(
            of(&[Action::Cancel, Action::ForceCancel, Action::Delete], " / "),
            "cancel / force-cancel / delete (asks)",
        ),
        said(
            of(&[Action::Approve, Action::Deny], " / "),
            "answer a run waiting for approval",
        ),
        said(of(&[Action::NextUnseen], ""), "next run that needs you (•)"),
        said(of(&[Action::Rerun], ""), "resume its conversation, or run it again"),
        said(of(&[Action::Rename], ""), "rename (the old name still finds it)"),
        said(
            of(&[Action::Attach], ""),
            &format!("attach full-screen ({prefix} returns)"),
        ),
        said(
            of(&[Action::Zoom, Action::ToggleSide], " / "),
            "zoom the pane / side panel beside it",
        ),
        said(
            format!(
                "{} {} {}",
                of(&[Action::Single, Action::Split, Action::Grid], " "),
                keys.key_of(Action::PrevPane),
                keys.key_of(Action::NextPane)
            ),
            "one pane, side by side, grid; pane focus",
        ),
        said(
            of(&[Action::NextPanel, Action::PrevTab, Action::NextTab], " "),
            "next panel (tree, panes, side); side tabs",
        ),
        said(
            of(
                &[Action::PrevHunk, Action::NextHunk, Action::Comment, Action::Merge],
                " ",
            ),
            "Changes: hunks, comment on one, merge (asks)",
        ),
        said(
            format!("{} wheel", of(&[Action::ScrollUp, Action::ScrollDown], " ")),
            "scroll back",
        ),
        said(of(&[Action::Copy], ""), "copy mode: select, y copies (OSC 52)"),
        said("Shift-drag".into(), "select text with the terminal's own mouse"),
        said(
            of(&[Action::Filter, Action::Quit], " / "),
            "filter runs / quit (runs keep going)",
        ),
    ]
}

/// A yes-or-no question in a box as wide as its words (within the screen),
/// wrapped when they do not fit on one line, with the keys that answer it
/// under it (the box as tall as the wrapped lines, so they are never cut).
fn draw_question(f: &mut Frame, area: Rect, title: &str, question: &str, keys: &str, theme: &Theme) {
    let words = question.chars().count().max(keys.chars().count()) as u16;
    let width = (words + 4).clamp(40, area.width.saturating_sub(4).max(40));
    let text = Paragraph::new(vec![
        Line::from(question.to_string()),
        Line::styled(keys.to_string(), theme.dim),
    ])
    .wrap(Wrap { trim: true });
    let lines = u16::try_from(text.line_count(width.saturating_sub(2))).unwrap_or(u16::MAX);
    let rect = centered(area, width, lines.saturating_add(2));
    f.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .title(title.to_string());
    f.render_widget(text.block(block), rect);
}

/// What answers each question, in its box and the status line.
pub(super) fn question_keys(overlay: &Overlay) -> Option<&'static str> {
    Some(match overlay {
        Overlay::Confirm { .. } => "y cancels it · any other key keeps it running",
        Overlay::ConfirmDelete { .. } => "y deletes · any other key keeps them",
        Overlay::ConfirmRerun { session: None, .. } => "y starts another · any other key: no",
        Overlay::ConfirmRerun { .. } => "y queues it · any other key: no",
        Overlay::ConfirmMerge { .. } => "y merges · s squashes · any other key: no",
        _ => return None,
    })
}

pub(super) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width.saturating_sub(4));
    let h = height.min(area.height.saturating_sub(2));
    Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h)
}

pub(super) fn draw_overlay(f: &mut Frame, app: &App, area: Rect, theme: &Theme, hits: &mut super::hits::Hits) {
    let Some(overlay) = &app.overlay.shown else { return };
    let keys = question_keys(overlay).unwrap_or_default();
    match overlay {
        Overlay::Help => draw_help(f, app, area, theme, hits),
        Overlay::Confirm { name, force, .. } => {
            let how = if *force { "Force-cancel (SIGKILL)" } else { "Cancel" };
            let question = format!("{how} {name} and the runs it owns?");
            draw_question(f, area, " cancel ", &question, keys, theme);
        }
        Overlay::ConfirmDelete { names, .. } => {
            let question = super::delete::question(names);
            draw_question(f, area, " delete ", &question, keys, theme);
        }
        Overlay::ConfirmRerun {
            name, session: None, ..
        } => {
            let question = format!("{name} is still running. Start another one?");
            draw_question(f, area, " run again ", &question, keys, theme);
        }
        Overlay::ConfirmRerun { name, .. } => {
            let question = format!("{name} is still in its conversation. Resume it in a new run once {name} ends?");
            draw_question(f, area, " queue a resume ", &question, keys, theme);
        }
        Overlay::ConfirmMerge { branch, into, .. } => {
            let question = format!("Merge {branch} into {into}? s squashes it into one commit.");
            draw_question(f, area, " merge ", &question, keys, theme);
        }
        Overlay::Compose(c) => {
            let rect = centered(area, 72, 10);
            f.render_widget(Clear, rect);
            let block = Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .title(match c.targets.is_empty() {
                    true => format!(" send to {} ", c.run_name),
                    false => super::broadcast::title(app, &c.targets),
                });
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
        Overlay::Peek(peek) => super::peek::draw(f, app, peek, area, theme),
        Overlay::Rename(rename) => super::rename::draw(f, rename, area, theme),
        Overlay::NewRun(form) => {
            let rect = centered(area, 72, Field::ALL.len() as u16 + 4);
            f.render_widget(Clear, rect);
            let mut lines = Vec::new();
            for field in Field::ALL {
                let active = form.field == field;
                let label = Span::styled(
                    format!("{:>8} ", field.label()),
                    if active { theme.accent } else { theme.dim },
                );
                let mut value = form.value(field);
                if active && !field.is_choice() {
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
                None => lines.push(Line::styled(
                    "Enter start · Tab next · ←/→ choose · Esc close",
                    theme.dim,
                )),
            }
            let block = Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .title(" new run ");
            f.render_widget(Paragraph::new(lines).block(block), rect);
        }
    }
}
