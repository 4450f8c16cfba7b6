//! Transcript indexing throughput (docs/design.md §10: 100 MB of JSONL under 5 s).
//!
//! `cargo bench --bench transcript_index` (release build). Generates about
//! 100 MB of Claude Code session JSONL shaped like the real thing (see
//! `../shared/reference/claude-code-*`): typed prompts, assistant replies
//! split over several lines that repeat their usage, tool calls (Bash, Read,
//! Edit, Grep) whose results are repeated in `toolUseResult`, attachments,
//! file-history snapshots and hook summaries. Then indexes it into a fresh
//! database (normalized rows + FTS5) the way the daemon does — bounded
//! steps, one transaction each — and prints the time against the budget,
//! and how long a search takes afterwards.
//!
//! `AGENTS_BENCH_MB` changes the size.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use agents::store::transcripts as db;
use agents::transcript::index;

const BUDGET_SECS: f64 = 5.0;

/// A small deterministic generator (xorshift64*): the same bytes every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: [&str; 48] = [
    "the",
    "parser",
    "returns",
    "an",
    "error",
    "when",
    "input",
    "is",
    "empty",
    "so",
    "we",
    "should",
    "handle",
    "that",
    "case",
    "before",
    "calling",
    "tokenize",
    "test",
    "fails",
    "because",
    "expected",
    "value",
    "differs",
    "let",
    "me",
    "check",
    "module",
    "function",
    "struct",
    "field",
    "config",
    "daemon",
    "socket",
    "offset",
    "transcript",
    "index",
    "query",
    "fixed",
    "updated",
    "file",
    "line",
    "build",
    "passes",
    "now",
    "with",
    "cargo",
    "clippy",
];

/// Between `min` and `min + spread` words of prose.
fn prose(rng: &mut Rng, min: usize, spread: u64) -> String {
    let words = min + rng.below(spread.max(1)) as usize;
    let mut s = String::with_capacity(words * 7);
    for i in 0..words {
        if i > 0 {
            s.push(if rng.below(14) == 0 { '\n' } else { ' ' });
        }
        s.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
    }
    s
}

/// Between `min` and `min + spread` numbered lines of code.
fn code(rng: &mut Rng, min: usize, spread: u64) -> String {
    let lines = min + rng.below(spread.max(1)) as usize;
    (0..lines)
        .map(|i| {
            format!(
                "{:>4}\t    let {}_{} = {}(&{}, {});\n",
                i + 1,
                WORDS[rng.below(48) as usize],
                rng.below(100),
                WORDS[rng.below(48) as usize],
                WORDS[rng.below(48) as usize],
                rng.below(1000)
            )
        })
        .collect()
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
    rng: Rng,
    session: String,
    n: u64,
    parent: Option<String>,
    ms: u64,
}

