//! The harnesses' own transcripts (docs/design.md §7): readers for each native
//! format, the normalized message they produce, incremental tailing of a
//! growing file, and indexing into SQLite (FTS5) for search.
//!
//! Readers are pure: bytes in, messages out. Every reader is tolerant: a line
//! it cannot parse is counted as malformed and skipped, a line of a kind it
//! does not know is counted and ignored; neither ever stops the reading.
//! The chat-style JSONL formats (Copilot, Droid, Qwen Code, pi) share one
//! reader, `chat`, each module giving only its format's description.
//! `tail` adds the file I/O (byte offsets, partial last lines), `index` the
//! database, `watch` the file-change notifications.

pub mod aider;
pub mod auggie;
pub mod chat;
pub mod claude;
pub mod cline;
pub mod code_puppy;
pub mod codex;
pub mod continue_cli;
pub mod copilot;
pub mod crush;
pub mod document;
pub mod droid;
pub mod gemini;
pub mod gptme;
pub mod hermes;
pub mod index;
pub mod interpreter;
pub mod letta;
pub mod mini;
pub mod model;
pub mod nanocoder;
pub mod opencode;
pub mod pi;
pub mod price;
pub mod qwen;
pub mod tail;
pub mod usage;
pub mod watch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, PoisonError, RwLock};

pub use crate::values::transcript::{Batch, Format, ReadStats};
pub use model::{Message, Role, ToolCall, ToolResult, Usage};

/// The formats families declared in `config.toml` keep their sessions in,
/// by family (`harness::user`): a file of theirs is read as declared,
/// wherever it lies.
static DECLARED: LazyLock<RwLock<HashMap<String, Format>>> = LazyLock::new(Default::default);

/// Sets the declared families' formats (those of the config in force).
pub fn declare_formats(formats: HashMap<String, Format>) {
    *DECLARED.write().unwrap_or_else(PoisonError::into_inner) = formats;
}

/// The format a declared family's sessions are in.
pub fn declared_format(family: &str) -> Option<Format> {
    DECLARED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(family)
        .copied()
}

/// Where a format's files are found (the value itself is
/// `values::transcript::Format`).
impl Format {
    /// Guesses the format from where the file lives and what it is called;
    /// `None` when nothing fits.
    pub fn detect(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_string_lossy();
        let in_dir = |dir: &str| path.components().any(|c| c.as_os_str() == dir);
        if let Some((format, ..)) = database_source(path) {
            return Some(format);
        }
        if name.ends_with(".md") && name.contains("aider") {
            Some(Format::Aider)
        } else if name.ends_with(".messages.json") {
            Some(Format::Cline)
        } else if name == "conversation.jsonl"
            && path
                .parent()
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .is_some_and(|l| l == "logs")
        {
            Some(Format::Gptme)
        } else if is_copilot_session(path) {
            Some(Format::Copilot)
        } else if is_droid_session(path) {
            Some(Format::Droid)
        } else if is_auggie_session(path) {
            Some(Format::Auggie)
        } else if is_continue_session(path) {
            Some(Format::Continue)
        } else if name.ends_with(".traj.json") {
            Some(Format::Mini)
        } else if name == "messages.jsonl" && in_dir("conversations") {
            Some(Format::Letta)
        } else if is_nanocoder_session(path) {
            Some(Format::Nanocoder)
        } else if is_interpreter_conversation(path) {
            Some(Format::Interpreter)
        } else if is_code_puppy_session(path) {
            Some(Format::CodePuppy)
        } else if is_qwen_chat(path) {
            Some(Format::Qwen)
        } else if is_pi_session(path) {
            Some(Format::Pi)
        } else if (name.ends_with(".json") || name.ends_with(".jsonl")) && (in_dir("chats") || in_dir(".gemini")) {
            Some(Format::Gemini)
        } else if name.ends_with(".jsonl") && (name.starts_with("rollout-") || in_dir(".codex")) {
            Some(Format::Codex)
        } else if name.ends_with(".jsonl") {
            Some(Format::Claude)
        } else if name.ends_with(".json") {
            Some(Format::Gemini)
        } else {
            None
        }
    }
}

