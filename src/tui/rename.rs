//! `R`: a new name for the selected run, typed in a one-line box over the
//! panes (`runs.rename`; the daemon keeps the old name finding the run and
//! refuses a name another live run wears).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use super::view::Theme;
use crate::api::RunRecord;

/// The most a run's name may hold (`api::bounds::validate_name`): typing
/// stops there rather than be refused after Enter.
const MAX_NAME: usize = 64;

/// The box over one run: its name now, and the new one as typed so far
/// (it starts as the name now, to be edited).
pub struct Rename {
    pub run: String,
    pub name: String,
    pub input: String,
}

/// What a key did to the box.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Keep,
    Close,
    /// Enter on a new name: ask the daemon for it.
    Submit(String),
}

impl Rename {
    pub fn new(run: &RunRecord) -> Rename {
        Rename {
            run: run.id.clone(),
            name: run.name.clone(),
            input: run.name.clone(),
        }
    }

    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Outcome::Close,
            KeyCode::Enter => {
                let name = self.input.trim();
                return match name.is_empty() || name == self.name {
                    true => Outcome::Close,
                    false => Outcome::Submit(name.to_string()),
                };
            }
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::Char('u') if ctrl => self.input.clear(),
            KeyCode::Char(c) if !ctrl && !c.is_control() && self.input.chars().count() < MAX_NAME => {
                self.input.push(c);
            }
            _ => {}
        }
        Outcome::Keep
    }
}

pub(super) fn draw(f: &mut Frame, rename: &Rename, area: Rect, theme: &Theme) {
    let rect = super::overlay::centered(area, 72, 5);
    f.render_widget(Clear, rect);
    let lines = vec![
        Line::from(format!("{}▏", rename.input)),
        Line::styled(
            format!("Enter rename · Esc close · '{}' keeps finding it", rename.name),
            theme.dim,
        ),
    ];
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .title(format!(" rename {} ", rename.name));
    f.render_widget(Paragraph::new(lines).block(block), rect);
}
