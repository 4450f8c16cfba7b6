//! The TUI drawn into a test terminal and read back as text, one line per
//! row with its trailing blanks cut: what the snapshots hold.

use agents::tui::app::App;
use agents::tui::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    term.draw(|f| view::draw(f, app)).unwrap();
    let buf = term.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol().to_string()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Asserts a screen equals its snapshot, `snapshots/NAME.snap` at the
/// top level (named by the test, not by its file, so a test can move).
#[macro_export]
macro_rules! snap {
    ($name:expr, $value:expr) => {
        insta::with_settings!({ snapshot_path => "../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!($name, $value);
        });
    };
}
