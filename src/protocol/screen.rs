//! Screen states: a run's screen cell by cell, as its one emulator (the
//! supervisor's) sees it, and the updates that carry it to the clients
//! that draw it. A client keeps a [`ScreenMirror`] and applies updates to
//! it; it never parses the agent's bytes. The wire form is compact binary
//! (about two bytes a cell, trailing blanks left out) in a `Frame::Screen`.
//!
//! Compatibility: a client or relay of an older build decodes only format
//! [`FORMAT_V1`] (it refuses another first byte) and reads a style's
//! `flags` byte whole, drawing the bits it knows. So strike-through,
//! hidden and blink, which fit the bits it never used, travel in both
//! formats; underline styles and colours only in [`FORMAT`], which an
//! encoder writes only for a subscriber that asked for it (`runs.attach`'s
//! `screen_format`, the run socket's `sup.screen_watch` `format`). Every
//! build decodes both.
//!
//! The values themselves (cells, styles, modes, [`ScreenUpdate`]) are
//! `values::screen`'s, shared with the emulator; they are re-exported here
//! so that the wire's users find them with their encoding.

mod mirror;
mod watch;

pub use crate::values::screen::{Cell, Color, Glyph, Modes, Row, ScreenUpdate, Style, Underline, flag, glyph_of, mode};
pub use mirror::ScreenMirror;
pub use watch::{ScreenWatch, TooLarge};

/// The first format: what builds before underline styles read and write.
pub const FORMAT_V1: u8 = 1;
/// The newest format: a run's style also carries its underline style and
/// colour.
pub const FORMAT: u8 = 2;
/// The largest screen an update may describe (the bounds of `runs.resize`).
pub const MAX_ROWS: u16 = 1000;
pub const MAX_COLS: u16 = 2000;

