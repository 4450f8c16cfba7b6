//! Peek and reply (`o`): the selected run's last lines, or the question it
//! waits on, in a small box with a one-line reply, so a run can be looked
//! at and answered without focusing its pane (docs/design.md §9).
//!
//! The lines are the run's screen as this client mirrors it (the cells its
//! emulator sent, shown escaped), never the run's bytes. A reply goes the
//! way the composer's prompt goes (`runs.send`, queued while the run is
//! busy), or, while the run waits on a question, the way `Y`/`N` go
//! (`runs.answer`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout as Split, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use ratatui_textarea::TextArea;

use super::app::{App, Command, Draft, Overlay};
use super::form::Outcome;
use super::view::Theme;
use crate::api::{ActivityStatus, RunRecord};

/// The widest the box gets: a line of an agent's output at 120 columns and
/// more, without covering the whole screen at 200.
const WIDTH: u16 = 100;
/// Output lines shown: half the screen, within these (6 still shows a
/// question with its choices; past 16 it is no longer a peek).
const LINES_MIN: u16 = 6;
const LINES_MAX: u16 = 16;

/// The peek box over one run, with its reply as typed so far.
pub struct Peek {
    pub run: String,
    pub run_name: String,
    /// Minted once, as the composer's: a retry after a lost answer is never
    /// delivered twice.
    pub prompt_id: String,
    pub reply: TextArea<'static>,
    /// Esc was pressed on a reply: the next key says whether to drop it.
    pub discarding: bool,
}

impl Peek {
    pub fn new(run: &RunRecord) -> Peek {
        let mut reply = TextArea::default();
        reply.set_placeholder_text(match run.state.is_live() {
            true => "reply — Enter sends, Esc closes",
            false => "no reply to an ended run — Esc closes",
        });
        Peek {
            run: run.id.clone(),
            run_name: run.name.clone(),
            prompt_id: ulid::Ulid::new().to_string(),
            reply,
            discarding: false,
        }
    }

    pub fn text(&self) -> String {
        self.reply.lines().join(" ")
    }

    /// Pasted text on the one line: a line break in it would send the
    /// reply half typed.
    pub fn paste(&mut self, s: &str) {
        self.discarding = false;
        self.reply.insert_str(s.replace("\r\n", " ").replace(['\r', '\n'], " "));
    }

    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        if std::mem::take(&mut self.discarding) {
            // y or a second Esc drops the reply; anything else keeps it.
            return match key.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Esc => Outcome::Close,
                _ => Outcome::Keep,
            };
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc if self.text().trim().is_empty() => Outcome::Close,
            KeyCode::Esc => {
                self.discarding = true;
                Outcome::Keep
            }
            // One line: Enter sends whatever it is pressed with.
            KeyCode::Enter => Outcome::Submit,
            // The text area's own new-line keys.
            KeyCode::Char('j' | 'm') if ctrl => Outcome::Keep,
            _ => {
                self.reply.input(key);
                Outcome::Keep
            }
        }
    }
}

/// A live run whose reply is an answer: it waits on a permission prompt.
fn waits_for_answer(run: &RunRecord) -> bool {
    run.state.is_live() && run.status == ActivityStatus::NeedsApproval
}

/// What the box shows of a run: its last non-empty lines, at most `max`,
/// and which of them is the question it waits on, if it does.
#[derive(Debug, Default, PartialEq)]
pub struct Sight {
    pub lines: Vec<String>,
    pub question: Option<usize>,
}

/// The run's last lines as its pane's mirror has them. A question stays in
/// view from its first line, whatever it is asked about above it.
pub fn sight(app: &App, run: &RunRecord, max: usize) -> Sight {
    let Some(screen) = app.panes.screens.get(&run.id) else {
        return Sight::default();
    };
    let rows = screen.mirror.visible_lines();
    let asked = match waits_for_answer(run) {
        true => crate::harness::screen::open_question(&rows).map(|(at, _)| at),
        false => None,
    };
    let kept: Vec<(usize, &String)> = rows.iter().enumerate().filter(|(_, l)| !l.trim().is_empty()).collect();
    let mut from = kept.len().saturating_sub(max);
    if let Some(k) = asked.and_then(|q| kept.iter().position(|(at, _)| *at == q)) {
        from = from.min(k);
    }
    let shown = &kept[from..kept.len().min(from + max)];
    Sight {
        question: asked.and_then(|q| shown.iter().position(|(at, _)| *at == q)),
        // The mirror refuses control characters; escaped anyway, as every
        // line the TUI draws from a run.
        lines: shown
            .iter()
            .map(|(_, l)| crate::text::inert_line(l).into_owned())
            .collect(),
    }
}

