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