impl Writer<'_> {
    fn uuid(&mut self) -> String {
        let a = self.rng.next();
        let b = self.rng.next();
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            a >> 32,
            a & 0xffff,
            (a >> 16) & 0xfff,
            b & 0xfff,
            b >> 16
        )
    }

    fn stamp(&mut self) -> String {
        self.ms += 50 + self.rng.below(4000);
        let s = self.ms / 1000;
        format!(
            "2026-11-29T{:02}:{:02}:{:02}.{:03}Z",
            s / 3600 % 24,
            s / 60 % 60,
            s % 60,
            self.ms % 1000
        )
    }

    fn line(&mut self, kind: &str, body: serde_json::Value) {
        let uuid = self.uuid();
        let mut v = serde_json::json!({
            "parentUuid": self.parent,
            "isSidechain": false,
            "type": kind,
            "uuid": uuid,
            "timestamp": self.stamp(),
            "userType": "external",
            "entrypoint": "cli",
            "cwd": "/home/user/project",
            "sessionId": self.session,
            "version": "2.1.197",
            "gitBranch": "main",
        });
        if let (Some(v), serde_json::Value::Object(extra)) = (v.as_object_mut(), body) {
            v.extend(extra);
        }
        serde_json::to_writer(&mut *self.out, &v).expect("json to memory");
        self.out.push(b'\n');
        self.parent = Some(uuid);
        self.n += 1;
    }

    fn usage(&mut self) -> serde_json::Value {
        serde_json::json!({
            "input_tokens": self.rng.below(50) + 1,
            "cache_creation_input_tokens": self.rng.below(3000),
            "cache_read_input_tokens": self.rng.below(90_000),
            "output_tokens": self.rng.below(900) + 1,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        })
    }

    fn turn(&mut self) {
        let prompt = prose(&mut self.rng, 10, 60);
        let prompt_id = self.uuid();
        let snapshot_id = self.uuid();
        serde_json::to_writer(
            &mut *self.out,
            &serde_json::json!({"type": "file-history-snapshot", "messageId": snapshot_id,
                "snapshot": {"messageId": snapshot_id, "trackedFileBackups": {}, "timestamp": "2026-11-29T07:48:41.680Z"},
                "isSnapshotUpdate": false}),
        )
        .expect("json to memory");
        self.out.push(b'\n');
        self.line(
            "user",
            serde_json::json!({"message": {"role": "user", "content": prompt}, "permissionMode": "default",
                "promptId": prompt_id, "origin": {"kind": "human"}}),
        );
        if self.rng.below(3) == 0 {
            let listing = prose(&mut self.rng, 200, 1);
            self.line(
                "attachment",
                serde_json::json!({"attachment": {"type": "skill_listing", "content": listing, "skillCount": 13}}),
            );
        }
        for _ in 0..1 + self.rng.below(6) {
            let id = format!("msg_{:016x}", self.rng.next());
            let usage = self.usage();
            // A response split over lines: text, then the tool call, both
            // repeating the id and usage.
            let text = prose(&mut self.rng, 20, 120);
            self.line(
                "assistant",
                serde_json::json!({"message": {"id": id, "type": "message", "role": "assistant",
                    "model": "claude-opus-4-8", "content": [{"type": "text", "text": text}],
                    "stop_reason": "tool_use", "stop_sequence": null, "usage": usage}}),
            );
            let call = format!("toolu_{:016x}", self.rng.next());
            let (name, input, output) = match self.rng.below(4) {
                0 => (
                    "Bash",
                    serde_json::json!({"command": "cargo test --quiet 2>&1 | tail -40", "description": "Run the tests"}),
                    prose(&mut self.rng, 150, 400),
                ),
                1 => (
                    "Read",
                    serde_json::json!({"file_path": "/home/user/project/src/parser.rs"}),
                    code(&mut self.rng, 40, 160),
                ),
                2 => (
                    "Edit",
                    serde_json::json!({"file_path": "/home/user/project/src/parser.rs",
                        "old_string": code(&mut self.rng, 4, 1), "new_string": code(&mut self.rng, 6, 1)}),
                    "The file /home/user/project/src/parser.rs has been updated.".to_string(),
                ),
                _ => (
                    "Grep",
                    serde_json::json!({"pattern": "fn tokenize", "path": "src", "output_mode": "content"}),
                    code(&mut self.rng, 10, 30),
                ),
            };
            self.line(
                "assistant",
                serde_json::json!({"message": {"id": id, "type": "message", "role": "assistant",
                    "model": "claude-opus-4-8",
                    "content": [{"type": "tool_use", "id": call, "name": name, "input": input}],
                    "stop_reason": "tool_use", "stop_sequence": null, "usage": usage}}),
            );
            let is_error = self.rng.below(10) == 0;
            self.line(
                "user",
                serde_json::json!({"message": {"role": "user", "content": [{"tool_use_id": call,
                    "type": "tool_result", "content": output, "is_error": is_error}]},
                    "toolUseResult": {"stdout": output, "stderr": "", "interrupted": false, "isImage": false}}),
            );
        }
        let id = format!("msg_{:016x}", self.rng.next());
        let usage = self.usage();
        let text = prose(&mut self.rng, 30, 200);
        self.line(
            "assistant",
            serde_json::json!({"message": {"id": id, "type": "message", "role": "assistant",
                "model": "claude-opus-4-8", "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": null, "usage": usage}}),
        );
        self.line(
            "system",
            serde_json::json!({"subtype": "stop_hook_summary", "hookCount": 1,
                "hookInfos": [{"command": "agents hook Stop", "durationMs": 40}], "hookErrors": [],
                "preventedContinuation": false, "stopReason": "", "hasOutput": false, "level": "suggestion"}),
        );
    }
}

