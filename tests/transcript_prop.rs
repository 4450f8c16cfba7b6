//! Property tests (docs/design.md §11) of the transcript readers, which
//! parse bytes we do not control: Claude, Codex, Gemini, Qwen, pi, Copilot and Droid JSONL,
//! Gemini's older JSON document, aider markdown, opencode's and Crush's
//! stored rows. Inputs are arbitrary bytes, and real fixture lines cut,
//! overwritten, padded and interleaved with garbage; proptest shrinks any
//! failure to a small case. Case counts keep the file quick in a debug
//! build; `PROPTEST_CASES=N` runs N cases of each property instead, for a
//! longer hunt. The frame decoder's are in `frame_prop.rs`, the emulator's
//! in `emulator_prop.rs`.

use std::path::Path;

use agents::transcript::opencode::{self, StoredMessage};
use agents::transcript::tail::Lines;
use agents::transcript::{Batch, Format, gemini, line_reader};
use proptest::prelude::*;

#[path = "common/prop.rs"]
mod property;
use property::cases;

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcripts")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The JSONL fixtures, each with its format.
const JSONL: [(Format, &str); 9] = [
    (Format::Claude, "claude/11111111-2222-4333-8444-555555555555.jsonl"),
    (Format::Claude, "claude/damaged.jsonl"),
    (
        Format::Codex,
        "codex/rollout-2026-11-29T07-47-04-01a22645-9705-7352-9a7c-e05a97022f2e.jsonl",
    ),
    (
        Format::Codex,
        "codex/rollout-2026-11-29T10-47-05-01a226ea-66f4-7fc3-bbaa-d4aa6bcff7b0.jsonl",
    ),
    (Format::Gemini, GEMINI),
    (Format::Qwen, "qwen/11111111-2222-4333-8444-555555555555.jsonl"),
    (
        Format::Pi,
        "pi/2026-12-02T13-55-50-747Z_01a2370a-495a-7157-ab2c-799bb703a8e4.jsonl",
    ),
    (Format::Copilot, "copilot/1d28b8d7-9177-43dd-822b-b229d2e65fa2.jsonl"),
    (Format::Droid, "droid/5d74fe8e-c559-46da-954f-bb811ddde92e.jsonl"),
];

const AIDER: &str = "aider/.aider.chat.history.md";
const OPENCODE: &str = "opencode/ses_dc9085082ffe86shbty0VfrLIZ.jsonl";
const GEMINI: &str = "gemini/session-2026-11-29T11-52-33573076.jsonl";

/// The recorded Gemini chat's messages as one document, the shape older
/// Gemini CLIs wrote.
fn gemini_document() -> Vec<u8> {
    let records: Vec<serde_json::Value> = fixture(GEMINI)
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .filter(|r| r.get("id").is_some())
        .collect();
    serde_json::json!({ "sessionId": "s", "messages": records })
        .to_string()
        .into_bytes()
}

const LINE_FORMATS: [Format; 8] = [
    Format::Claude,
    Format::Codex,
    Format::Gemini,
    Format::Aider,
    Format::Qwen,
    Format::Pi,
    Format::Copilot,
    Format::Droid,
];

/// Reads `bytes` as a whole file, handed over in chunks that end at `cuts`.
fn read_chunked(format: Format, bytes: &[u8], cuts: &[usize]) -> Batch {
    let mut reader = line_reader(format, None).expect("a line format");
    let mut lines = Lines::default();
    let mut out = Batch::default();
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut start = 0;
    for end in cuts.into_iter().chain([bytes.len()]) {
        lines.feed(&bytes[start..end], start as u64, reader.as_mut(), &mut out);
        start = end;
    }
    lines.finish(reader.as_mut(), &mut out);
    out
}

/// One line, given to a fresh reader on its own.
fn read_line(format: Format, line: &[u8]) -> Batch {
    let mut reader = line_reader(format, None).expect("a line format");
    let mut out = Batch::default();
    reader.line(line, 0, &mut out);
    reader.pause(&mut out);
    out
}

/// Whether the bytes are JSON by its grammar once invalid UTF-8 is set
/// aside: a reader may accept a line with a bad byte inside a string it
/// skips, or a number past f64's range in a field it never reads (an `E`
/// put into a time, `1E796218535630`, which `Value` refuses), but never a
/// line whose structure is broken.
fn is_json(bytes: &[u8]) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(&String::from_utf8_lossy(bytes)).is_ok()
}

/// Damage done to a line or document.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Overwrite(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
}