/// A Qwen Code chat: `<session>.jsonl` in `projects/<cwd>/chats/` (Gemini's
/// chats are `tmp/<project>/chats/session-*`, Claude's lie in
/// `projects/<cwd>/` itself), or anywhere under `.qwen`.
fn is_qwen_chat(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let named = |p: Option<&Path>, n: &str| p.and_then(Path::file_name).is_some_and(|f| f == n);
    let chats = path.parent();
    let projects = chats.and_then(Path::parent).and_then(Path::parent);
    name.ends_with(".jsonl")
        && (path.components().any(|c| c.as_os_str() == ".qwen")
            || (named(chats, "chats") && named(projects, "projects") && !name.starts_with("session-")))
}

/// A Copilot session: `events.jsonl` in `session-state/<session>/`.
fn is_copilot_session(path: &Path) -> bool {
    let state = path.parent().and_then(Path::parent).and_then(Path::file_name);
    path.file_name().is_some_and(|n| n == "events.jsonl") && state.is_some_and(|s| s == "session-state")
}

/// A Droid session: `.jsonl` in `.factory/sessions/-<cwd>/`.
fn is_droid_session(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let folder = path.parent().and_then(Path::file_name).map(|f| f.to_string_lossy());
    let sessions = path.parent().and_then(Path::parent);
    let factory = sessions.and_then(Path::parent).and_then(Path::file_name);
    name.ends_with(".jsonl")
        && folder.is_some_and(|f| f.starts_with('-') && !f.starts_with("--"))
        && sessions.and_then(Path::file_name).is_some_and(|s| s == "sessions")
        && factory.is_some_and(|f| f == ".factory")
}

/// An Auggie session: `.json` in `.augment/sessions/`.
fn is_auggie_session(path: &Path) -> bool {
    let sessions = path.parent();
    let augment = sessions.and_then(Path::parent).and_then(Path::file_name);
    path.extension().is_some_and(|e| e == "json")
        && sessions.and_then(Path::file_name).is_some_and(|s| s == "sessions")
        && augment.is_some_and(|a| a == ".augment")
}

/// A Continue session: `.json` in `.continue/sessions/` (not its index,
/// `sessions.json`).
fn is_continue_session(path: &Path) -> bool {
    let sessions = path.parent();
    let home = sessions.and_then(Path::parent).and_then(Path::file_name);
    path.extension().is_some_and(|e| e == "json")
        && path.file_stem().is_some_and(|s| s != "sessions")
        && sessions.and_then(Path::file_name).is_some_and(|s| s == "sessions")
        && home.is_some_and(|a| a == ".continue")
}

/// A nanocoder session: `<uuid>.json` in `nanocoder/sessions/` (beside
/// its index, `sessions.json`).
fn is_nanocoder_session(path: &Path) -> bool {
    let sessions = path.parent();
    let data = sessions.and_then(Path::parent).and_then(Path::file_name);
    path.extension().is_some_and(|e| e == "json")
        && path.file_stem().is_some_and(|s| s != "sessions")
        && sessions.and_then(Path::file_name).is_some_and(|s| s == "sessions")
        && data.is_some_and(|d| d == "nanocoder")
}

/// An Open Interpreter conversation: `.json` in `open-interpreter/conversations/`.
fn is_interpreter_conversation(path: &Path) -> bool {
    let conversations = path.parent();
    let config = conversations.and_then(Path::parent).and_then(Path::file_name);
    path.extension().is_some_and(|e| e == "json")
        && conversations
            .and_then(Path::file_name)
            .is_some_and(|c| c == "conversations")
        && config.is_some_and(|c| c == "open-interpreter")
}

