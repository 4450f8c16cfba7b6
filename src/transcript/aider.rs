//! aider's `.aider.chat.history.md`: markdown appended as the chat goes.
//!
//! As aider 0.86.2 writes it (recorded against a mock model:
//! `tests/fixtures/transcripts/aider/`): `# aider chat started at
//! 2026-11-29 11:54:26` (local time) opens a chat; `#### ` lines are what
//! the user typed, one per line of the input (one message per run of them);
//! `> ` lines are aider's own output (notices, questions with the answer it
//! took, `Tokens: 730 sent, 27 received.`); both end in the two spaces of a
//! markdown line break. Everything else is the assistant's reply, written
//! as the model sent it. A block ends only when another kind of block
//! starts, so the block at the end of the file is provisional: it is
//! emitted, and read again whole next time. A reply line that itself starts
//! with `> ` (a quote) reads as a notice: the file does not tell them apart.
//! A reader is one chat's: what follows the next chat's heading is another
//! session's (the index hands the file to it), so the reader skips it.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::model::{Message, Role, Usage};
use super::{Batch, LineReader};

/// The heading aider writes when a chat starts, before its local time.
const CHAT_STARTED: &str = "# aider chat started at ";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Notice,
    Reply,
}

#[derive(Debug)]
struct Block {
    kind: Kind,
    start: u64,
    text: String,
    /// Inside a ``` code fence (replies only).
    fenced: bool,
}

#[derive(Debug, Default)]
pub struct AiderReader {
    block: Option<Block>,
    /// When the current chat started (the only time the file records).
    started_ms: Option<i64>,
    /// A chat's heading was read: the next heading begins another chat.
    in_chat: bool,
    /// Another chat began: the rest of the file is not this reader's.
    past_chat: bool,
    /// Where the last notice whose tokens were counted starts: a `Tokens:`
    /// notice is counted once, the first time it is read, although the
    /// last block of the file is read again (it may yet grow).
    counted_at: Option<u64>,
}

impl LineReader for AiderReader {
    fn line(&mut self, line: &[u8], offset: u64, out: &mut Batch) {
        if self.past_chat {
            return;
        }
        let line = String::from_utf8_lossy(line);
        if line.trim().is_empty() {
            // Paragraph breaks inside a reply; elsewhere they separate nothing.
            if let Some(b) = self.block.as_mut().filter(|b| b.kind == Kind::Reply) {
                b.text.push('\n');
            }
            return;
        }
        if let Some(when) = line.strip_prefix(CHAT_STARTED) {
            self.flush(out);
            if self.in_chat {
                self.past_chat = true;
            } else {
                self.in_chat = true;
                self.started_ms = parse_local_time(when.trim());
            }
            return;
        }
        let in_fence = self.block.as_ref().is_some_and(|b| b.kind == Kind::Reply && b.fenced);
        let (kind, text) = if in_fence {
            // Inside a code block of a reply (a `>>>>>>> REPLACE` marker
            // is code, not a notice).
            (Kind::Reply, line.as_ref())
        } else if let Some(t) = line.strip_prefix("#### ") {
            (Kind::User, t.trim_end())
        } else if let Some(t) = line.strip_prefix("> ") {
            (Kind::Notice, t.trim_end())
        } else if line.trim_end() == ">" {
            (Kind::Notice, "")
        } else {
            (Kind::Reply, line.as_ref())
        };
        let fence = kind == Kind::Reply && line.trim_start().starts_with("```");
        match &mut self.block {
            Some(b) if b.kind == kind => {
                b.text.push('\n');
                b.text.push_str(text);
                b.fenced ^= fence;
            }
            _ => {
                self.flush(out);
                self.block = Some(Block {
                    kind,
                    start: offset,
                    text: text.to_string(),
                    fenced: fence,
                });
            }
        }
    }

    fn wants_blank_lines(&self) -> bool {
        true
    }

    fn pause(&mut self, out: &mut Batch) -> Option<u64> {
        let start = self.block.as_ref()?.start;
        let before = out.messages.len();
        self.flush(out);
        out.provisional = out.messages.len() - before;
        Some(start)
    }