impl Mutation {
    fn apply(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        let at = |i: usize| i % (out.len() + 1);
        match *self {
            Mutation::Truncate(i) => out.truncate(at(i)),
            Mutation::Overwrite(i, b) if !out.is_empty() => {
                let i = i % out.len();
                out[i] = b;
            }
            Mutation::Overwrite(..) => {}
            Mutation::Insert(i, b) => {
                let i = at(i);
                out.insert(i, b);
            }
            Mutation::Delete(i, n) => {
                let i = at(i);
                let end = (i + n).min(out.len());
                out.drain(i..end);
            }
        }
        out
    }
}

/// A mutation that never makes a line into two (a reader sees one line).
fn mutation() -> impl Strategy<Value = Mutation> {
    let byte = any::<u8>().prop_map(|b| if b == b'\n' { b'"' } else { b });
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), byte.clone()).prop_map(|(i, b)| Mutation::Overwrite(i, b)),
        (any::<usize>(), byte).prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), 1..64usize).prop_map(|(i, n)| Mutation::Delete(i, n)),
    ]
}

/// A line that is not JSON at all (nor blank, which readers skip).
fn garbage_line() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>().prop_filter("one line", |b| *b != b'\n'), 1..80).prop_filter(
        "not JSON, not blank",
        |g| {
            let g = g.strip_suffix(b"\r").unwrap_or(g);
            !g.iter().all(u8::is_ascii_whitespace) && !is_json(g)
        },
    )
}

/// The messages without where they were read from.
fn placeless(batch: &Batch) -> Vec<agents::transcript::Message> {
    batch
        .messages
        .iter()
        .cloned()
        .map(|mut m| {
            m.offset = 0;
            m
        })
        .collect()
}

/// Bytes with newlines in them, so that lines start and end.
fn byte_soup() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            8 => any::<u8>(),
            1 => Just(b'\n'),
            1 => Just(b'{'),
            1 => Just(b'"'),
        ],
        0..1500,
    )
}