/// A Code Puppy session: `.json` in `.code_puppy/autosaves/` (or
/// `code_puppy/autosaves/` in an XDG cache folder), not its `_meta.json`
/// sidecar.
fn is_code_puppy_session(path: &Path) -> bool {
    let autosaves = path.parent();
    let home = autosaves.and_then(Path::parent).and_then(Path::file_name);
    path.extension().is_some_and(|e| e == "json")
        && path
            .file_stem()
            .is_some_and(|s| !s.to_string_lossy().ends_with("_meta"))
        && autosaves.and_then(Path::file_name).is_some_and(|a| a == "autosaves")
        && home.is_some_and(|h| h == ".code_puppy" || h == "code_puppy")
}

/// A pi session: `.jsonl` in `sessions/--<cwd>--/`, or anywhere under `.pi`.
fn is_pi_session(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let folder = path.parent().and_then(Path::file_name).map(|f| f.to_string_lossy());
    let in_sessions = path
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|f| f == "sessions");
    name.ends_with(".jsonl")
        && (path.components().any(|c| c.as_os_str() == ".pi")
            || (in_sessions && folder.is_some_and(|f| f.len() >= 4 && f.starts_with("--") && f.ends_with("--"))))
}

/// What one read of a session kept as one JSON document (Auggie's,
/// Continue's) produced: its messages, how many records are read for good,
/// the key of the last of them (Auggie's request id, a digest of
/// Continue's item), and whether it started again from the first record
/// (the key was no longer where it was: the history was cut or
/// summarized, and what was read of it before is replaced).
#[derive(Debug, Default)]
pub struct DocumentRead {
    pub batch: Batch,
    pub records_done: usize,
    pub last_key: Option<String>,
    pub reset: bool,
}

/// A line-oriented reader (JSONL, markdown). Pure: it sees one complete line
/// at a time, never the file.
pub trait LineReader: Send {
    /// One complete line without its newline; `offset` is where it starts.
    fn line(&mut self, line: &[u8], offset: u64, out: &mut Batch);

    /// Whether blank lines matter (markdown paragraphs); JSONL skips them.
    fn wants_blank_lines(&self) -> bool {
        false
    }

    /// No more input for now. A reader holding an unfinished block emits it
    /// as provisional and returns the offset to resume from (the block's
    /// start), so the next read sees the block again, whole.
    fn pause(&mut self, _out: &mut Batch) -> Option<u64> {
        None
    }

    /// The reader's own state to keep between reads (JSON), and its
    /// restore; restoring `Null` starts afresh (the file was replaced).
    fn state(&self) -> serde_json::Value {
        serde_json::Value::Null
    }

    fn restore(&mut self, _state: &serde_json::Value) {}
}

/// A fresh reader for a line-oriented format (a Gemini chat in the older
/// `.json` shape is one document instead, as are the sessions of
/// `document_parser`'s formats; opencode and Crush keep rows in a
/// database).
pub fn line_reader(format: Format, link: Option<claude::SubagentLink>) -> Option<Box<dyn LineReader>> {
    match format {
        Format::Opencode
        | Format::Crush
        | Format::Hermes
        | Format::Auggie
        | Format::Continue
        | Format::Cline
        | Format::Nanocoder
        | Format::Mini
        | Format::Interpreter
        | Format::CodePuppy => None,
        Format::Claude => Some(Box::new(claude::ClaudeReader::new(link))),
        Format::Codex => Some(Box::new(codex::CodexReader::default())),
        Format::Aider => Some(Box::new(aider::AiderReader::default())),
        Format::Gemini => Some(Box::new(gemini::GeminiReader::default())),
        Format::Gptme => Some(Box::new(gptme::GptmeReader)),
        Format::Qwen | Format::Pi | Format::Copilot | Format::Droid | Format::Letta => {
            chat_format(format).map(|f| Box::new(chat::ChatReader::new(f)) as Box<dyn LineReader>)
        }
    }
}

