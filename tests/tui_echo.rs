//! Pane frames (`tui::echo`): pane output alone redraws the panes whose
//! screens changed, each as a full frame would draw it, the cursor where a
//! full frame puts it, and nothing else.

mod common;

use agents::api::{ActivityStatus, RunState};
use agents::tui::app::{App, Layout, Mode, Overlay, Panel, Update};
use agents::tui::copy::CopyMode;
use agents::tui::echo::Shown;
use agents::tui::view;
use common::app::{run, screen_of};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};

const WIDTH: u16 = 120;
const HEIGHT: u16 = 30;

/// Two runs side by side, the first focused in INSERT, each pane showing
/// a screen of its pane's size; drawn once in full.
fn split() -> (App, Terminal<Seen>, Shown) {
    let mut app = App::new();
    app.set_no_color(true);
    app.set_connected(true);
    app.update(Update::Runs(vec![
        run("01A", "echo", RunState::Running, ActivityStatus::Idle, 60),
        run("01B", "flood", RunState::Running, ActivityStatus::Working, 60),
    ]));
    // As the user chooses it: the layout subscribes to both runs' screens.
    app.handle(Event::Key(KeyEvent::new(KeyCode::Char('2'), KeyModifiers::NONE)));
    assert_eq!(app.layout(), Layout::Split);
    let mut term = Terminal::new(Seen::new(WIDTH, HEIGHT)).unwrap();
    term.draw(|f| view::draw(f, &mut app)).unwrap();
    for (id, [_, _, w, h]) in app.pane_rects().to_vec() {
        app.update(screen_of(&id, h, w, b"$ "));
    }
    app.set_mode(Mode::Insert);
    app.take_commands();
    let mut shown = Shown::default();
    let done = term.draw(|f| view::draw(f, &mut app)).unwrap();
    shown.keep(&done);
    (app, term, shown)
}

fn row_text(buf: &Buffer, rect: [u16; 4]) -> String {
    let [x, y, w, _] = rect;
    (x..x + w).map(|x| buf[(x, y)].symbol().to_string()).collect()
}

fn rect_of(app: &App, id: &str) -> [u16; 4] {
    app.pane_rects().iter().find(|(r, _)| r == id).expect("a pane").1
}

/// The run's screen now shows `bytes`.
fn prints(app: &mut App, id: &str, bytes: &[u8]) {
    let [_, _, w, h] = rect_of(app, id);
    app.update(screen_of(id, h, w, bytes));
}

fn pane_frame(shown: &mut Shown, term: &mut Terminal<Seen>, app: &App, runs: &[&str]) -> bool {
    let runs: Vec<String> = runs.iter().map(|r| r.to_string()).collect();
    shown.draw_panes(term, app, &runs).unwrap()
}

/// What a full frame of this moment draws, and where it leaves the cursor
/// (None: hidden).
fn full_frame(app: &mut App) -> (Buffer, Option<Position>) {
    let mut full = Terminal::new(Seen::new(WIDTH, HEIGHT)).unwrap();
    full.draw(|f| view::draw(f, app)).unwrap();
    let cursor = cursor_of(&mut full);
    (full.backend().buffer().clone(), cursor)
}

/// The cursor the terminal shows (None: hidden).
fn cursor_of(term: &mut Terminal<Seen>) -> Option<Position> {
    let at = term.backend_mut().get_cursor_position().unwrap();
    term.backend().cursor_shown.then_some(at)
}

/// A test terminal that says whether its cursor is shown.
struct Seen {
    inner: TestBackend,
    cursor_shown: bool,
}

impl Seen {
    fn new(width: u16, height: u16) -> Seen {
        Seen {
            inner: TestBackend::new(width, height),
            cursor_shown: false,
        }
    }

    fn buffer(&self) -> &Buffer {
        self.inner.buffer()
    }
}

impl Backend for Seen {
    type Error = <TestBackend as Backend>::Error;

    fn draw<'a, I: Iterator<Item = (u16, u16, &'a Cell)>>(&mut self, content: I) -> Result<(), Self::Error> {
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.cursor_shown = false;
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.cursor_shown = true;
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(position)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(clear_type)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()
    }
}

/// Every cell of the pane with its style, not only its text.
fn assert_pane_as_full(drawn: &Buffer, want: &Buffer, rect: [u16; 4]) {
    let [x, y, w, h] = rect;
    for row in y..y + h {
        let cells = |buf: &Buffer| (x..x + w).map(|x| buf[(x, row)].clone()).collect::<Vec<_>>();
        assert_eq!(cells(drawn), cells(want), "row {row}");
    }
}

#[test]
fn an_echo_frame_draws_the_focused_pane_as_a_full_frame_does_and_nothing_else() {
    let (mut app, mut term, mut shown) = split();
    assert_eq!(app.selected_run().unwrap().id, "01A");
    prints(&mut app, "01A", b"$ typed");
    prints(&mut app, "01B", b"flooded");
    assert!(pane_frame(&mut shown, &mut term, &app, &["01A"]));
    let drawn = term.backend().buffer().clone();
    let cursor = cursor_of(&mut term);

    let (want, want_cursor) = full_frame(&mut app);
    let focused = rect_of(&app, "01A");
    assert_pane_as_full(&drawn, &want, focused);
    assert!(row_text(&drawn, focused).starts_with("$ typed"));
    assert!(want_cursor.is_some(), "INSERT shows the program's cursor");
    assert_eq!(cursor, want_cursor);
    let other = rect_of(&app, "01B");
    assert!(row_text(&want, other).starts_with("flooded"));
    assert!(
        row_text(&drawn, other).starts_with("$ "),
        "the other pane waits for its own frame"
    );
}

