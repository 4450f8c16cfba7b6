//! The echo frame: a key's echo redraws the focused pane alone.
//!
//! A full frame lays out and renders everything (tree, bars, every pane)
//! and then compares all of it with what the terminal shows. While another
//! visible pane floods, an echo drawn that way cost as much as any frame and
//! carried the flood's changes with it, once per key (`cargo bench --bench
//! tui_latency`). What the terminal shows is kept here; an echo frame
//! renders the focused pane alone and writes the rows of it that differ:
//! the echo, and nothing the other panes did meanwhile, which the next full
//! frame draws.

use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use ratatui::{CompletedFrame, Terminal};

use super::app::{App, Mode, PaneScreen};
use super::pane::PaneView;
use crate::api::RunState;

/// What the terminal shows, as of the last frame drawn, full or echo.
#[derive(Default)]
pub struct Shown {
    buffer: Buffer,
    /// An echo frame was drawn since the last full one: ratatui's own
    /// record of the terminal, which it diffs a full frame against, is
    /// behind it.
    behind: bool,
}

impl Shown {
    /// Keeps what a full frame put on the terminal.
    pub fn keep(&mut self, frame: &CompletedFrame) {
        self.buffer.clone_from(frame.buffer);
        self.behind = false;
    }

    /// The terminal was resized and cleared: nothing is known to be shown
    /// until the next full frame.
    pub fn forget(&mut self) {
        *self = Shown::default();
    }

    /// Before a full frame: ratatui learns what the echo frames drew, so
    /// its diff writes what changed since, no more and no less.
    pub fn sync<B: Backend>(&mut self, term: &mut Terminal<B>) {
        let current = term.current_buffer_mut();
        if self.behind && current.area == self.buffer.area {
            current.content.clone_from(&self.buffer.content);
            term.swap_buffers();
        }
        self.behind = false;
    }

    /// Draws the focused pane alone over what is shown: its rows that
    /// changed, nothing else. False, drawing nothing, where a full frame
    /// would draw that pane's rectangle in some other way (an overlay over
    /// it, copy mode, scrolled back, a run that never started) or the
    /// terminal changed size since the last frame.
    pub fn draw_focused<B: Backend>(&mut self, term: &mut Terminal<B>, app: &App) -> Result<bool, B::Error> {
        let Some((rect, screen)) = focused_pane(app) else {
            return Ok(false);
        };
        let area = self.buffer.area;
        if term.current_buffer_mut().area != area || !area.contains(rect.as_position()) {
            return Ok(false);
        }
        let rect = rect.intersection(area);
        // Blank cells first, as in a full frame.
        let mut fresh = Buffer::empty(rect);
        let view = PaneView {
            screen: &screen.mirror,
            no_color: app.no_color,
        };
        let cursor = view.cursor(rect);
        view.render(rect, &mut fresh);
        let rows = changed_rows(&self.buffer, &fresh);
        term.backend_mut()
            .draw(rows.iter().flat_map(|(was, now)| was.diff_iter(now)))?;
        match cursor {
            None => term.hide_cursor()?,
            Some(at) => {
                term.show_cursor()?;
                term.set_cursor_position(at)?;
            }
        }
        term.backend_mut().flush()?;
        for (_, now) in &rows {
            let start = self.buffer.index_of(now.area.x, now.area.y);
            self.buffer.content[start..start + now.content.len()].clone_from_slice(&now.content);
        }
        self.behind = true;
        Ok(true)
    }
}

/// The rows of `fresh` that differ from `shown`, each as a one-row buffer
/// before and after.
fn changed_rows(shown: &Buffer, fresh: &Buffer) -> Vec<(Buffer, Buffer)> {
    let rect = fresh.area;
    let width = rect.width as usize;
    let mut rows = Vec::new();
    for (i, y) in (rect.top()..rect.bottom()).enumerate() {
        let now = &fresh.content[i * width..(i + 1) * width];
        let start = shown.index_of(rect.x, y);
        let was = &shown.content[start..start + width];
        if now != was {
            let area = Rect::new(rect.x, y, rect.width, 1);
            rows.push((
                Buffer {
                    area,
                    content: was.to_vec(),
                },
                Buffer {
                    area,
                    content: now.to_vec(),
                },
            ));
        }
    }
    rows
}

/// The focused pane's inside, where the last full frame drew its run's
/// screen as it would draw it now, and that screen.
fn focused_pane(app: &App) -> Option<(Rect, &PaneScreen)> {
    if app.mode != Mode::Insert || app.overlay.is_some() {
        return None;
    }
    let run = app.selected_run()?;
    if matches!(run.state, RunState::Blocked | RunState::Skipped) || app.copy.as_ref().is_some_and(|c| c.run == run.id)
    {
        return None;
    }
    let screen = app.screens.get(&run.id).filter(|s| s.scroll == 0)?;
    app.pane_rects
        .iter()
        .find(|(id, _)| *id == run.id)
        .map(|(_, [x, y, w, h])| (Rect::new(*x, *y, *w, *h), screen))
}