/// About `bytes` of session JSONL; returns the line count.
fn generate(bytes: usize, out: &mut Vec<u8>) -> u64 {
    let mut w = Writer {
        out,
        rng: Rng(0x9e37_79b9_7f4a_7c15),
        session: "b3f1c2d4-0000-4000-8000-000000000001".into(),
        n: 0,
        parent: None,
        ms: 0,
    };
    while w.out.len() < bytes {
        w.turn();
    }
    w.n
}

fn main() {
    let mb: usize = std::env::var("AGENTS_BENCH_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("projects/-home-user-project");
    std::fs::create_dir_all(&project).expect("project dir");
    let path = project.join("b3f1c2d4-0000-4000-8000-000000000001.jsonl");
    let mut bytes = Vec::with_capacity(mb * 1_000_000 + 1_000_000);
    let t = Instant::now();
    let lines = generate(mb * 1_000_000, &mut bytes);
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(&bytes))
        .expect("write the transcript");
    let size = bytes.len() as f64 / 1e6;
    drop(bytes);
    println!(
        "generated {size:.1} MB of Claude JSONL ({lines} lines) in {:.2} s",
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    let parsed = agents::transcript::read_file(&path, agents::transcript::Format::Claude).expect("parse");
    println!(
        "parsing alone (no database): {} messages in {:.2} s",
        parsed.messages.len(),
        t.elapsed().as_secs_f64()
    );
    drop(parsed);

    let mut conn = agents::store::open_migrated(&dir.path().join("agents.db")).expect("database");
    let t = Instant::now();
    let cpu = cpu_secs();
    let report = index::index_transcript(&mut conn, &path, "b3f1c2d4-0000-4000-8000-000000000001", None)
        .expect("index the transcript");
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_secs() - cpu;
    let db_size = db_size(dir.path());
    println!(
        "indexed {size:.1} MB → {} messages ({} malformed, {} unknown) in {secs:.2} s ({cpu:.2} s of CPU): {:.1} MB/s; database {:.1} MB",
        report.messages,
        report.malformed,
        report.unknown,
        size / secs,
        db_size
    );
    if cpu < secs * 0.8 {
        println!(
            "note: the indexer had the CPU only {:.0}% of the time (a busy machine)",
            cpu / secs * 100.0
        );
    }
    let verdict = if secs * 100.0 / size.max(1e-9) <= BUDGET_SECS {
        "within"
    } else {
        "OVER"
    };
    println!(
        "budget: 100 MB in {BUDGET_SECS:.0} s; at this rate 100 MB takes {:.2} s: {verdict} budget",
        secs * 100.0 / size
    );

    let t = Instant::now();
    let hits = db::search(&conn, &db::plain_query("tokenize parser"), None, 50).expect("search");
    println!(
        "search 'tokenize parser': {} hits (first 50) in {:.1} ms",
        hits.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
}

fn db_size(dir: &Path) -> f64 {
    ["agents.db", "agents.db-wal"]
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
        .map(|m| m.len() as f64 / 1e6)
        .sum()
}

/// User + system CPU time of this process (`/proc/self/stat`, in clock ticks
/// of 1/100 s on Linux), to tell our work from a busy machine's.
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, a)| a).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat; `after` starts at field 3.
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i).and_then(|f| f.parse::<f64>().ok()))
        .sum();
    ticks / 100.0
}