impl App {
    /// `o`: the peek box over the selected run.
    pub(super) fn open_peek(&mut self) {
        if let Some(run) = self.selected_run() {
            self.overlay.shown = Some(Overlay::Peek(Box::new(Peek::new(run))));
        }
    }

    /// A key in the peek box. An ended run takes no reply: said, and the
    /// box stays to be read.
    pub(super) fn peek_key(&mut self, mut peek: Box<Peek>, key: KeyEvent) -> Option<Overlay> {
        let run = self.run(&peek.run).filter(|r| r.state.is_live()).cloned();
        let refused = || format!("{} has ended: no reply sent", peek.run_name);
        if run.is_none() && !peek.discarding && key.code != KeyCode::Esc {
            self.message = Some(refused());
            return Some(Overlay::Peek(peek));
        }
        match peek.key(key) {
            Outcome::Keep => Some(Overlay::Peek(peek)),
            Outcome::Close => None,
            Outcome::Submit => {
                let text = peek.text();
                let Some(run) = run.filter(|_| !text.trim().is_empty()) else {
                    return Some(Overlay::Peek(peek));
                };
                if waits_for_answer(&run) {
                    let answer = text.trim().to_string();
                    self.message = Some(format!("answered {answer} to {}", run.name));
                    self.commands.push(Command::Answer { run: run.id, answer });
                    return None;
                }
                self.commands.push(Command::Send {
                    run: run.id,
                    text,
                    prompt_id: peek.prompt_id.clone(),
                });
                self.message = Some(format!("sending to {}…", peek.run_name));
                self.overlay.pending_send = Some((peek.prompt_id.clone(), Draft::Peek(peek)));
                None
            }
        }
    }
}

/// The box: a title with the run's state, its lines (the newest just above
/// the reply), what a reply will do, and the reply. As tall as its lines,
/// up to half the screen.
pub(super) fn draw(f: &mut Frame, app: &App, peek: &Peek, area: Rect, theme: &Theme) {
    let most = (area.height / 2).clamp(LINES_MIN, LINES_MAX);
    let run = app.run(&peek.run);
    let seen = run.map(|r| sight(app, r, usize::from(most))).unwrap_or_default();
    let rows = (seen.lines.len() as u16).clamp(1, most);
    let rect = super::overlay::centered(area, WIDTH, rows + 4);
    f.render_widget(Clear, rect);
    let name = crate::text::inert_line(&peek.run_name);
    let state = match run {
        Some(r) if waits_for_answer(r) => "waits for approval".to_string(),
        Some(r) if r.state.is_live() => format!("{} · {}", r.state.as_str(), r.status.as_str()),
        Some(r) => format!("{} · ended", r.state.as_str()),
        None => "gone".into(),
    };
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .title(format!(" peek · {name} · {state} "));
    if peek.discarding {
        block = block.title_bottom(Line::styled(
            " throw the reply away? y / Esc: yes, any other key: no ",
            theme.accent,
        ));
    }
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    let [out, about, reply] =
        Split::vertical([Constraint::Min(0), Constraint::Length(1), Constraint::Length(1)]).areas(inner);
    let lines: Vec<Line> = match seen.lines.is_empty() {
        true => vec![Line::styled("no output yet", theme.dim)],
        false => seen
            .lines
            .into_iter()
            .enumerate()
            .map(|(i, l)| match seen.question == Some(i) {
                true => Line::styled(l, theme.warn),
                false => Line::raw(l),
            })
            .collect(),
    };
    // The newest line sits just above the reply, even when the screen
    // gave fewer rows than were laid out.
    let skip = out.height.saturating_sub(lines.len() as u16);
    let out = Rect::new(out.x, out.y + skip, out.width, out.height - skip);
    f.render_widget(Paragraph::new(lines), out);
    let (said, style) = match run {
        Some(r) if waits_for_answer(r) => (
            "answer: yes picks the first choice · no dismisses · other text is typed".to_string(),
            theme.warn,
        ),
        Some(r) if r.state.is_live() => match r.waiting.iter().find(|w| w.held) {
            // Said before the reply is typed: it will wait behind those.
            Some(held) => (
                format!(
                    "reply: queued behind {} waiting, {}",
                    r.waiting.len(),
                    crate::text::inert_line(&held.why)
                ),
                theme.warn,
            ),
            None => ("reply: sent as a prompt, queued while it is busy".into(), theme.dim),
        },
        Some(_) => (format!("{name} has ended: no reply"), theme.warn),
        None => ("the run is gone: no reply".into(), theme.warn),
    };
    f.render_widget(Paragraph::new(Line::styled(said, style)), about);
    let [mark, field] = Split::horizontal([Constraint::Length(2), Constraint::Min(0)]).areas(reply);
    f.render_widget(Paragraph::new(Line::styled("›", theme.accent)), mark);
    f.render_widget(&peek.reply, field);
}