impl Underline {
    /// The style a format-2 style byte names, if any.
    fn from_wire(b: u8) -> Option<Underline> {
        Some(match b {
            0 => Underline::Single,
            1 => Underline::Double,
            2 => Underline::Curly,
            3 => Underline::Dotted,
            4 => Underline::Dashed,
            _ => return None,
        })
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("malformed screen update: {0}")]
pub struct Malformed(&'static str);

impl ScreenUpdate {
    /// In the newest format.
    pub fn encode(&self) -> Vec<u8> {
        self.encode_as(FORMAT)
    }

    /// In `format` ([`FORMAT_V1`] for a subscriber that asked for none:
    /// underline styles and colours are left out, what it can draw kept).
    pub fn encode_as(&self, format: u8) -> Vec<u8> {
        let format = format.clamp(FORMAT_V1, FORMAT);
        let mut out = Vec::with_capacity(64 + self.lines.len() * (self.cols as usize + 8));
        out.push(format);
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.offset.to_be_bytes());
        for n in [self.rows, self.cols, self.cursor.0, self.cursor.1] {
            out.extend_from_slice(&n.to_be_bytes());
        }
        out.extend_from_slice(&[self.modes.bits, self.modes.mouse, self.modes.mouse_encoding]);
        out.push(u8::from(self.full) | if self.title.is_some() { 2 } else { 0 });
        if let Some(title) = &self.title {
            put_str(&mut out, title);
        }
        out.extend_from_slice(&(self.lines.len() as u16).to_be_bytes());
        for (index, row) in &self.lines {
            out.extend_from_slice(&index.to_be_bytes());
            encode_row_as(&mut out, row, format);
        }
        out.extend_from_slice(&(self.scrolled.len() as u32).to_be_bytes());
        for line in &self.scrolled {
            put_str(&mut out, line);
        }
        out.extend_from_slice(&self.dropped.to_be_bytes());
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<ScreenUpdate, Malformed> {
        let format = bytes.first().copied().unwrap_or(0);
        if !(FORMAT_V1..=FORMAT).contains(&format) {
            return Err(Malformed("unknown version"));
        }
        let mut r = Reader(&bytes[1..], format);
        let seq = r.u64()?;
        let offset = r.u64()?;
        let (rows, cols) = (r.u16()?, r.u16()?);
        if rows == 0 || cols == 0 || rows > MAX_ROWS || cols > MAX_COLS {
            return Err(Malformed("screen size"));
        }
        let cursor = (r.u16()?, r.u16()?);
        let modes = Modes {
            bits: r.u8()?,
            mouse: r.u8()?,
            mouse_encoding: r.u8()?,
        };
        let flags = r.u8()?;
        let title = if flags & 2 != 0 { Some(r.str()?) } else { None };
        let count = r.u16()?;
        if count > rows {
            return Err(Malformed("more rows than the screen has"));
        }
        let mut lines = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let index = r.u16()?;
            if index >= rows {
                return Err(Malformed("row index"));
            }
            lines.push((index, r.row(cols)?));
        }
        let scrolled_count = r.u32()? as usize;
        // Each line takes at least its 4-byte length.
        if scrolled_count > r.0.len() / 4 {
            return Err(Malformed("scrolled lines truncated"));
        }
        let mut scrolled = Vec::with_capacity(scrolled_count);
        for _ in 0..scrolled_count {
            scrolled.push(r.str()?);
        }
        let dropped = r.u64()?;
        if !r.0.is_empty() {
            return Err(Malformed("trailing bytes"));
        }
        Ok(ScreenUpdate {
            seq,
            offset,
            rows,
            cols,
            cursor,
            modes,
            title,
            full: flags & 1 != 0,
            lines,
            scrolled,
            dropped,
        })
    }
}

/// Rewrites the `seq` of an encoded update in place: a relay (the daemon)
/// numbers the updates of its own subscription.
pub fn set_seq(encoded: &mut [u8], seq: u64) {
    if let Some(field) = encoded.get_mut(1..9) {
        field.copy_from_slice(&seq.to_be_bytes());
    }
}

/// The `seq` of an encoded update, without decoding the rest.
pub fn seq_of(encoded: &[u8]) -> Option<u64> {
    let field: [u8; 8] = encoded.get(1..9)?.try_into().ok()?;
    Some(u64::from_be_bytes(field))
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_color(out: &mut Vec<u8>, c: Color) {
    match c {
        Color::Default => out.push(0),
        Color::Idx(i) => out.extend_from_slice(&[1, i]),
        Color::Rgb(r, g, b) => out.extend_from_slice(&[2, r, g, b]),
    }
}

// A cell's glyph: these tags, or a printable ASCII byte for itself.
const BLANK: u8 = 0;
const CONTINUATION: u8 = 1;
const CLUSTER: u8 = 2;
const WIDE_CLUSTER: u8 = 3;

/// A row as runs of cells of one style: `u16` run count, then each run's
/// style, `u16` cell count and cells. Blank default cells at its end are
/// left out; the reader fills them in.
pub fn encode_row(out: &mut Vec<u8>, row: &Row) {
    encode_row_as(out, row, FORMAT);
}

/// As [`encode_row`], in `format`: from 2 on a run's style ends with its
/// underline style and colour.
fn encode_row_as(out: &mut Vec<u8>, row: &Row, format: u8) {
    let blank = Cell::default();
    let used = row.len() - row.iter().rev().take_while(|c| **c == blank).count();
    let count_at = out.len();
    out.extend_from_slice(&[0, 0]);
    let mut runs: u16 = 0;
    let mut cells = row[..used].iter().peekable();
    while let Some(first) = cells.next() {
        runs += 1;
        put_color(out, first.style.fg);
        put_color(out, first.style.bg);
        out.push(first.style.flags);
        if format >= 2 {
            out.push(first.style.underline as u8);
            put_color(out, first.style.underline_color);
        }
        let len_at = out.len();
        out.extend_from_slice(&[0, 0]);
        let mut len: u16 = 1;
        put_glyph(out, first);
        // A run is cut where the style changes in what this format carries.
        let same = |a: &Style, b: &Style| match format {
            1 => (a.fg, a.bg, a.flags) == (b.fg, b.bg, b.flags),
            _ => a == b,
        };
        while let Some(cell) = cells.next_if(|c| same(&c.style, &first.style)) {
            put_glyph(out, cell);
            len += 1;
        }
        out[len_at..len_at + 2].copy_from_slice(&len.to_be_bytes());
    }
    out[count_at..count_at + 2].copy_from_slice(&runs.to_be_bytes());
}

fn put_glyph(out: &mut Vec<u8>, cell: &Cell) {
    match &cell.glyph {
        Glyph::Blank => out.push(BLANK),
        Glyph::Continuation => out.push(CONTINUATION),
        Glyph::Ascii(b) if !cell.wide && (b' '..=b'~').contains(b) => out.push(*b),
        Glyph::Ascii(b) => put_cluster(
            out,
            cell.wide,
            std::str::from_utf8(std::slice::from_ref(b)).unwrap_or(" "),
        ),
        Glyph::Cluster(s) => put_cluster(out, cell.wide, s),
    }
}

fn put_cluster(out: &mut Vec<u8>, wide: bool, s: &str) {
    // A cell holds one character and its combining marks: 255 bytes is
    // far more than any real one, and longer is cut at a character.
    let mut end = s.len().min(255);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    out.push(if wide { WIDE_CLUSTER } else { CLUSTER });
    out.push(end as u8);
    out.extend_from_slice(&s.as_bytes()[..end]);
}

/// The bytes left, and the format they are in.
struct Reader<'a>(&'a [u8], u8);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Malformed> {
        if self.0.len() < n {
            return Err(Malformed("truncated"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, Malformed> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, Malformed> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(b))
    }

    /// A title or a scrolled row: drawn too, so no control characters.
    fn str(&mut self) -> Result<String, Malformed> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        let text = String::from_utf8(bytes.to_vec()).map_err(|_| Malformed("text is not UTF-8"))?;
        if text.chars().any(char::is_control) {
            return Err(Malformed("control character in text"));
        }
        Ok(text)
    }

