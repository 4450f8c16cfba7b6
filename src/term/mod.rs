//! TEMPORARY stub, replaced by the real emulator wrapper.
pub struct Terminal {
    parser: vt100::Parser,
    replies: Vec<u8>,
}
impl Terminal {
    pub fn new(rows: u16, cols: u16) -> Self {
        Terminal {
            parser: vt100::Parser::new(
                std::num::NonZeroU16::new(rows.max(1)).unwrap(),
                std::num::NonZeroU16::new(cols.max(1)).unwrap(),
                0,
            ),
            replies: Vec::new(),
        }
    }
    pub fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(bytes)
    }
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.replies)
    }
    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.set_size(
            std::num::NonZeroU16::new(rows.max(1)).unwrap(),
            std::num::NonZeroU16::new(cols.max(1)).unwrap(),
        )
    }
    pub fn size(&self) -> (u16, u16) {
        let (r, c) = self.parser.screen().size();
        (r.get(), c.get())
    }
    pub fn title(&self) -> &str {
        ""
    }
    pub fn bells(&self) -> u64 {
        0
    }
    pub fn scrolled_lines(&self) -> u64 {
        0
    }
    pub fn snapshot(&self) -> Vec<u8> {
        self.parser.screen().state_formatted().into_bytes()
    }
    pub fn visible_lines(&self) -> Vec<String> {
        self.parser
            .screen()
            .contents()
            .lines()
            .map(|l| l.trim_end().to_string())
            .collect()
    }
    pub fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }
}
pub fn render_history(
    rows: u16,
    cols: u16,
    start: Option<&[u8]>,
    bytes: impl Iterator<Item = impl AsRef<[u8]>>,
    _max_lines: usize,
) -> Vec<String> {
    let mut t = Terminal::new(rows, cols);
    if let Some(s) = start {
        t.feed(s);
    }
    for b in bytes {
        t.feed(b.as_ref());
    }
    t.visible_lines()
}
mod follow;
pub use follow::LineFollower;
