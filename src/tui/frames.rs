//! When the TUI draws, and how much of the screen.
//!
//! Nothing is drawn until something changed. A change other than pane
//! output (a key, a run's state, the clock) is a full frame, at most
//! `FRAME` apart. Pane output alone is a pane frame (`echo`): the panes
//! whose screens changed, at most `OUTPUT_FRAME` apart while the focused
//! pane moves and `BACKGROUND_FRAME` while only the others do. The focused
//! pane's echo of a key is drawn at once, alone.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::Backend;

use super::app::App;
use super::echo::Shown;
use super::view;

/// At most ~60 frames a second (docs/design.md §9).
const FRAME: Duration = Duration::from_millis(16);
/// Output alone (no key, no other change) in the focused pane is drawn at
/// most this often: four panes of 10 Hz spinners out of step asked for ~40
/// frames a second (`cargo bench --bench spinners`).
const OUTPUT_FRAME: Duration = Duration::from_millis(50);
/// Output in the other panes, while the focused one is still, at most this
/// often: 10 frames a second, as fast as an agent's spinner turns.
const BACKGROUND_FRAME: Duration = Duration::from_millis(100);
/// After a key goes to the focused pane, that pane's next output (its echo,
/// most often) is drawn at once instead of at the next frame: waiting out the
/// frame cap added ~9 ms to every echo (`cargo bench --bench tui_latency`,
/// docs/design.md §10 asks for under 10 ms at p99). One early frame per key,
/// of that pane alone where it can be.
const ECHO_WINDOW: Duration = Duration::from_millis(100);

/// After a key goes to the focused pane, a frame of the other panes alone
/// waits up to this long for its echo, so the echo is not drawn, and parsed
/// by the user's terminal, behind a frame of a flooding pane (the tail of
/// key → echo read from outside, `cargo bench --bench echo_outside`). Never
/// longer than one more `BACKGROUND_FRAME`, however fast the keys come.
const ECHO_FIRST: Duration = Duration::from_millis(20);

/// The TUI's drawing schedule, and what the terminal shows.
pub struct Frames {
    /// Something besides pane output changed: a full frame, at `FRAME`.
    urgent: bool,
    /// Shown runs whose screens changed since they were last drawn.
    moved: HashSet<String>,
    /// The focused pane's output changed: `OUTPUT_FRAME`, not
    /// `BACKGROUND_FRAME`.
    focused_moved: bool,
    shown: Shown,
    last_draw: Instant,
    /// When a key last went to the focused pane.
    typed_at: Option<Instant>,
    /// Output came from the focused pane since that key.
    echoed: bool,
}

impl Default for Frames {
    fn default() -> Self {
        Frames {
            urgent: true,
            moved: HashSet::new(),
            focused_moved: false,
            shown: Shown::default(),
            last_draw: Instant::now() - OUTPUT_FRAME,
            typed_at: None,
            echoed: false,
        }
    }
}

impl Frames {
    /// Something other than pane output changed.
    pub fn changed(&mut self) {
        self.urgent = true;
    }

    /// The terminal changed size and was cleared.
    pub fn resized(&mut self) {
        self.shown.forget();
        self.changed();
    }

    /// A key went to the focused pane.
    pub fn typed(&mut self) {
        self.typed_at = Some(Instant::now());
    }

    /// The screen of a run a pane shows changed; `in_focus`: the focused
    /// pane's.
    pub fn screen_moved(&mut self, run: &str, in_focus: bool) {
        if !self.moved.contains(run) {
            self.moved.insert(run.to_string());
        }
        self.focused_moved |= in_focus;
        self.echoed |= in_focus && self.typed_at.is_some_and(|at| at.elapsed() < ECHO_WINDOW);
    }

    /// Something changed since the last frame.
    fn dirty(&self) -> bool {
        self.urgent || !self.moved.is_empty()
    }

    /// When the next frame is due, if one is.
    pub fn due_at(&self) -> Option<Instant> {
        self.dirty()
            .then(|| (self.last_draw + self.cap()).max(self.echo_first().unwrap_or(self.last_draw)))
    }

