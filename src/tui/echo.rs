//! The echo frame: a key's echo redraws the focused pane alone.
//!
//! A full frame lays out and renders everything (tree, bars, every pane)
//! and then compares all of it with what the terminal shows. While another
//! visible pane floods, an echo drawn that way cost as much as any frame and
//! carried the flood's changes with it, once per key (`cargo bench --bench
//! tui_latency`). What the last frame put on the terminal is kept here; an
//! echo frame copies it, renders the focused pane over its own rectangle and
//! writes only what differs: the echo, and nothing the other panes did
//! meanwhile, which the next regular frame draws.

use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use ratatui::{CompletedFrame, Terminal};

use super::app::{App, Mode};
use super::pane::PaneView;
use crate::api::RunState;

/// What the terminal shows, as of the last frame drawn.
#[derive(Default)]
pub struct Shown {
    buffer: Buffer,
}

impl Shown {
    /// Keeps what a full frame put on the terminal.
    pub fn keep(&mut self, frame: &CompletedFrame) {
        self.buffer.clone_from(frame.buffer);
    }

    /// Draws the focused pane alone over what is shown. False, drawing
    /// nothing, where a full frame would draw that pane's rectangle in some
    /// other way (an overlay over it, copy mode, scrolled back, a run that
    /// never started) or the terminal changed size since the last frame.
    pub fn draw_focused<B: Backend>(&mut self, term: &mut Terminal<B>, app: &App) -> Result<bool, B::Error> {
        let Some(rect) = focused_pane(app) else {
            return Ok(false);
        };
        let Some(screen) = app.selected_run().and_then(|r| app.screens.get(&r.id)) else {
            return Ok(false);
        };
        let current = term.current_buffer_mut();
        if current.area != self.buffer.area || !self.buffer.area.contains(rect.as_position()) {
            return Ok(false);
        }
        let rect = rect.intersection(self.buffer.area);
        // As a full frame has it before the pane is drawn: blank cells.
        for y in rect.top()..rect.bottom() {
            for x in rect.left()..rect.right() {
                self.buffer[(x, y)].reset();
            }
        }
        let view = PaneView {
            screen: &screen.mirror,
            no_color: app.no_color,
        };
        let cursor = view.cursor(rect);
        view.render(rect, &mut self.buffer);
        current.content.clone_from(&self.buffer.content);
        term.apply_buffer_with_cursor(cursor)?;
        Ok(true)
    }
}

/// The focused pane's inside, where the last full frame drew its run's
/// screen as it would draw it now.
fn focused_pane(app: &App) -> Option<Rect> {
    if app.mode != Mode::Insert || app.overlay.is_some() {
        return None;
    }
    let run = app.selected_run()?;
    if matches!(run.state, RunState::Blocked | RunState::Skipped) || app.copy.as_ref().is_some_and(|c| c.run == run.id)
    {
        return None;
    }
    if app.screens.get(&run.id)?.scroll > 0 {
        return None;
    }
    app.pane_rects
        .iter()
        .find(|(id, _)| *id == run.id)
        .map(|(_, [x, y, w, h])| Rect::new(*x, *y, *w, *h))
}