    fn state(&self) -> serde_json::Value {
        serde_json::json!({
            "started_ms": self.started_ms,
            "counted_at": self.counted_at,
            "in_chat": self.in_chat,
            "past_chat": self.past_chat,
        })
    }

    fn restore(&mut self, state: &serde_json::Value) {
        self.block = None;
        self.started_ms = state["started_ms"].as_i64();
        self.counted_at = state["counted_at"].as_u64();
        // A state saved before these were kept: in a chat if it had a time.
        self.in_chat = state["in_chat"].as_bool().unwrap_or(self.started_ms.is_some());
        self.past_chat = state["past_chat"].as_bool().unwrap_or(false);
    }
}

impl AiderReader {
    fn flush(&mut self, out: &mut Batch) {
        if let Some(b) = self.block.take() {
            let start = b.start;
            let m = self.message(b);
            if let Some(u) = m.usage.as_ref().filter(|_| self.counted_at != Some(start)) {
                out.usage.add(u);
                self.counted_at = Some(start);
            }
            out.messages.push(m);
        }
    }

    fn message(&self, b: Block) -> Message {
        let role = match b.kind {
            Kind::User => Role::User,
            Kind::Notice => Role::System,
            Kind::Reply => Role::Assistant,
        };
        let mut m = Message::new(role, b.text.trim().to_string(), b.start);
        m.at_ms = self.started_ms;
        if b.kind == Kind::Notice {
            m.usage = b.text.lines().find_map(tokens_line);
        }
        m
    }
}

/// `Tokens: 2.1k sent, 1.0k cache write, 85 received. Cost: …`
fn tokens_line(line: &str) -> Option<Usage> {
    let rest = line.trim().strip_prefix("Tokens:")?;
    let rest = rest.split(". ").next().unwrap_or(rest);
    let mut usage = Usage::default();
    for part in rest.split(',') {
        let mut words = part.trim().trim_end_matches('.').split_whitespace();
        let n = count(words.next()?)?;
        match words.collect::<Vec<_>>().join(" ").as_str() {
            "sent" => usage.input += n,
            "received" => usage.output += n,
            "cache write" => usage.cache_write += n,
            "cache hit" => usage.cache_read += n,
            _ => {}
        }
    }
    // aider's "sent" includes the cached part.
    usage.input -= usage.cache_read.min(usage.input);
    Some(usage)
}

/// `2.1k`, `85`, `1.2M` → tokens. `2.1k` loses the precision aider dropped.
fn count(s: &str) -> Option<i64> {
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1_000.0),
        'M' => (&s[..s.len() - 1], 1_000_000.0),
        _ => (s, 1.0),
    };
    num.parse::<f64>().ok().map(|n| (n * mult).round() as i64)
}

/// One chat in a history file, which holds every chat aider had there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chat {
    /// Where its `# aider chat started at` heading begins.
    pub offset: u64,
    /// The heading's time as written (local, to the second).
    pub started: String,
}

impl Chat {
    /// The heading's time, read as UTC (as the reader stamps messages).
    pub fn started_ms(&self) -> Option<i64> {
        parse_local_time(&self.started)
    }
}

/// The chats a history file holds, in the order aider appended them.
pub fn chats(bytes: &[u8]) -> Vec<Chat> {
    let mut found = Vec::new();
    let mut offset = 0u64;
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        if let Some(when) = line.strip_prefix(CHAT_STARTED.as_bytes()) {
            found.push(Chat {
                offset,
                started: String::from_utf8_lossy(when).trim().to_string(),
            });
        }
        offset += line.len() as u64;
    }
    found
}

/// The session id of a chat in the history file `path` (as the index keys
/// it): `aider-20261129T115426-<8 hex digits of the path's SHA-256>`. The
/// file has no ids of its own; the heading's time tells a file's chats
/// apart (aider writes one a second at most per process) and the path
/// tells files apart. Stable: the same chat always gets the same id.
pub fn session_id(path: &Path, chat: &Chat) -> String {
    let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    let when: String = chat.started.chars().filter(char::is_ascii_digit).collect();
    let (date, time) = when.split_at(when.len().min(8));
    format!("aider-{date}T{time}-{hash}")
}

