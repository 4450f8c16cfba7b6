//! Incremental reading of a growing transcript file: a byte offset that only
//! moves past complete lines, so a line still being written waits for its
//! newline, and a reread sees only what was appended. A file rewritten in
//! place (Letta Code writes its whole conversation again at each change,
//! its last message longer once the reply is done) no longer has a newline
//! just before the offset, and is read again from the start.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{Batch, LineReader};

/// A line longer than this is skipped (counted malformed) rather than held in
/// memory: no harness writes one; a file that has one is not a transcript.
pub const MAX_LINE: usize = 32 * 1024 * 1024;

/// Splits bytes into complete lines for a `LineReader`, holding a line that
/// is cut at the end of a chunk until the next chunk completes it.
#[derive(Debug, Default)]
pub struct Lines {
    partial: Vec<u8>,
    partial_at: u64,
    /// Inside an over-long line: drop bytes until its newline.
    skipping: bool,
    /// Offset just past the last complete line.
    consumed: u64,
}

impl Lines {
    pub fn at(offset: u64) -> Lines {
        Lines {
            consumed: offset,
            partial_at: offset,
            ..Lines::default()
        }
    }

    /// Offset just past the last complete line seen.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// `bytes` start at file offset `base`, right where the previous chunk ended.
    pub fn feed(&mut self, bytes: &[u8], base: u64, reader: &mut dyn LineReader, out: &mut Batch) {
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', bytes) {
            let end_offset = base + nl as u64 + 1;
            if self.skipping {
                self.skipping = false;
            } else if self.partial.is_empty() {
                emit(&bytes[start..nl], base + start as u64, reader, out);
            } else {
                self.partial.extend_from_slice(&bytes[start..nl]);
                let line = std::mem::take(&mut self.partial);
                emit(&line, self.partial_at, reader, out);
            }
            start = nl + 1;
            self.consumed = end_offset;
            self.partial_at = end_offset;
        }
        let rest = &bytes[start..];
        if self.skipping || rest.is_empty() {
            return;
        }
        if self.partial.len() + rest.len() > MAX_LINE {
            self.partial = Vec::new();
            self.skipping = true;
            out.stats.lines += 1;
            out.stats.malformed += 1;
        } else {
            self.partial.extend_from_slice(rest);
        }
    }

    /// The input is complete: a last line without its newline counts too.
    pub fn finish(&mut self, reader: &mut dyn LineReader, out: &mut Batch) {
        if !self.partial.is_empty() && !self.skipping {
            let line = std::mem::take(&mut self.partial);
            emit(&line, self.partial_at, reader, out);
            self.consumed = self.partial_at + line.len() as u64;
        }
        reader.pause(out);
    }
}

fn emit(line: &[u8], offset: u64, reader: &mut dyn LineReader, out: &mut Batch) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if !reader.wants_blank_lines() && line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    out.stats.lines += 1;
    reader.line(line, offset, out);
}

/// Which file an offset belongs to: a transcript replaced by another file
/// (same path, new inode) is read again from the start.
pub fn file_id(meta: &std::fs::Metadata) -> String {
    format!("{}:{}", meta.dev(), meta.ino())
}

/// What one `Tail::read` did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The chunk limit stopped the read before the end of the file.
    pub more: bool,
    /// The file shrank, was replaced or was rewritten in place: reading
    /// restarted at 0, and what was read from it before should be forgotten.
    pub reset: bool,
    /// Bytes read this time.
    pub bytes: u64,
}

/// A file read incrementally: `offset` only ever moves past complete lines
/// (or, for a reader holding an unfinished block, to that block's start).
#[derive(Debug, Clone)]
pub struct Tail {
    pub path: PathBuf,
    pub offset: u64,
    /// `dev:ino` of the file the offset belongs to.
    pub file_id: Option<String>,
}

/// Bytes read from the file per `read` call at most, so that one call is a
/// bounded unit of work (the indexer commits after each).
pub const CHUNK: usize = 4 * 1024 * 1024;

impl Tail {
    pub fn new(path: &Path, offset: u64, file_id: Option<String>) -> Tail {
        Tail {
            path: path.to_path_buf(),
            offset,
            file_id,
        }
    }