    /// Until when a frame of the other panes alone waits for the focused
    /// pane's echo, if it does now.
    fn echo_first(&self) -> Option<Instant> {
        let typed = self
            .typed_at
            .filter(|_| !self.urgent && !self.focused_moved && !self.echoed)?;
        let until = (typed + ECHO_FIRST).min(self.last_draw + 2 * BACKGROUND_FRAME);
        (Instant::now() < until).then_some(until)
    }

    fn cap(&self) -> Duration {
        match (self.urgent, self.focused_moved) {
            (true, _) => FRAME,
            (false, true) => OUTPUT_FRAME,
            (false, false) => BACKGROUND_FRAME,
        }
    }

    /// Draws what is due, if anything. True after a full frame, which lays
    /// panes out and so may resize their runs.
    pub fn draw<B: Backend>(&mut self, term: &mut Terminal<B>, app: &mut App) -> Result<bool, B::Error> {
        let due = self.last_draw.elapsed() >= self.cap() && self.echo_first().is_none();
        if !self.dirty() || !(due || self.echoed) {
            return Ok(false);
        }
        if !self.urgent && self.pane_frame(term, app, due)? {
            return Ok(false);
        }
        self.shown.sync(term);
        self.shown.keep(&term.draw(|f| view::draw(f, app))?);
        self.last_draw = Instant::now();
        self.urgent = false;
        self.moved.clear();
        self.drew_focused();
        Ok(true)
    }

    /// A pane frame: every pane that moved once the cap is out, else the
    /// focused pane's echo alone. False where it takes a full frame.
    fn pane_frame<B: Backend>(&mut self, term: &mut Terminal<B>, app: &App, due: bool) -> Result<bool, B::Error> {
        if due {
            if !self.shown.draw_panes(term, app, &self.moved)? {
                return Ok(false);
            }
            self.moved.clear();
            self.last_draw = Instant::now();
        } else {
            let Some(focused) = app.selected_run().map(|r| r.id.clone()) else {
                return Ok(false);
            };
            if !self.shown.draw_panes(term, app, [&focused])? {
                return Ok(false);
            }
            self.moved.remove(&focused);
        }
        self.drew_focused();
        Ok(true)
    }

