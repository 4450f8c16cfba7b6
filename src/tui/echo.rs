//! Pane frames: a frame where only pane output changed redraws those panes
//! alone.
//!
//! A full frame lays out and renders everything (tree, bars, every pane)
//! and then compares all of it with what the terminal shows. While another
//! visible pane floods, an echo drawn that way cost as much as any frame and
//! carried the flood's changes with it, once per key (`cargo bench --bench
//! tui_latency`); fifty spinners cost a whole frame ten times a second
//! (`cargo bench --bench spinners`). What the terminal shows is kept here. A
//! pane frame renders the panes whose screens changed and writes the rows
//! of them that differ. An echo is a pane frame of the focused pane alone,
//! drawn at once; what the other panes did meanwhile waits for their next
//! frame.

use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::widgets::Widget;
use ratatui::{CompletedFrame, Terminal};

use super::app::{App, Mode, PaneScreen};
use super::pane::PaneView;
use crate::api::RunState;

/// What the terminal shows, as of the last frame drawn, full or of panes.
#[derive(Default)]
pub struct Shown {
    buffer: Buffer,
    /// A pane frame was drawn since the last full one: ratatui's own
    /// record of the terminal, which it diffs a full frame against, is
    /// behind it.
    pub(super) behind: bool,
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

    /// Before a full frame: ratatui learns what the pane frames drew, so
    /// its diff writes what changed since, no more and no less.
    pub fn sync<B: Backend>(&mut self, term: &mut Terminal<B>) {
        let current = term.current_buffer_mut();
        if self.behind && current.area == self.buffer.area {
            current.content.clone_from(&self.buffer.content);
            term.swap_buffers();
        }
        self.behind = false;
    }

    /// Draws the panes of `runs` over what is shown: their rows that
    /// changed, nothing else, and the cursor where a full frame puts it.
    /// A run no pane shows is passed over. False, drawing nothing, where a
    /// full frame would draw one of those panes in some other way (an
    /// overlay, copy mode, scrolled back, a run that never started) or the
    /// terminal changed size since the last full frame.
    pub fn draw_panes<'r, B: Backend>(
        &mut self,
        term: &mut Terminal<B>,
        app: &App,
        runs: impl IntoIterator<Item = &'r String>,
    ) -> Result<bool, B::Error> {
        let area = self.buffer.area;
        if app.overlay.shown.is_some() || area.is_empty() || term.current_buffer_mut().area != area {
            return Ok(false);
        }
        let mut panes = Vec::new();
        for run in runs {
            let Some(rect) = pane_rect(app, run) else { continue };
            let Some(screen) = plain_screen(app, run) else {
                return Ok(false);
            };
            if !area.contains(rect.as_position()) {
                return Ok(false);
            }
            panes.push((rect.intersection(area), screen));
        }
        let mut rows = Vec::new();
        for (rect, screen) in panes {
            // Blank cells first, as in a full frame.
            let mut fresh = Buffer::empty(rect);
            PaneView {
                screen: &screen.mirror,
                no_color: app.no_color,
            }
            .render(rect, &mut fresh);
            rows.extend(changed_rows(&self.buffer, &fresh));
        }
        term.backend_mut()
            .draw(rows.iter().flat_map(|(was, now)| was.diff_iter(now)))?;
        match frame_cursor(app) {
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

/// The inside of the pane the last full frame laid out for `run`.
fn pane_rect(app: &App, run: &str) -> Option<Rect> {
    app.pane_rects()
        .iter()
        .find(|(id, _)| id == run)
        .map(|(_, [x, y, w, h])| Rect::new(*x, *y, *w, *h))
}

/// The screen of `run`, where a full frame draws it as it is: not in copy
/// mode, not scrolled back, and a run that started.
fn plain_screen<'a>(app: &'a App, run: &str) -> Option<&'a PaneScreen> {
    let started = app
        .run(run)
        .is_some_and(|r| !matches!(r.state, RunState::Blocked | RunState::Skipped));
    let copying = app.panes.copy.as_ref().is_some_and(|c| c.run == run);
    app.panes
        .screens
        .get(run)
        .filter(|s| started && !copying && s.scroll == 0)
}

/// Where a full frame puts the cursor: on the focused pane's, over the
/// whole terminal or in INSERT with nothing over the panes, where that pane
/// shows its screen and the program shows its cursor. Hidden otherwise.
fn frame_cursor(app: &App) -> Option<Position> {
    let run = app.selected_run()?;
    let screen = if app.panes.fullscreen {
        app.panes.screens.get(&run.id)?
    } else if app.mode == Mode::Insert && app.overlay.shown.is_none() {
        plain_screen(app, &run.id)?
    } else {
        return None;
    };
    let view = PaneView {
        screen: &screen.mirror,
        no_color: app.no_color,
    };
    view.cursor(pane_rect(app, &run.id)?)
}