    /// Reads what was appended since the last call (at most `max` bytes,
    /// extended to finish a line cut by the limit) and feeds its complete
    /// lines to `reader`. A missing file reads as empty.
    pub fn read(&mut self, reader: &mut dyn LineReader, out: &mut Batch, max: usize) -> std::io::Result<Step> {
        let mut file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Step::default()),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        let id = file_id(&meta);
        let mut step = Step::default();
        let replaced = self.file_id.as_ref().is_some_and(|old| *old != id);
        if meta.len() < self.offset || replaced || !ends_a_line(&file, self.offset)? {
            self.offset = 0;
            step.reset = true;
            // What the reader remembered belongs to the old file.
            reader.restore(&serde_json::Value::Null);
        }
        self.file_id = Some(id);
        if meta.len() == self.offset {
            if let Some(resume) = reader.pause(out) {
                self.offset = resume;
            }
            return Ok(step);
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut lines = Lines::at(self.offset);
        let mut buf = vec![0u8; (meta.len() - self.offset).min(max as u64) as usize];
        let mut pos = self.offset;
        let mut hit_limit = false;
        // Where the last complete line ended when the limit was reached.
        let mut cut: Option<u64> = None;
        loop {
            let n = read_full(&mut file, &mut buf)?;
            if n == 0 {
                break;
            }
            lines.feed(&buf[..n], pos, reader, out);
            pos += n as u64;
            step.bytes += n as u64;
            if step.bytes >= max as u64 {
                // Stop at the end of a line: right here, or once the line
                // the limit cut is complete (what follows it in this read
                // waits for the next step, from the offset).
                if lines.consumed() == pos || cut.is_some_and(|c| lines.consumed() > c) {
                    hit_limit = true;
                    break;
                }
                // The limit cut a line: finish it in small reads.
                cut.get_or_insert(lines.consumed());
                buf.truncate(64 * 1024);
            }
        }
        step.more = hit_limit && pos < file.metadata()?.len();
        // Always pause, even with more to come: a reader's unfinished block
        // is not kept between reads, only its start offset.
        self.offset = match reader.pause(out) {
            Some(r) => r.min(lines.consumed()),
            None => lines.consumed(),
        };
        Ok(step)
    }
}

/// Whether `offset`, where the last read stopped, is still the start of a
/// line: the start of the file or just past a newline. Appending keeps it
/// so; a rewrite that changed what came before it almost never does.
fn ends_a_line(file: &File, offset: u64) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt;
    if offset == 0 {
        return Ok(true);
    }
    let mut byte = [0u8; 1];
    match file.read_at(&mut byte, offset - 1)? {
        0 => Ok(true),
        _ => Ok(byte[0] == b'\n'),
    }
}