/// The heading time a session id names (`20261129T115426`), comparable
/// between ids of one file; `None` for an id `session_id` did not make.
pub fn session_time(id: &str) -> Option<&str> {
    let rest = id.strip_prefix("aider-")?;
    let (when, hash) = rest.split_once('-')?;
    (when.len() == 15 && hash.len() == 8).then_some(when)
}

/// Where the chat of session `id` begins in the history file `path` holding
/// `bytes`: its part of the file runs from there.
pub fn session_offset(path: &Path, bytes: &[u8], id: &str) -> Option<u64> {
    chats(bytes)
        .into_iter()
        .find(|c| session_id(path, c) == id)
        .map(|c| c.offset)
}

/// `2026-11-29 08:10:00`, a local time; read as UTC (the file has no zone).
fn parse_local_time(s: &str) -> Option<i64> {
    super::model::parse_time(&format!("{}Z", s.replacen(' ', "T", 1)))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::transcript::{Format, read_file};

    fn history() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts/aider/.aider.chat.history.md")
    }

    /// Recorded from aider 0.86.2 against a mock model: a whole-file edit,
    /// a question, `/run`, `/exit`.
    #[test]
    fn a_history_reads_into_user_reply_and_notice_messages() {
        let b = read_file(&history(), Format::Aider).unwrap();
        let got: Vec<(&str, &str)> = b
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.text.lines().next().unwrap_or("")))
            .collect();
        assert_eq!(
            got,
            [
                ("system", "Update git name with: git config user.name \"Your Name\""),
                ("user", "EDIT add a greeting to hello.py"),
                ("assistant", "I'll add a greeting to `hello.py`."),
                ("system", "Tokens: 730 sent, 27 received."),
                ("user", "what does it print?"),
                ("assistant", "Mock reply to: Reply in English."),
                ("system", "Tokens: 788 sent, 8 received."),
                ("user", "/run python3 hello.py"),
                (
                    "system",
                    "Add 0.0k tokens of command output to the chat? (Y)es/(N)o [Yes]: y"
                ),
                ("user", "/exit"),
            ]
        );
        assert!(
            b.messages[0]
                .text
                .contains("\nAider v0.86.2\nModel: openai/mock with whole edit format\n")
        );
        assert_eq!(
            b.messages[2].text,
            "I'll add a greeting to `hello.py`.\n\nhello.py\n```python\nprint(\"hello, axolotl\")\n```"
        );
        assert_eq!(
            b.messages[3].text,
            "Tokens: 730 sent, 27 received.\nApplied edit to hello.py"
        );
        assert!(
            b.messages.iter().all(|m| !m.text.ends_with(' ')),
            "no markdown line breaks"
        );
        assert_eq!((b.usage.input, b.usage.output), (730 + 788, 27 + 8));
        assert_eq!(
            b.messages[0].at_ms,
            crate::transcript::model::parse_time("2026-11-29T11:54:26Z")
        );
    }

    #[test]
    fn a_multi_line_prompt_is_one_message() {
        let mut r = AiderReader::default();
        let mut out = Batch::default();
        for (i, line) in ["#### add a greeting  ", "#### and keep it short  ", "", "Done."]
            .iter()
            .enumerate()
        {
            r.line(line.as_bytes(), i as u64 * 30, &mut out);
        }
        r.pause(&mut out);
        assert_eq!(out.messages[0].text, "add a greeting\nand keep it short");
        assert_eq!(out.messages[1].text, "Done.");
    }

    #[test]
    fn the_last_block_is_provisional_and_read_again_when_it_grows() {
        let mut r = AiderReader::default();
        let mut out = Batch::default();
        r.line(b"#### hi", 0, &mut out);
        r.line(b"first part of the reply", 8, &mut out);
        assert_eq!(out.messages.len(), 1, "the user block ended when the reply began");
        assert_eq!(r.pause(&mut out), Some(8));
        assert_eq!(out.provisional, 1);
        assert_eq!(out.messages[1].text, "first part of the reply");
    }

    #[test]
    fn a_token_notice_at_the_end_counts_once_across_reads() {
        let lines: [&[u8]; 3] = [b"#### hi  ", b"Hello.", b"> Tokens: 700 sent, 9 received.  "];
        let mut r = AiderReader::default();
        let mut out = Batch::default();
        for (i, line) in lines.iter().enumerate() {
            r.line(line, i as u64 * 40, &mut out);
        }
        assert_eq!(r.pause(&mut out), Some(80));
        assert_eq!((out.usage.input, out.usage.output), (700, 9));
        // The next read starts at the notice again, and it grew.
        let state = r.state();
        let mut again = AiderReader::default();
        again.restore(&state);
        let mut more = Batch::default();
        again.line(lines[2], 80, &mut more);
        again.line(b"> Applied edit to hello.py  ", 120, &mut more);
        again.line(b"#### next  ", 160, &mut more);
        assert!(more.usage.is_zero(), "{:?}", more.usage);
        assert_eq!(
            more.messages[0].text,
            "Tokens: 700 sent, 9 received.\nApplied edit to hello.py"
        );
    }

    #[test]
    fn token_lines_parse_with_cache_parts() {
        let u = tokens_line("Tokens: 12k sent, 10k cache hit, 1.5k received. Cost: $0.01").unwrap();
        assert_eq!(
            u,
            Usage {
                input: 2000,
                output: 1500,
                cache_read: 10000,
                cache_write: 0
            }
        );
        assert!(tokens_line("Applied edit to hello.py").is_none());
    }

    const TWO_CHATS: &str = "\n# aider chat started at 2026-11-29 11:54:26\n\n#### first  \n\nOne.\n\n\
        # aider chat started at 2026-11-29 12:01:09\n\n#### second  \n\nTwo.\n";

    #[test]
    fn a_history_splits_into_chats_at_their_headings() {
        let got = chats(TWO_CHATS.as_bytes());
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].started, "2026-11-29 11:54:26");
        assert_eq!(got[1].started, "2026-11-29 12:01:09");
        for c in &got {
            assert!(TWO_CHATS[c.offset as usize..].starts_with("# aider chat started at "));
        }
        assert_eq!(
            got[1].started_ms(),
            crate::transcript::model::parse_time("2026-11-29T12:01:09Z")
        );
    }

    #[test]
    fn a_chats_session_id_names_its_time_and_file_and_finds_its_offset_again() {
        let path = Path::new("/w/repo/.aider.chat.history.md");
        let got = chats(TWO_CHATS.as_bytes());
        let (a, b) = (session_id(path, &got[0]), session_id(path, &got[1]));
        assert!(a.starts_with("aider-20261129T115426-"), "{a}");
        assert_eq!(a, session_id(path, &got[0]), "stable");
        assert_ne!(a, session_id(Path::new("/w/other/.aider.chat.history.md"), &got[0]));
        assert!(session_time(&a) < session_time(&b));
        assert_eq!(session_time("aider-1"), None);
        assert_eq!(session_offset(path, TWO_CHATS.as_bytes(), &b), Some(got[1].offset));
        assert_eq!(session_offset(path, TWO_CHATS.as_bytes(), "aider-1"), None);
    }

    #[test]
    fn a_chats_reader_stops_at_the_next_chats_heading() {
        let mut r = AiderReader::default();
        let mut out = Batch::default();
        let mut offset = 0;
        for line in TWO_CHATS.split_inclusive('\n') {
            r.line(line.trim_end_matches('\n').as_bytes(), offset, &mut out);
            offset += line.len() as u64;
        }
        r.pause(&mut out);
        let texts: Vec<&str> = out.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["first", "One."]);
        // The next read, from the saved state, stays out of the other chat.
        let mut again = AiderReader::default();
        again.restore(&r.state());
        let mut more = Batch::default();
        again.line(b"#### appended to the second chat  ", offset, &mut more);
        again.pause(&mut more);
        assert!(more.messages.is_empty(), "{more:?}");
    }

    #[test]
    fn reading_from_a_chats_offset_yields_only_that_chat() {
        let second = &chats(TWO_CHATS.as_bytes())[1];
        let mut r = AiderReader::default();
        let mut out = Batch::default();
        let mut offset = second.offset;
        for line in TWO_CHATS[second.offset as usize..].split_inclusive('\n') {
            r.line(line.trim_end_matches('\n').as_bytes(), offset, &mut out);
            offset += line.len() as u64;
        }
        r.pause(&mut out);
        let texts: Vec<&str> = out.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["second", "Two."]);
        assert_eq!(out.messages[0].at_ms, second.started_ms());
    }
}