/// The description of a chat-style JSONL format, read by `chat::ChatReader`.
pub fn chat_format(format: Format) -> Option<&'static chat::ChatFormat> {
    match format {
        Format::Qwen => Some(&qwen::FORMAT),
        Format::Pi => Some(&pi::FORMAT),
        Format::Copilot => Some(&copilot::FORMAT),
        Format::Droid => Some(&droid::FORMAT),
        Format::Letta => Some(&letta::FORMAT),
        _ => None,
    }
}

/// The parser of a format whose session is one JSON document of records,
/// read again whole at each change: it reads the records after the first
/// `done`, the last of which had the key `last`; with `finished`, the
/// last is read for good.
pub type DocumentParser = fn(&[u8], usize, Option<&str>, bool) -> DocumentRead;

pub fn document_parser(format: Format) -> Option<DocumentParser> {
    match format {
        Format::Auggie => Some(auggie::parse),
        Format::Continue => Some(continue_cli::parse),
        Format::Cline => Some(cline::parse),
        Format::Nanocoder => Some(nanocoder::parse),
        Format::Mini => Some(mini::parse),
        Format::Interpreter => Some(interpreter::parse),
        Format::CodePuppy => Some(code_puppy::parse),
        _ => None,
    }
}

/// Whether a transcript is one JSON document read again whole at each
/// change, its progress counted in records rather than bytes.
pub fn is_document(format: Format, path: &Path) -> bool {
    document_parser(format).is_some() || (format == Format::Gemini && gemini::is_document(path))
}

/// Whether a transcript is still there: its file, or for opencode its
/// session's row in the database.
pub fn source_exists(path: &Path) -> bool {
    match database_source(path) {
        Some((Format::Crush, db, session)) => crush::has_session(&db, &session),
        Some((Format::Hermes, db, session)) => hermes::has_session(&db, &session),
        Some((_, db, session)) => opencode::has_session(&db, &session),
        None => path.is_file(),
    }
}

/// A transcript kept as rows of a harness's database (opencode, Crush,
/// Hermes Agent):
/// its format, the database and the session, from the source's name.
pub fn database_source(path: &Path) -> Option<(Format, PathBuf, String)> {
    if let Some((db, session)) = opencode::split_source(path) {
        return Some((Format::Opencode, db, session));
    }
    if let Some((db, session)) = hermes::split_source(path) {
        return Some((Format::Hermes, db, session));
    }
    crush::split_source(path).map(|(db, session)| (Format::Crush, db, session))
}