/// Outside INSERT, the pane that moved is drawn and the cursor stays
/// hidden, as a full frame leaves it; every other cell is as it was.
#[test]
fn a_pane_frame_outside_insert_draws_the_moved_pane_and_hides_the_cursor() {
    let (mut app, mut term, mut shown) = split();
    app.set_mode(Mode::Normal);
    let before = full_frame(&mut app).0;
    prints(&mut app, "01B", b"spinner \xe2\x9c\xbb working");
    assert!(pane_frame(&mut shown, &mut term, &app, &["01B"]));
    let drawn = term.backend().buffer().clone();
    let (want, want_cursor) = full_frame(&mut app);
    assert_pane_as_full(&drawn, &want, rect_of(&app, "01B"));
    assert!(row_text(&drawn, rect_of(&app, "01B")).starts_with("spinner ✻ working"));
    assert_eq!(want_cursor, None);
    assert_eq!(cursor_of(&mut term), None);
    assert_pane_as_full(&drawn, &before, rect_of(&app, "01A"));
}

#[test]
fn two_panes_that_moved_are_both_drawn_in_one_frame() {
    let (mut app, mut term, mut shown) = split();
    prints(&mut app, "01A", b"$ one");
    prints(&mut app, "01B", b"two");
    assert!(pane_frame(&mut shown, &mut term, &app, &["01A", "01B"]));
    let drawn = term.backend().buffer().clone();
    let (want, want_cursor) = full_frame(&mut app);
    assert_pane_as_full(&drawn, &want, rect_of(&app, "01A"));
    assert_pane_as_full(&drawn, &want, rect_of(&app, "01B"));
    assert_eq!(cursor_of(&mut term), want_cursor);
}

#[test]
fn no_pane_frame_under_an_overlay_in_copy_mode_scrolled_back_or_after_a_resize() {
    let (mut app, mut term, mut shown) = split();
    app.set_overlay(Some(Overlay::Help));
    assert!(
        !pane_frame(&mut shown, &mut term, &app, &["01A"]),
        "help over the panes"
    );
    app.set_overlay(None);
    app.set_copy(Some(CopyMode::new("01B", vec!["line".into()])));
    assert!(!pane_frame(&mut shown, &mut term, &app, &["01B"]), "01B in copy mode");
    assert!(pane_frame(&mut shown, &mut term, &app, &["01A"]), "01A is not");
    app.set_copy(None);
    app.screen_mut("01B").unwrap().scroll = 3;
    assert!(!pane_frame(&mut shown, &mut term, &app, &["01B"]), "scrolled back");
    app.screen_mut("01B").unwrap().scroll = 0;
    assert!(pane_frame(&mut shown, &mut term, &app, &["01B"]));
    term.resize(Rect::new(0, 0, WIDTH + 10, HEIGHT)).unwrap();
    assert!(
        !pane_frame(&mut shown, &mut term, &app, &["01A"]),
        "the terminal changed size"
    );
}

/// A terminal too small to draw panes shows no pane, so a pane frame
/// draws none over its message.
#[test]
fn a_pane_frame_draws_nothing_where_the_last_frame_showed_no_panes() {
    let mut app = split().0;
    let mut small = Terminal::new(Seen::new(30, 8)).unwrap();
    let mut shown = Shown::default();
    shown.keep(&small.draw(|f| view::draw(f, &mut app)).unwrap());
    let before = small.backend().buffer().clone();
    let [_, _, w, h] = [0, 0, 50, 20];
    app.update(screen_of("01A", h, w, b"XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"));
    assert!(shown.draw_panes(&mut small, &app, &["01A".to_string()]).unwrap());
    assert_eq!(small.backend().buffer(), &before);
    assert_eq!(cursor_of(&mut small), None);
}

/// Where the side panel takes the panes' column (not beside them: hidden
/// with `p`, or a terminal under 100 columns), the panes' runs still move, and no pane frame draws them over
/// the panel, nor puts their cursor there.
#[test]
fn no_pane_is_drawn_over_the_side_panel_in_the_panes_column() {
    let (mut app, mut term, mut shown) = split();
    let [_, _, w, h] = rect_of(&app, "01B");
    app.set_panel(Panel::Side);
    app.set_side_shown(Some(false));
    shown.keep(&term.draw(|f| view::draw(f, &mut app)).unwrap());
    let before = term.backend().buffer().clone();
    assert!(app.pane_rects().is_empty(), "{:?}", app.pane_rects());
    app.update(screen_of("01B", h, w, b"over the panel"));
    assert!(pane_frame(&mut shown, &mut term, &app, &["01A", "01B"]));
    assert_eq!(term.backend().buffer(), &before);
    assert_eq!(cursor_of(&mut term), None, "as a full frame leaves it");
    assert_eq!(full_frame(&mut app).1, None);
}

/// What a pane frame drew and a later screen took back (the line erased)
/// is written over by the next full frame: ratatui learns of the pane
/// frame before it diffs.
#[test]
fn a_full_frame_after_a_pane_frame_writes_what_changed_since() {
    let (mut app, mut term, mut shown) = split();
    prints(&mut app, "01A", b"$ typed");
    assert!(pane_frame(&mut shown, &mut term, &app, &["01A"]));
    assert!(row_text(term.backend().buffer(), rect_of(&app, "01A")).starts_with("$ typed"));
    prints(&mut app, "01A", b"$ ");
    shown.sync(&mut term);
    let done = term.draw(|f| view::draw(f, &mut app)).unwrap();
    shown.keep(&done);
    let row = row_text(term.backend().buffer(), rect_of(&app, "01A"));
    assert_eq!(row.trim_end(), "$", "the erased echo is gone from the terminal");
}