    fn color(&mut self) -> Result<Color, Malformed> {
        match self.u8()? {
            0 => Ok(Color::Default),
            1 => Ok(Color::Idx(self.u8()?)),
            2 => {
                let b = self.take(3)?;
                Ok(Color::Rgb(b[0], b[1], b[2]))
            }
            _ => Err(Malformed("colour")),
        }
    }

    fn row(&mut self, cols: u16) -> Result<Row, Malformed> {
        let runs = self.u16()?;
        let mut row = Vec::with_capacity(cols as usize);
        for _ in 0..runs {
            let mut style = Style {
                fg: self.color()?,
                bg: self.color()?,
                flags: self.u8()?,
                ..Style::default()
            };
            if self.1 >= 2 {
                style.underline = Underline::from_wire(self.u8()?).ok_or(Malformed("underline"))?;
                style.underline_color = self.color()?;
            }
            let len = self.u16()?;
            if row.len() + len as usize > cols as usize {
                return Err(Malformed("row wider than the screen"));
            }
            for _ in 0..len {
                let (glyph, wide) = self.glyph()?;
                row.push(Cell { glyph, style, wide });
            }
        }
        row.resize(cols as usize, Cell::default());
        Ok(row)
    }

    fn glyph(&mut self) -> Result<(Glyph, bool), Malformed> {
        match self.u8()? {
            BLANK => Ok((Glyph::Blank, false)),
            CONTINUATION => Ok((Glyph::Continuation, false)),
            tag @ (CLUSTER | WIDE_CLUSTER) => {
                let len = self.u8()? as usize;
                let text = std::str::from_utf8(self.take(len)?).map_err(|_| Malformed("cell is not UTF-8"))?;
                // A cell is drawn as it is: it must hold no control
                // character that a client's terminal would act on.
                if text.chars().any(char::is_control) {
                    return Err(Malformed("control character in a cell"));
                }
                Ok((glyph_of(text), tag == WIDE_CLUSTER))
            }
            b @ b' '..=b'~' => Ok((Glyph::Ascii(b), false)),
            _ => Err(Malformed("cell")),
        }
    }
}

/// `text` without the control characters a client would refuse.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().any(char::is_control) {
        text.chars().filter(|c| !c.is_control()).collect::<String>().into()
    } else {
        text.into()
    }
}

#[cfg(test)]
mod tests;