/// Reads a whole file at once (tests, one-off imports): every message, with
/// the counts. Nothing is provisional at the end of a finished file.
pub fn read_file(path: &Path, format: Format) -> std::io::Result<Batch> {
    if format == Format::Hermes {
        let (db, session) = hermes::split_source(path)
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a Hermes session"))?;
        let (mut batch, mut done) = (Batch::default(), 0);
        loop {
            let (read, now, more, totals) = hermes::read_session(&db, &session, done).map_err(std::io::Error::other)?;
            batch.messages.extend(read.messages);
            batch.stats.add(&read.stats);
            batch.model = read.model.or(batch.model.take());
            batch.session_id = read.session_id;
            batch.usage = totals;
            done = now;
            if !more {
                return Ok(batch);
            }
        }
    }
    if format == Format::Crush {
        let (db, session) = crush::split_source(path)
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a Crush session"))?;
        let (mut batch, mut done) = (Batch::default(), 0);
        loop {
            let (read, more, totals) = crush::read_session(&db, &session, done, true).map_err(std::io::Error::other)?;
            batch.messages.extend(read.batch.messages);
            batch.stats.add(&read.batch.stats);
            batch.model = read.batch.model.or(batch.model.take());
            batch.session_id = read.batch.session_id;
            batch.usage = totals;
            done = read.records_done;
            if !more {
                return Ok(batch);
            }
        }
    }
    if format == Format::Opencode {
        let (db, session) = opencode::split_source(path)
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not an opencode session"))?;
        let (mut batch, mut done) = (Batch::default(), 0);
        loop {
            let (read, more) = opencode::read_session(&db, &session, done, true).map_err(std::io::Error::other)?;
            batch.messages.extend(read.batch.messages);
            batch.usage.add(&read.batch.usage);
            batch.stats.add(&read.batch.stats);
            batch.model = read.batch.model.or(batch.model.take());
            batch.session_id = read.batch.session_id;
            done = read.records_done;
            if !more {
                batch.provisional = 0;
                return Ok(batch);
            }
        }
    }
    let bytes = std::fs::read(path)?;
    if format == Format::Gemini && gemini::is_document(path) {
        return Ok(gemini::parse(&bytes, 0, true).batch);
    }
    if let Some(parse) = document_parser(format) {
        return Ok(parse(&bytes, 0, None, true).batch);
    }
    let link = if format == Format::Claude {
        claude::SubagentLink::beside(path)
    } else {
        None
    };
    let mut reader = line_reader(format, link).expect("line formats have a line reader");
    let mut batch = Batch::default();
    let mut tail = tail::Lines::default();
    tail.feed(&bytes, 0, reader.as_mut(), &mut batch);
    // A last line without its newline is still a line of a finished file.
    tail.finish(reader.as_mut(), &mut batch);
    batch.provisional = 0;
    if format == Format::Droid {
        batch.usage = droid::totals(path).unwrap_or_default();
    }
    Ok(batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_detected_from_their_usual_paths() {
        let f = |p: &str| Format::detect(Path::new(p));
        assert_eq!(f("/h/.claude/projects/-h-p/1111.jsonl"), Some(Format::Claude));
        assert_eq!(
            f("/h/.claude/projects/-h-p/1111/subagents/agent-a1.jsonl"),
            Some(Format::Claude)
        );
        assert_eq!(
            f("/h/.codex/sessions/2026/11/29/rollout-2026-11-29T07-47-04-01a2.jsonl"),
            Some(Format::Codex)
        );
        assert_eq!(f("/h/.gemini/tmp/abc/chats/session-1.json"), Some(Format::Gemini));
        assert_eq!(
            f("/h/.gemini/tmp/narwhal/chats/session-2026-11-29T11-52-33573076.jsonl"),
            Some(Format::Gemini)
        );
        assert_eq!(f("/src/app/.aider.chat.history.md"), Some(Format::Aider));
        assert_eq!(
            f("/h/.qwen/projects/-h-p/chats/11111111-2222-4333-8444-555555555555.jsonl"),
            Some(Format::Qwen)
        );
        assert_eq!(f("/srv/qwen-home/projects/-h-p/chats/1111.jsonl"), Some(Format::Qwen));
        assert_eq!(
            f("/h/.pi/agent/sessions/--h-p--/2026-12-02T13-55-50-747Z_01a2370a.jsonl"),
            Some(Format::Pi)
        );
        assert_eq!(f("/srv/pi/sessions/--h-p--/2026_01a2.jsonl"), Some(Format::Pi));
        assert_eq!(
            f("/h/.copilot/session-state/1d28b8d7-9177-43dd-822b-b229d2e65fa2/events.jsonl"),
            Some(Format::Copilot)
        );
        assert_eq!(
            f("/h/.factory/sessions/-h-p/5d74fe8e-c559-46da-954f-bb811ddde92e.jsonl"),
            Some(Format::Droid)
        );
        assert_eq!(
            f("/h/.augment/sessions/7940b1a3-83cb-4dfb-8ef2-4cb5387f434a.json"),
            Some(Format::Auggie)
        );
        assert_eq!(
            f("/h/.continue/sessions/27d493b1-9999-4711-838e-5fade3b5829b.json"),
            Some(Format::Continue)
        );
        assert_eq!(f("/h/.continue/sessions/sessions.json"), Some(Format::Gemini));
        assert_eq!(
            f("/h/.config/open-interpreter/conversations/hello__December_06_2026_06-12-06.json"),
            Some(Format::Interpreter)
        );
        assert_eq!(
            f("/h/.code_puppy/autosaves/auto_session_20261206_085116_965262_25529.json"),
            Some(Format::CodePuppy)
        );
        assert_eq!(f("/c/code_puppy/autosaves/3f1c.json"), Some(Format::CodePuppy));
        assert_ne!(f("/h/.code_puppy/autosaves/x_meta.json"), Some(Format::CodePuppy));
        assert_eq!(
            f("/h/.cline/data/sessions/1796527564673_8vu81/1796527564673_8vu81.messages.json"),
            Some(Format::Cline)
        );
        assert_eq!(
            f("/h/.local/share/gptme/logs/2026-12-06-crawling-yellow-elephant/conversation.jsonl"),
            Some(Format::Gptme)
        );
        assert_eq!(f("/h/elsewhere/sessions/7940b1a3.json"), Some(Format::Gemini));
        assert_eq!(f("/src/app/notes.txt"), None);
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/transcripts")
                .join(name),
        )
        .unwrap()
    }

    /// A poor man's fuzzing: every line of every fixture, cut at many points
    /// and with bytes overwritten, read by every reader. Nothing panics, and
    /// every damaged line is accounted for.
    #[test]
    fn no_cut_or_corrupted_line_makes_a_reader_panic() {
        let files = [
            "claude/11111111-2222-4333-8444-555555555555.jsonl",
            "claude/damaged.jsonl",
            "codex/rollout-2026-11-29T07-47-04-01a22645-9705-7352-9a7c-e05a97022f2e.jsonl",
            "aider/.aider.chat.history.md",
            "gemini/session-2026-11-29T11-52-33573076.jsonl",
            "qwen/11111111-2222-4333-8444-555555555555.jsonl",
            "pi/2026-12-02T13-55-50-747Z_01a2370a-495a-7157-ab2c-799bb703a8e4.jsonl",
            "copilot/1d28b8d7-9177-43dd-822b-b229d2e65fa2.jsonl",
            "droid/5d74fe8e-c559-46da-954f-bb811ddde92e.jsonl",
            "gptme/permtest-yes/conversation.jsonl",
            "letta/messages.jsonl",
        ];
        for file in files {
            let bytes = fixture(file);
            for format in [
                Format::Claude,
                Format::Codex,
                Format::Aider,
                Format::Gemini,
                Format::Qwen,
                Format::Pi,
                Format::Copilot,
                Format::Droid,
                Format::Gptme,
                Format::Letta,
            ] {
                for line in bytes.split(|b| *b == b'\n') {
                    for cut in (0..line.len()).step_by(5) {
                        let mut reader = line_reader(format, None).unwrap();
                        let mut out = Batch::default();
                        reader.line(&line[..cut], 0, &mut out);
                        let mut bad = line.to_vec();
                        bad[cut] = [b'"', b'{', b']', 0xff][cut % 4];
                        reader.line(&bad, 0, &mut out);
                        reader.pause(&mut out);
                    }
                }
            }
        }
        // The older whole-document shape, cut anywhere.
        let doc = fixture("gemini/session-2026-11-29T11-52-33573076.jsonl");
        let lines: Vec<serde_json::Value> = doc
            .split(|b| *b == b'\n')
            .filter_map(|l| serde_json::from_slice(l).ok())
            .filter(|r: &serde_json::Value| r.get("id").is_some())
            .collect();
        let doc = serde_json::json!({ "sessionId": "s", "messages": lines }).to_string();
        for cut in (0..doc.len()).step_by(11) {
            let read = gemini::parse(&doc.as_bytes()[..cut], 0, false);
            assert!(read.batch.stats.malformed >= 1 || !read.batch.messages.is_empty() || cut < 2);
        }
    }
}
