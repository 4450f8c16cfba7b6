//! The echo frame (`tui::echo`): a key's echo redraws the focused pane
//! alone, as a full frame would draw it, and leaves the other panes for the
//! next full frame.

mod common;

use agents::api::{ActivityStatus, RunState};
use agents::tui::app::{App, Layout, Mode, Overlay, Update};
use agents::tui::echo::Shown;
use agents::tui::view;
use common::app::{run, screen_of};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::{Backend, TestBackend};
use ratatui::buffer::Buffer;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 30;

/// Two runs side by side, the first focused in INSERT, each pane showing
/// a screen of its pane's size; drawn once in full.
fn split() -> (App, Terminal<TestBackend>, Shown) {
    let mut app = App::new();
    app.no_color = true;
    app.connected = true;
    app.update(Update::Runs(vec![
        run("01A", "echo", RunState::Running, ActivityStatus::Idle, 60),
        run("01B", "flood", RunState::Running, ActivityStatus::Working, 60),
    ]));
    // As the user chooses it: the layout subscribes to both runs' screens.
    app.handle(Event::Key(KeyEvent::new(KeyCode::Char('2'), KeyModifiers::NONE)));
    assert_eq!(app.layout, Layout::Split);
    let mut term = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    term.draw(|f| view::draw(f, &mut app)).unwrap();
    for (id, [_, _, w, h]) in app.pane_rects.clone() {
        app.update(screen_of(&id, h, w, b"$ "));
    }
    app.mode = Mode::Insert;
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
    app.pane_rects.iter().find(|(r, _)| r == id).expect("a pane").1
}

#[test]
fn an_echo_frame_draws_the_focused_pane_as_a_full_frame_does_and_nothing_else() {
    let (mut app, mut term, mut shown) = split();
    assert_eq!(app.selected_run().unwrap().id, "01A");
    let [_, _, w, h] = rect_of(&app, "01A");
    app.update(screen_of("01A", h, w, b"$ typed"));
    let [_, _, w, h] = rect_of(&app, "01B");
    app.update(screen_of("01B", h, w, b"flooded"));
    assert!(shown.draw_focused(&mut term, &app).unwrap());
    let drawn = term.backend().buffer().clone();
    let cursor = term.backend_mut().get_cursor_position().unwrap();

    let mut full = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    full.draw(|f| view::draw(f, &mut app)).unwrap();
    let want = full.backend().buffer().clone();
    let focused = rect_of(&app, "01A");
    let [x, y, w, h] = focused;
    // Every cell with its style, not only its text.
    for row in y..y + h {
        let cells = |buf: &Buffer| (x..x + w).map(|x| buf[(x, row)].clone()).collect::<Vec<_>>();
        assert_eq!(cells(&drawn), cells(&want), "row {row}");
    }
    assert!(row_text(&drawn, focused).starts_with("$ typed"));
    assert_eq!(cursor, full.backend_mut().get_cursor_position().unwrap());
    let other = rect_of(&app, "01B");
    assert!(row_text(&want, other).starts_with("flooded"));
    assert!(
        row_text(&drawn, other).starts_with("$ "),
        "the other pane waits for a full frame"
    );
}

#[test]
fn no_echo_frame_outside_insert_under_an_overlay_or_after_a_resize() {
    let (mut app, mut term, mut shown) = split();
    app.mode = Mode::Normal;
    assert!(!shown.draw_focused(&mut term, &app).unwrap(), "not in INSERT");
    app.mode = Mode::Insert;
    app.overlay = Some(Overlay::Help);
    assert!(!shown.draw_focused(&mut term, &app).unwrap(), "help over the panes");
    app.overlay = None;
    assert!(shown.draw_focused(&mut term, &app).unwrap());
    term.resize(ratatui::layout::Rect::new(0, 0, WIDTH + 10, HEIGHT))
        .unwrap();
    assert!(
        !shown.draw_focused(&mut term, &app).unwrap(),
        "the terminal changed size"
    );
}

/// What an echo frame drew and a later screen took back (the line erased)
/// is written over by the next full frame: ratatui learns of the echo
/// frame before it diffs.
#[test]
fn a_full_frame_after_an_echo_frame_writes_what_changed_since() {
    let (mut app, mut term, mut shown) = split();
    let [_, _, w, h] = rect_of(&app, "01A");
    app.update(screen_of("01A", h, w, b"$ typed"));
    assert!(shown.draw_focused(&mut term, &app).unwrap());
    assert!(row_text(term.backend().buffer(), rect_of(&app, "01A")).starts_with("$ typed"));
    app.update(screen_of("01A", h, w, b"$ "));
    shown.sync(&mut term);
    let done = term.draw(|f| view::draw(f, &mut app)).unwrap();
    shown.keep(&done);
    let row = row_text(term.backend().buffer(), rect_of(&app, "01A"));
    assert_eq!(row.trim_end(), "$", "the erased echo is gone from the terminal");
}