fn read_full(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Message, Role};

    /// Records each line as a user message, to see exactly what was fed.
    #[derive(Default)]
    struct Echo;

    impl LineReader for Echo {
        fn line(&mut self, line: &[u8], offset: u64, out: &mut Batch) {
            out.messages
                .push(Message::new(Role::User, String::from_utf8_lossy(line).into(), offset));
        }
    }

    fn texts(b: &Batch) -> Vec<(String, u64)> {
        b.messages.iter().map(|m| (m.text.clone(), m.offset)).collect()
    }

    #[test]
    fn a_line_cut_between_chunks_is_read_once_whole() {
        let mut lines = Lines::default();
        let mut out = Batch::default();
        lines.feed(b"one\ntw", 0, &mut Echo, &mut out);
        assert_eq!(lines.consumed(), 4);
        lines.feed(b"o\nthree", 6, &mut Echo, &mut out);
        assert_eq!(texts(&out), vec![("one".into(), 0), ("two".into(), 4)]);
        assert_eq!(lines.consumed(), 8);
        lines.finish(&mut Echo, &mut out);
        assert_eq!(out.messages[2].text, "three");
        assert_eq!(lines.consumed(), 13);
    }

    #[test]
    fn tail_reads_only_what_was_appended_and_waits_for_a_partial_line() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(b"a\nb\npart").unwrap();
        let mut tail = Tail::new(&path, 0, None);
        let mut out = Batch::default();
        let step = tail.read(&mut Echo, &mut out, CHUNK).unwrap();
        assert!(!step.more && !step.reset);
        assert_eq!(texts(&out), vec![("a".into(), 0), ("b".into(), 2)]);
        assert_eq!(tail.offset, 4, "the partial line is not consumed");

        let mut out = Batch::default();
        tail.read(&mut Echo, &mut out, CHUNK).unwrap();
        assert!(out.messages.is_empty(), "nothing new until the newline comes");

        f.write_all(b"ial\nc\n").unwrap();
        let mut out = Batch::default();
        tail.read(&mut Echo, &mut out, CHUNK).unwrap();
        assert_eq!(texts(&out), vec![("partial".into(), 4), ("c".into(), 12)]);
        assert_eq!(tail.offset, 14);
    }

    #[test]
    fn a_replaced_file_is_read_again_from_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, b"first line\nsecond line\n").unwrap();
        let mut tail = Tail::new(&path, 0, None);
        tail.read(&mut Echo, &mut Batch::default(), CHUNK).unwrap();
        std::fs::write(&path, b"new\n").unwrap();
        let mut out = Batch::default();
        let step = tail.read(&mut Echo, &mut out, CHUNK).unwrap();
        assert!(step.reset);
        assert_eq!(texts(&out), vec![("new".into(), 0)]);
    }

    #[test]
    fn a_file_rewritten_in_place_with_a_longer_last_line_is_read_again() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("messages.jsonl");
        std::fs::write(&path, b"question\nreply so far\n").unwrap();
        let mut tail = Tail::new(&path, 0, None);
        tail.read(&mut Echo, &mut Batch::default(), CHUNK).unwrap();
        // The same file (inode) truncated and written whole again, as
        // `writeFileSync` does: its last line now longer.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        f.write_all(b"question\nreply so far, and done\nnext\n").unwrap();
        let mut out = Batch::default();
        let step = tail.read(&mut Echo, &mut out, CHUNK).unwrap();
        assert!(step.reset);
        assert_eq!(
            texts(&out),
            vec![
                ("question".into(), 0),
                ("reply so far, and done".into(), 9),
                ("next".into(), 32)
            ]
        );

        // Appending after it reads only what was appended.
        f.write_all(b"more\n").unwrap();
        let mut out = Batch::default();
        assert!(!tail.read(&mut Echo, &mut out, CHUNK).unwrap().reset);
        assert_eq!(texts(&out), vec![("more".into(), 37)]);
    }

    #[test]
    fn the_chunk_limit_stops_at_a_line_end_and_says_there_is_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let body: String = (0..100).map(|i| format!("line {i:03}\n")).collect();
        std::fs::write(&path, &body).unwrap();
        let mut tail = Tail::new(&path, 0, None);
        let mut out = Batch::default();
        let step = tail.read(&mut Echo, &mut out, 25).unwrap();
        assert!(step.more);
        let first = out.messages.len();
        assert!((2..100).contains(&first), "{first}");
        assert_eq!(tail.offset, first as u64 * 9);
        let mut rest = Batch::default();
        while tail.read(&mut Echo, &mut rest, 25).unwrap().more {}
        assert_eq!(first + rest.messages.len(), 100);
        assert_eq!(rest.messages.last().unwrap().text, "line 099");
    }

    #[test]
    fn a_step_ends_soon_after_its_limit_though_no_read_ends_on_a_line_end() {
        // Lines whose length divides no read size: a step stops at the first
        // line end past its limit, not when a read happens to end on one.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let line = format!("{}\n", "x".repeat(4999));
        std::fs::write(&path, line.repeat(2000)).unwrap();
        let mut tail = Tail::new(&path, 0, None);
        let mut out = Batch::default();
        let step = tail.read(&mut Echo, &mut out, 256 * 1024).unwrap();
        assert!(step.more);
        assert!(step.bytes <= 256 * 1024 + 64 * 1024, "{}", step.bytes);
        assert_eq!(tail.offset, out.messages.len() as u64 * 5000);
        let mut steps = 1;
        while tail.read(&mut Echo, &mut out, 256 * 1024).unwrap().more {
            steps += 1;
        }
        assert_eq!(out.messages.len(), 2000);
        assert!(steps >= 10_000_000 / (320 * 1024), "{steps} steps");
    }

    #[test]
    fn an_over_long_line_is_counted_and_skipped() {
        let mut lines = Lines::default();
        let mut out = Batch::default();
        let big = vec![b'x'; MAX_LINE / 2 + 1];
        lines.feed(&big, 0, &mut Echo, &mut out);
        lines.feed(&big, big.len() as u64, &mut Echo, &mut out);
        lines.feed(b"xx\nok\n", 2 * big.len() as u64, &mut Echo, &mut out);
        assert_eq!(out.stats.malformed, 1);
        assert_eq!(texts(&out).len(), 1);
        assert_eq!(out.messages[0].text, "ok");
    }
}