proptest! {
    #![proptest_config(cases(256))]

    /// Any bytes, cut anywhere: no reader panics, every line read is
    /// accounted for, and how the bytes were cut changes nothing.
    #[test]
    fn any_bytes_read_the_same_at_any_chunking_and_never_panic(
        bytes in byte_soup(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        for format in LINE_FORMATS {
            let whole = read_chunked(format, &bytes, &[]);
            let chunked = read_chunked(format, &bytes, &cuts);
            prop_assert_eq!(&whole, &chunked, "{:?}", format);
            prop_assert!(whole.stats.malformed + whole.stats.unknown <= whole.stats.lines);
        }
        let read = gemini::parse(&bytes, 0, true);
        if !is_json(&bytes) {
            prop_assert_eq!(read.batch.stats.malformed, 1);
            prop_assert!(read.batch.messages.is_empty());
        }
        // The same bytes as an opencode row's data and as one of its parts.
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let row = StoredMessage { id: "msg_1".into(), data: text.clone(), parts: vec![text] };
        let read = opencode::parse(&[row], 0, true);
        if !is_json(&bytes) {
            prop_assert_eq!(read.batch.stats.malformed, 1);
            prop_assert!(read.batch.messages.is_empty());
        }
        // As a Crush message's parts, of every role.
        for role in ["user", "assistant", "tool", "system"] {
            let row = agents::transcript::crush::StoredMessage {
                role: role.into(),
                parts: String::from_utf8_lossy(&bytes).into_owned(),
                ..Default::default()
            };
            let read = agents::transcript::crush::parse(&[row], 0, false);
            if !is_json(&bytes) {
                prop_assert_eq!(read.batch.stats.malformed, 1);
                prop_assert!(read.batch.messages.is_empty());
            }
        }
        // As a recording of rows, cut anywhere.
        for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len()] {
            let (rows, _) = opencode::parse_recording(&bytes[..cut]);
            opencode::parse(&rows, 0, cut == bytes.len());
        }
    }

    /// A real line, damaged: still no panic; a line that is no longer JSON
    /// is counted malformed once and yields nothing.
    #[test]
    fn a_damaged_fixture_line_is_counted_and_skipped(
        file in 0..JSONL.len(),
        pick in any::<prop::sample::Index>(),
        damage in prop::collection::vec(mutation(), 1..4),
    ) {
        let (format, name) = JSONL[file];
        let bytes = fixture(name);
        let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect();
        let mut line = pick.get(&lines).to_vec();
        for m in &damage {
            line = m.apply(&line);
        }
        let out = read_line(format, &line);
        if !is_json(&line) {
            prop_assert_eq!((out.stats.malformed, out.stats.unknown), (1, 0));
            prop_assert!(out.messages.is_empty());
        } else {
            prop_assert!(out.stats.malformed + out.stats.unknown <= 1, "{:?}", out.stats);
        }
        // The other readers take it without panicking too.
        for other in LINE_FORMATS {
            read_line(other, &line);
        }
    }

    /// Garbage lines between a fixture's lines cost exactly one malformed
    /// count each; everything else reads as without them.
    #[test]
    fn valid_lines_interleaved_with_garbage_still_parse(
        file in 0..JSONL.len(),
        garbage in prop::collection::vec((any::<prop::sample::Index>(), garbage_line()), 1..8),
    ) {
        let (format, name) = JSONL[file];
        let bytes = fixture(name);
        let lines: Vec<Vec<u8>> = bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
        let mut mixed = lines.clone();
        for (at, g) in &garbage {
            mixed.insert(at.index(mixed.len() + 1), g.clone());
        }
        let clean = read_chunked(format, &lines.join(&b'\n'), &[]);
        let dirty = read_chunked(format, &mixed.join(&b'\n'), &[]);
        prop_assert_eq!(placeless(&dirty), placeless(&clean));
        prop_assert_eq!(dirty.stats.malformed, clean.stats.malformed + garbage.len() as u64);
        prop_assert_eq!(dirty.stats.unknown, clean.stats.unknown);
        prop_assert_eq!(&dirty.session_id, &clean.session_id);
        prop_assert_eq!(&dirty.model, &clean.model);
        prop_assert_eq!(&dirty.usage, &clean.usage);
    }

    /// aider's markdown has no malformed lines, but damaged ones must not
    /// upset it, wherever the file is cut.
    #[test]
    fn damaged_aider_history_never_panics_at_any_chunking(
        damage in prop::collection::vec(mutation(), 0..6),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut doc = fixture(AIDER);
        for m in &damage {
            doc = m.apply(&doc);
        }
        prop_assert_eq!(read_chunked(Format::Aider, &doc, &[]), read_chunked(Format::Aider, &doc, &cuts));
    }

    /// opencode's recorded rows, one message's data or one part damaged:
    /// never a panic; a message whose data is no longer JSON is one
    /// malformed row with no messages of its own, and the others still read.
    #[test]
    fn a_damaged_opencode_row_is_counted_never_fatal(
        pick in any::<prop::sample::Index>(),
        part in any::<Option<prop::sample::Index>>(),
        damage in prop::collection::vec(mutation(), 1..4),
        finished in any::<bool>(),
    ) {
        let (mut rows, _) = opencode::parse_recording(&fixture(OPENCODE));
        let clean = opencode::parse(&rows, 0, true).batch.messages.len();
        let at = pick.index(rows.len());
        let target = match part.filter(|_| !rows[at].parts.is_empty()) {
            Some(p) => {
                let i = p.index(rows[at].parts.len());
                &mut rows[at].parts[i]
            }
            None => &mut rows[at].data,
        };
        let mut bytes = target.clone().into_bytes();
        for m in &damage {
            bytes = m.apply(&bytes);
        }
        *target = String::from_utf8_lossy(&bytes).into_owned();
        let broken = !is_json(&bytes);
        let read = opencode::parse(&rows, 0, finished);
        prop_assert!(read.batch.provisional <= read.batch.messages.len());
        prop_assert!(read.records_done <= rows.len());
        if broken {
            prop_assert!(read.batch.stats.malformed >= 1);
            prop_assert!(read.batch.messages.len() < clean + 1);
        }
    }

    /// A whole-document Gemini chat caught mid-rewrite or damaged: never a
    /// panic; a document that is not JSON is one malformed read with no
    /// messages.
    #[test]
    fn a_damaged_gemini_chat_is_counted_never_fatal(
        damage in prop::collection::vec(mutation(), 1..4),
        finished in any::<bool>(),
        done in 0..4usize,
    ) {
        let mut doc = gemini_document();
        for m in &damage {
            doc = m.apply(&doc);
        }
        let read = gemini::parse(&doc, done, finished);
        prop_assert_eq!(read.batch.stats.lines, 1);
        if !is_json(&doc) {
            prop_assert_eq!(read.batch.stats.malformed, 1);
            prop_assert!(read.batch.messages.is_empty());
        }
        prop_assert!(read.batch.provisional <= read.batch.messages.len());
    }
}
