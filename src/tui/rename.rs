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
    /// Why the name typed cannot be a run's, said in the box, the name
    /// kept to be mended (the daemon would refuse it after the box closed).
    pub error: Option<String>,
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
            error: None,
        }
    }

    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Outcome::Close,
            KeyCode::Enter => {
                let name = self.input.trim();
                if name.is_empty() || name == self.name {
                    return Outcome::Close;
                }
                match crate::api::bounds::validate_name(name) {
                    Ok(()) => return Outcome::Submit(name.to_string()),
                    Err(e) => self.error = Some(e.message),
                }
                return Outcome::Keep;
            }
            KeyCode::Backspace => {
                self.error = None;
                self.input.pop();
            }
            KeyCode::Char('u') if ctrl => {
                self.error = None;
                self.input.clear();
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() && self.input.chars().count() < MAX_NAME => {
                self.error = None;
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
    let said = match &rename.error {
        Some(error) => Line::styled(error.clone(), theme.bad),
        None => Line::styled(
            format!("Enter rename · Esc close · '{}' keeps finding it", rename.name),
            theme.dim,
        ),
    };
    let lines = vec![Line::from(format!("{}▏", rename.input)), said];
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .title(format!(" rename {} ", rename.name));
    let text = Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: false });
    f.render_widget(text.block(block), rect);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn a_name_no_run_may_wear_is_said_in_the_box_and_kept_to_be_mended() {
        let mut rename = Rename {
            run: "01RUN".into(),
            name: "helper".into(),
            input: "helper".into(),
            error: None,
        };
        for c in " two".chars() {
            rename.key(key(KeyCode::Char(c)));
        }
        assert_eq!(rename.key(key(KeyCode::Enter)), Outcome::Keep);
        assert_eq!(rename.input, "helper two", "what was typed is kept");
        let error = rename.error.clone().expect("why, in the box");
        assert!(error.contains("bad run name 'helper two'"), "{error}");
        // Mended, it goes.
        rename.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(rename.error, None);
        for c in "helper-two".chars() {
            rename.key(key(KeyCode::Char(c)));
        }
        assert_eq!(rename.key(key(KeyCode::Enter)), Outcome::Submit("helper-two".into()));
    }
}