    /// The focused pane is drawn as it is now.
    fn drew_focused(&mut self) {
        self.focused_moved = false;
        if self.echoed {
            self.typed_at = None;
            self.echoed = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::api::{ActivityStatus, RunRecord, RunState};
    use crate::protocol::screen::{Cell, ScreenUpdate, glyph_of};
    use crate::tui::app::{Overlay, Update};

    fn run(id: &str) -> RunRecord {
        let mut r: RunRecord = serde_json::from_value(serde_json::json!({
            "id": id, "name": id, "harness": "demo", "host": "local", "cwd": "/", "command": [],
            "state": "running", "status": "working", "root_id": id, "detached": false,
            "created_at": "2026-12-02T00:00:00Z", "rows": 24, "cols": 80, "output_bytes": 0,
        }))
        .expect("a run record");
        (r.state, r.status) = (RunState::Running, ActivityStatus::Working);
        r
    }

    /// The screen of `id`'s pane now shows `bytes`; told to `frames` as
    /// the event loop tells it.
    fn prints(app: &mut App, frames: &mut Frames, id: &str, bytes: &[u8]) {
        let [_, _, w, h] = app.pane_rects().iter().find(|(r, _)| r == id).expect("a pane").1;
        let row: Vec<Cell> = String::from_utf8_lossy(bytes)
            .chars()
            .map(|c| Cell {
                glyph: glyph_of(&c.to_string()),
                ..Cell::default()
            })
            .collect();
        // A whole screen of that one line, as a subscription's first update.
        let update = ScreenUpdate {
            seq: 1,
            offset: bytes.len() as u64,
            rows: h,
            cols: w,
            full: true,
            lines: vec![(0, row)],
            ..ScreenUpdate::default()
        };
        let focused = app.selected_run().is_some_and(|r| r.id == id);
        frames.screen_moved(id, focused);
        app.update(Update::Screen {
            run: id.into(),
            update: Box::new(update),
        });
    }

    /// Two runs side by side, the first focused in INSERT, drawn once.
    fn split() -> (App, Terminal<TestBackend>, Frames) {
        let mut app = App::new();
        app.connected = true;
        app.update(Update::Runs(vec![run("01A"), run("01B")]));
        app.handle(Event::Key(KeyEvent::new(KeyCode::Char('2'), KeyModifiers::NONE)));
        let mut term = Terminal::new(TestBackend::new(120, 30)).unwrap();
        let mut frames = Frames::default();
        assert!(frames.draw(&mut term, &mut app).unwrap(), "the first frame is full");
        app.mode = crate::tui::app::Mode::Insert;
        (app, term, frames)
    }

    /// The cap is out: the next frame is due now.
    fn cap_out(frames: &mut Frames) {
        frames.last_draw = Instant::now() - Duration::from_secs(1);
    }

    #[test]
    fn output_alone_waits_for_its_cap_then_is_a_pane_frame_and_a_change_a_full_one() {
        let (mut app, mut term, mut frames) = split();
        prints(&mut app, &mut frames, "01B", b"spinning");
        assert_eq!(frames.due_at(), Some(frames.last_draw + BACKGROUND_FRAME));
        assert!(!frames.draw(&mut term, &mut app).unwrap());
        assert!(frames.dirty() && !frames.shown.behind, "nothing drawn before the cap");
        cap_out(&mut frames);
        assert!(!frames.draw(&mut term, &mut app).unwrap(), "not a full frame");
        assert!(frames.shown.behind && !frames.dirty() && frames.moved.is_empty());
        assert_eq!(frames.due_at(), None, "nothing more to draw");
        frames.changed();
        cap_out(&mut frames);
        assert!(frames.draw(&mut term, &mut app).unwrap(), "a change is a full frame");
        assert!(!frames.shown.behind);
    }

    #[test]
    fn an_echo_is_drawn_at_once_alone_and_the_other_pane_waits_for_its_cap() {
        let (mut app, mut term, mut frames) = split();
        prints(&mut app, &mut frames, "01B", b"flooding");
        frames.typed();
        prints(&mut app, &mut frames, "01A", b"$ typed");
        assert!(frames.echoed);
        assert!(
            !frames.draw(&mut term, &mut app).unwrap(),
            "a pane frame, before any cap"
        );
        assert!(frames.shown.behind && !frames.echoed);
        assert_eq!(frames.moved.iter().collect::<Vec<_>>(), ["01B"]);
        assert_eq!(frames.due_at(), Some(frames.last_draw + BACKGROUND_FRAME));
    }

    #[test]
    fn after_a_key_the_other_pane_waits_for_the_echo_a_moment_at_most() {
        let (mut app, mut term, mut frames) = split();
        prints(&mut app, &mut frames, "01B", b"flooding");
        frames.last_draw = Instant::now() - BACKGROUND_FRAME;
        frames.typed();
        // Its cap is out, but the key's echo goes first.
        assert!(!frames.draw(&mut term, &mut app).unwrap());
        assert!(!frames.shown.behind, "nothing drawn while the echo is awaited");
        let until = frames.due_at().unwrap();
        assert!(until > Instant::now() && until <= Instant::now() + ECHO_FIRST);
        prints(&mut app, &mut frames, "01A", b"$ typed");
        assert!(!frames.draw(&mut term, &mut app).unwrap(), "a pane frame");
        assert!(
            frames.shown.behind && frames.moved.is_empty(),
            "the echo and the flood together"
        );
        // No echo comes: the other pane waits no longer than ECHO_FIRST.
        prints(&mut app, &mut frames, "01B", b"more");
        frames.last_draw = Instant::now() - BACKGROUND_FRAME;
        frames.typed_at = Some(Instant::now() - ECHO_FIRST);
        assert_eq!(frames.due_at(), Some(frames.last_draw + BACKGROUND_FRAME));
        assert!(!frames.draw(&mut term, &mut app).unwrap());
        assert!(frames.moved.is_empty(), "drawn once the wait is over");
    }

    #[test]
    fn output_under_an_overlay_is_a_full_frame() {
        let (mut app, mut term, mut frames) = split();
        app.overlay.shown = Some(Overlay::Help);
        prints(&mut app, &mut frames, "01B", b"spinning");
        cap_out(&mut frames);
        assert!(frames.draw(&mut term, &mut app).unwrap());
        assert!(!frames.dirty() && frames.moved.is_empty());
    }
}
