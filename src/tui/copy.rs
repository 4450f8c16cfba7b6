//! Copy mode (`v`): move a cursor over a pane's history and screen, select
//! with `v` (characters) or `V` (lines), and `y` copies through OSC 52.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub struct CopyMode {
    pub run: String,
    pub lines: Vec<String>,
    /// (line, column in characters)
    pub cursor: (usize, usize),
    pub anchor: Option<(usize, usize)>,
    pub linewise: bool,
    /// The line after the last one shown: the view stays put while the
    /// cursor moves within it (`top`; kept after each frame, `hits.rs`).
    pub view_end: usize,
}

pub enum CopyOutcome {
    Keep,
    Exit,
    Copy(String),
}

impl CopyMode {
    pub fn new(run: &str, mut lines: Vec<String>) -> CopyMode {
        while lines.len() > 1 && lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        if lines.is_empty() {
            lines.push(String::new());
        }
        let last = lines.len() - 1;
        let lines_len = lines.len();
        CopyMode {
            run: run.to_string(),
            lines,
            cursor: (last, 0),
            anchor: None,
            linewise: false,
            view_end: lines_len,
        }
    }

    /// Starts on the view the pane showed, whose last line was `end - 1`
    /// (scrolled back, or the live screen): the cursor on its last line.
    pub fn shown_to(mut self, end: usize) -> CopyMode {
        let end = end.clamp(1, self.lines.len());
        self.cursor = (end - 1, 0);
        self.view_end = end;
        self
    }

    /// The lines to show in `height` rows, as (first, the one after the
    /// last): the view kept where it was, moved only as far as keeps the
    /// cursor in it. The drawing keeps the end for the next frame.
    pub fn view(&self, height: usize) -> (usize, usize) {
        let line = self.cursor.0;
        let mut end = self.view_end.max(height.min(self.lines.len()));
        if line >= end {
            end = line + 1;
        } else if line + height < end {
            end = line + height;
        }
        (end.saturating_sub(height), end)
    }

    fn width(&self, line: usize) -> usize {
        self.lines.get(line).map_or(0, |l| l.chars().count())
    }

    fn clamp(&mut self) {
        self.cursor.0 = self.cursor.0.min(self.lines.len() - 1);
        self.cursor.1 = self.cursor.1.min(self.width(self.cursor.0).saturating_sub(1));
    }

    pub fn key(&mut self, key: KeyEvent) -> CopyOutcome {
        let (line, col) = self.cursor;
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return CopyOutcome::Exit,
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return CopyOutcome::Exit,
            KeyCode::Char('h') | KeyCode::Left => self.cursor.1 = col.saturating_sub(1),
            KeyCode::Char('l') | KeyCode::Right => self.cursor.1 = col + 1,
            KeyCode::Char('k') | KeyCode::Up => self.cursor.0 = line.saturating_sub(1),
            KeyCode::Char('j') | KeyCode::Down => self.cursor.0 = line + 1,
            KeyCode::PageUp => self.cursor.0 = line.saturating_sub(20),
            KeyCode::PageDown => self.cursor.0 = line + 20,
            KeyCode::Char('0') | KeyCode::Home => self.cursor.1 = 0,
            KeyCode::Char('$') | KeyCode::End => self.cursor.1 = usize::MAX,
            KeyCode::Char('g') => self.cursor = (0, 0),
            KeyCode::Char('G') => self.cursor.0 = self.lines.len() - 1,
            KeyCode::Char('v') | KeyCode::Char(' ') => {
                self.linewise = false;
                self.anchor = if self.anchor.is_some() { None } else { Some(self.cursor) };
            }
            KeyCode::Char('V') => {
                self.linewise = true;
                self.anchor = if self.anchor.is_some() { None } else { Some(self.cursor) };
            }
            KeyCode::Char('y') | KeyCode::Enter => {
                let text = match self.anchor {
                    Some(_) => self.selected_text(),
                    None => self.lines[line].trim_end().to_string(),
                };
                return CopyOutcome::Copy(text);
            }
            _ => {}
        }
        self.clamp();
        CopyOutcome::Keep
    }

    /// The selection's ends, in order.
    fn range(&self) -> Option<((usize, usize), (usize, usize))> {
        let a = self.anchor?;
        let b = self.cursor;
        Some(if a <= b { (a, b) } else { (b, a) })
    }

    pub fn is_selected(&self, line: usize, col: usize) -> bool {
        let Some((start, end)) = self.range() else { return false };
        if line < start.0 || line > end.0 {
            return false;
        }
        if self.linewise {
            return true;
        }
        let after_start = line > start.0 || col >= start.1;
        let before_end = line < end.0 || col <= end.1;
        after_start && before_end
    }

    pub fn selected_text(&self) -> String {
        let Some((start, end)) = self.range() else {
            return String::new();
        };
        let mut out = Vec::new();
        for line in start.0..=end.0 {
            let chars: Vec<char> = self.lines[line].chars().collect();
            let from = if self.linewise || line > start.0 {
                0
            } else {
                start.1.min(chars.len())
            };
            let to = if self.linewise || line < end.0 {
                chars.len()
            } else {
                (end.1 + 1).min(chars.len())
            };
            let piece: String = chars[from..to.max(from)].iter().collect();
            out.push(piece.trim_end().to_string());
        }
        out.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn a_character_selection_across_lines_copies_what_it_covers() {
        let mut copy = CopyMode::new("r", vec!["first line".into(), "second line".into(), "".into()]);
        assert_eq!(copy.cursor, (1, 0), "starts on the last line with text");
        copy.key(key('k'));
        for _ in 0..6 {
            copy.key(key('l'));
        }
        copy.key(key('v'));
        copy.key(key('j'));
        copy.key(key('0'));
        for _ in 0..5 {
            copy.key(key('l'));
        }
        match copy.key(key('y')) {
            CopyOutcome::Copy(text) => assert_eq!(text, "line\nsecond"),
            _ => panic!("y copies"),
        }
    }

    /// The first line a frame of `height` rows shows, the view kept for
    /// the next as the app keeps it after a frame.
    fn top(copy: &mut CopyMode, height: usize) -> usize {
        let (top, end) = copy.view(height);
        copy.view_end = end;
        top
    }

    #[test]
    fn the_view_stays_put_until_the_cursor_leaves_it() {
        let lines = (0..50).map(|i| i.to_string()).collect();
        let mut copy = CopyMode::new("r", lines).shown_to(30);
        assert_eq!((copy.cursor, top(&mut copy, 10)), ((29, 0), 20));
        copy.key(key('k'));
        assert_eq!(top(&mut copy, 10), 20, "within the view");
        for _ in 0..12 {
            copy.key(key('k'));
        }
        assert_eq!((copy.cursor.0, top(&mut copy, 10)), (16, 16), "followed up");
        copy.key(key('G'));
        assert_eq!(top(&mut copy, 10), 40, "followed down");
    }

    #[test]
    fn a_line_selection_copies_whole_lines() {
        let mut copy = CopyMode::new("r", vec!["a".into(), "b".into(), "c".into()]);
        copy.key(key('V'));
        copy.key(key('k'));
        match copy.key(key('y')) {
            CopyOutcome::Copy(text) => assert_eq!(text, "b\nc"),
            _ => panic!("y copies"),
        }
    }
}
