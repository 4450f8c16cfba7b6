//! The import rules of `docs/architecture.md`, checked over `src/`: the
//! layer order of the crate's top-level modules, no cycle between them,
//! and what some subsystems take nothing of besides (modules below them,
//! outside crates). A `crate::` path in code (not in a comment) counts. And
//! where SQL may be written: in the store, and in the readers of other
//! programs' databases. And the code's shape: no function over 120 lines,
//! no file over 800.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crate's top-level modules (the folders and files directly under
/// `src/`), bottom to top: a module takes only from modules of its own
/// layer or below. Cycles within a layer are the no-cycle test's.
const LAYERS: &[&[&str]] = &[
    // Plain values several layers share instead of taking from each other.
    &["values"],
    // Small shared leaves.
    &["clock", "text", "paths", "proof", "keymap", "pty"],
    // The tool table.
    &["api"],
    // The emulator: bytes in, screen out, its cells `values::screen`'s.
    &["term"],
    // The wire, which carries the emulator's screens (`protocol::screen`
    // makes their updates from a `term::Terminal`).
    &["protocol"],
    // SQLite.
    &["store"],
    // Harness transcripts: readers, tailing, the index.
    &["transcript"],
    // Adapters, hooks, status fusion, screen rules.
    &["harness"],
    // The supervisor and the domain pieces.
    &["supervise", "worktree"],
    // `config.toml`: each section its owner's type.
    &["config"],
    // A client's connection; logs read back.
    &["client"],
    // Remote hosts, which take what they need of the daemon through
    // `remote::Local`.
    &["remote"],
    // The run engine: the live runs, their links, queues and ends.
    &["engine"],
    &["daemon"],
    &["tui", "mcp", "web"],
    // The entry point.
    &["cli"],
];

/// What the layer order does not say: (subsystem, what it takes nothing
/// from although it lies below). Crate modules by name; outside crates as
/// `name::`.
const RULES: &[(&str, &[&str])] = &[
    // The emulator: bytes in, screen out; no I/O, no runtime, no UI.
    ("term", &["tokio::", "ratatui::", "crossterm::", "rusqlite::"]),
    // The wire: values and frames only.
    ("protocol", &["rusqlite::", "ratatui::"]),
    // A run's supervisor outlives daemons and clients of other builds.
    ("supervise", &["store", "rusqlite::", "ratatui::"]),
    // Remote hosts mirror runs; they supervise none.
    ("remote", &["supervise"]),
    // MCP is a client of the tool table like the CLI, not a user of it.
    ("mcp", &["tui", "daemon", "store", "supervise"]),
    // So is the web view: the page a browser holds is the client of it.
    ("web", &["tui", "daemon", "store", "supervise", "engine"]),
    // The TUI draws the screens its runs' emulators send; it parses no
    // agent's bytes.
    ("tui", &["term", "store", "supervise"]),
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A subsystem's files: `src/NAME/**` and `src/NAME.rs`.
fn subsystem(name: &str) -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    if src.join(name).is_dir() {
        files(&src.join(name), &mut out);
    }
    if src.join(format!("{name}.rs")).is_file() {
        out.push(src.join(format!("{name}.rs")));
    }
    assert!(!out.is_empty(), "no subsystem {name} under src/");
    out
}

/// What code takes, line by line: `crate::NAME` (also inside `crate::{…}`)
/// and `NAME::` of outside crates; comments left out.
fn taken(text: &str) -> BTreeSet<(String, usize)> {
    let mut out = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or_default().split(',').collect(),
                None => vec![rest],
            };
            for name in names {
                let name: String = name
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.insert((name, n + 1));
            }
        }
        for outside in ["tokio::", "ratatui::", "crossterm::", "rusqlite::", "russh::"] {
            let starts_path = code
                .match_indices(outside)
                .any(|(at, _)| !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':'));
            if starts_path {
                out.insert((outside.to_string(), n + 1));
            }
        }
    }
    out
}

#[test]
fn each_subsystem_takes_only_what_the_import_rules_allow() {
    let mut broken = Vec::new();
    for (name, forbidden) in RULES {
        for file in subsystem(name) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (took, line) in taken(&text) {
                if forbidden.contains(&took.as_str()) {
                    broken.push(format!("{}:{line} takes {took}", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "import rules broken:\n{}", broken.join("\n"));
}

/// The top-level modules of `src/` (`lib` and `main` are the crate, not a
/// module), each with its files.
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() || (path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main") {
            out.insert(name.clone(), subsystem(&name));
        }
    }
    out
}

/// Which module takes which other (`crate::` paths in code), with where:
/// from → to → `file:line`s.
fn module_graph() -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let modules = modules();
    let mut graph: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (name, files) in &modules {
        let edges = graph.entry(name.clone()).or_default();
        for file in files {
            let text = std::fs::read_to_string(file).unwrap();
            let file = file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(file);
            for (took, line) in taken(&text) {
                if took != *name && modules.contains_key(&took) {
                    edges
                        .entry(took)
                        .or_default()
                        .push(format!("{}:{line}", file.display()));
                }
            }
        }
    }
    graph
}

/// A cycle through the graph, as the modules on it with the first again
/// at its end, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeMap<String, Vec<String>>>) -> Option<Vec<String>> {
    fn visit(
        at: &str,
        graph: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(from) = path.iter().position(|m| m == at) {
            let mut found = path[from..].to_vec();
            found.push(at.to_string());
            return Some(found);
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_string());
        for next in graph.get(at).into_iter().flat_map(BTreeMap::keys) {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(at.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|start| visit(start, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_cycle_between_the_modules_of_src() {
    let graph = module_graph();
    if let Some(found) = cycle(&graph) {
        let steps: Vec<String> = found
            .windows(2)
            .map(|w| format!("  {} → {} at {}", w[0], w[1], graph[&w[0]][&w[1]].join(", ")))
            .collect();
        panic!("a module cycle: {}\n{}", found.join(" → "), steps.join("\n"));
    }
}

#[test]
fn each_module_takes_only_from_its_layer_or_below() {
    let layer_of = |name: &str| LAYERS.iter().position(|layer| layer.contains(&name));
    let mut broken = Vec::new();
    for (from, edges) in module_graph() {
        let Some(at) = layer_of(&from) else {
            broken.push(format!("{from} is in no layer: give it one in LAYERS"));
            continue;
        };
        for (to, places) in edges {
            if layer_of(&to).is_none_or(|below| below > at) {
                broken.push(format!("{from} takes {to}, a layer above it, at {}", places.join(", ")));
            }
        }
    }
    for name in LAYERS.iter().flat_map(|layer| layer.iter()) {
        assert!(modules().contains_key(*name), "{name} is in LAYERS but not under src/");
    }
    assert!(broken.is_empty(), "layer order broken:\n{}", broken.join("\n"));
}

#[test]
fn the_cycle_finder_names_a_cycle_and_passes_a_tree() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string(), Vec::new());
        }
        g
    };
    assert_eq!(cycle(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
    assert_eq!(
        cycle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(["a", "b", "c", "a"].map(String::from).to_vec())
    );
}

#[test]
fn the_checker_sees_grouped_and_plain_paths_but_not_comments() {
    let text =
        "use crate::{api::X, store};\nlet t = crate::tui::draw();\n// crate::daemon in a comment\nuse tokio::net;";
    let names: Vec<String> = taken(text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["api", "store", "tokio::", "tui"]);
}

/// SQL on our own database is the store's (`src/store/`): the daemon and
/// the remote mirrors call its typed methods. Outside it, only code that
/// reads another program's database (opencode's, Crush's and Hermes
/// Agent's SQLite, and the tests that make such databases) writes SQL.
const FOREIGN_SQL: &[&str] = &[
    "src/harness/crush.rs",
    "src/harness/opencode.rs",
    "src/transcript/crush.rs",
    "src/transcript/crush_tests.rs",
    "src/transcript/hermes.rs",
    "src/transcript/hermes_tests.rs",
    "src/transcript/index_tests.rs",
    "src/transcript/opencode.rs",
    "src/transcript/opencode_tests.rs",
];

const SQL: &[&str] = &["SELECT ", "INSERT INTO", "INSERT OR ", "UPDATE ", "DELETE FROM"];

#[test]
fn sql_on_our_database_is_written_only_in_the_store() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    files(&root.join("src"), &mut sources);
    let mut found = Vec::new();
    for path in sources {
        let relative = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if relative.starts_with("src/store/") || FOREIGN_SQL.contains(&relative.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, literal) in scan(&text).literals {
            if let Some(sql) = SQL.iter().find(|sql| literal.contains(*sql)) {
                found.push(format!("{relative}:{line} has {}", sql.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "SQL outside src/store/ (give the store a method for it):\n{}",
        found.join("\n")
    );
    for allowed in FOREIGN_SQL {
        assert!(root.join(allowed).is_file(), "{allowed} is listed but gone");
    }
}

#[test]
fn the_sql_checker_sees_every_kind_of_string_but_not_comments() {
    let text = "// \"SELECT 1\" in a comment\nlet q = '\"';\nlet a = \"SELECT \\\"x\\\"\n FROM t\";\n/* \"DELETE FROM t\" */\nlet b = r#\"UPDATE t SET \"a\" = 1\"#;\nfn f<'a>(s: &'a str) -> &'a str { s }";
    let literals = scan(text).literals;
    assert_eq!(
        literals,
        [
            (3, "SELECT \"x\"\n FROM t".to_string()),
            (6, "UPDATE t SET \"a\" = 1".to_string())
        ]
    );
}

/// The code cites the design by section (`docs/design.md §N`), a file in
/// the repository; every section it cites is there.
#[test]
fn every_design_section_the_code_cites_is_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let design = std::fs::read_to_string(root.join("docs/design.md")).expect("docs/design.md");
    let mut sources = Vec::new();
    for dir in ["src", "tests", "benches"] {
        files(&root.join(dir), &mut sources);
    }
    let mut cited = BTreeSet::new();
    for path in &sources {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(
            !text.contains(concat!("DESIGN", " §")),
            "{} cites a design outside the repository",
            path.display()
        );
        for (at, _) in text.match_indices("design.md") {
            // `design.md §6`, `design.md §2, §4`, a line break between.
            let rest = &text[at + "design.md".len()..];
            let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
            for part in rest.split(',').take_while(|p| p.trim_start().starts_with('§')) {
                let n: String = part
                    .trim_start()
                    .trim_start_matches('§')
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if !n.is_empty() {
                    cited.insert(n);
                }
            }
        }
    }
    assert!(!cited.is_empty());
    for n in cited {
        assert!(
            design.contains(&format!("\n## {n}. ")),
            "docs/design.md has no section {n}"
        );
    }
}

// The shape of the code a newcomer reads (issue #32): no function in
// `src/` longer than a screen and a half, no file longer than one sitting,
// counted on the code with its comments and literals blanked, so a brace
// in a string or a comment counts for nothing.

/// The longest function, in lines from its `fn` to its closing brace.
const FUNCTION_LINES: usize = 120;
/// The longest file.
const FILE_LINES: usize = 800;

/// Every file of `src/` with its text, by path.
/// The store's connection stays in the store: outside `src/store/`, only
/// the transcript index takes it, through `Store::index_step` (its parsers
/// lie above the store).
#[test]
fn only_the_transcript_index_is_handed_the_stores_connection() {
    let found: Vec<String> = sources()
        .into_iter()
        .filter(|(path, _)| !path.starts_with("src/store/") && path != "src/transcript/index.rs")
        .filter(|(_, text)| scan(text).code.contains("index_step("))
        .map(|(path, _)| path)
        .collect();
    assert!(found.is_empty(), "Store::index_step outside the index: {found:?}");
}

fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    files(&root.join("src"), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.strip_prefix(root).unwrap().display().to_string(), text)
        })
        .collect()
}

/// Rust source read once: the code with comments and the insides of string
/// and char literals made spaces (line breaks kept, so lines still count),
/// and each string literal — plain, byte or raw (`r#"…"#`) — with the line
/// it starts on. A char literal (`'"'`) is no string; a lifetime no char.
struct Scanned {
    code: String,
    literals: Vec<(usize, String)>,
}

fn scan(text: &str) -> Scanned {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut scanned = Scanned {
        code: String::with_capacity(text.len()),
        literals: Vec::new(),
    };
    let (mut line, mut i) = (1, 0);
    while i < chars.len() {
        let c = chars[i];
        let end = if c == '/' && at(i + 1) == '/' {
            (i..chars.len()).find(|&j| chars[j] == '\n').unwrap_or(chars.len())
        } else if c == '/' && at(i + 1) == '*' {
            (i + 2..chars.len())
                .find(|&j| chars[j] == '*' && at(j + 1) == '/')
                .map_or(chars.len(), |j| j + 2)
        } else if c == '\'' {
            match (at(i + 1), at(i + 2)) {
                ('\\', _) => (i + 3..chars.len())
                    .find(|&j| chars[j] == '\'')
                    .map_or(chars.len(), |j| j + 1),
                (_, '\'') => i + 3,
                _ => i,
            }
        } else if c == '"' || (c == 'r' && matches!(at(i + 1), '"' | '#') && !at(i.wrapping_sub(1)).is_alphanumeric()) {
            let end = string_end(&chars, i);
            if let Some(literal) = literal_text(&chars[i..end]) {
                scanned.literals.push((line, literal));
            }
            end
        } else {
            i
        };
        for &skipped in &chars[i..end.max(i + 1)] {
            let blank = end > i && skipped != '\n';
            scanned.code.push(if blank { ' ' } else { skipped });
            line += usize::from(skipped == '\n');
        }
        i = end.max(i + 1);
    }
    scanned
}

/// What a string literal's source (`"…"`, `r#"…"#`) says, escapes read as
/// the character they escape; `None` for a raw identifier (`r#type`).
fn literal_text(source: &[char]) -> Option<String> {
    let raw = source.first() == Some(&'r');
    let hashes = source[usize::from(raw)..].iter().take_while(|&&c| c == '#').count();
    let open = usize::from(raw) + hashes;
    if source.get(open) != Some(&'"') {
        return None;
    }
    let close = source.len().saturating_sub(1 + hashes).max(open + 1);
    let (mut out, mut body) = (String::new(), source[open + 1..close].iter());
    while let Some(&c) = body.next() {
        match !raw && c == '\\' {
            true => out.extend(body.next()),
            false => out.push(c),
        }
    }
    Some(out)
}

/// Where the string literal starting at `i` (plain or raw) ends.
fn string_end(chars: &[char], mut i: usize) -> usize {
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let raw = chars[i] == 'r';
    let mut hashes = 0;
    if raw {
        i += 1;
        while at(i) == '#' {
            hashes += 1;
            i += 1;
        }
        if at(i) != '"' {
            return i;
        }
    }
    i += 1;
    while i < chars.len() {
        if chars[i] == '"' && (0..hashes).all(|h| at(i + 1 + h) == '#') {
            return i + 1 + hashes;
        }
        i += if !raw && chars[i] == '\\' { 2 } else { 1 };
    }
    chars.len()
}

/// Each function with a body in `code`: its name, first line and length.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        let mut depth = 0i64;
        let mut opened = false;
        for (n, l) in lines[start..].iter().enumerate() {
            for c in l.chars() {
                match c {
                    '{' => (depth, opened) = (depth + 1, true),
                    '}' => depth -= 1,
                    ';' if !opened => break,
                    _ => {}
                }
            }
            if !opened && l.trim_end().ends_with(';') {
                break;
            }
            if opened && depth <= 0 {
                found.push((name.clone(), start + 1, n + 1));
                break;
            }
        }
    }
    found
}

/// The name of the function a line declares, if it declares one.
fn fn_name(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().peekable();
    while let Some(w) = words.peek() {
        let qualifier =
            w.starts_with("pub") || matches!(*w, "async" | "const" | "unsafe" | "extern" | "\"C\"" | "default");
        if !qualifier {
            break;
        }
        words.next();
    }
    if words.next() != Some("fn") {
        return None;
    }
    let name: String = words
        .next()?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

#[test]
fn no_function_in_src_is_longer_than_a_screen_and_a_half() {
    let mut long = Vec::new();
    for (path, text) in sources() {
        for (name, line, lines) in functions(&scan(&text).code) {
            if lines > FUNCTION_LINES {
                long.push(format!("{path}:{line} {name}: {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {FUNCTION_LINES} lines (split them into named steps):\n{}",
        long.join("\n")
    );
}

#[test]
fn no_file_in_src_is_longer_than_one_sitting() {
    let long: Vec<String> = sources()
        .into_iter()
        .filter(|(_, text)| text.lines().count() > FILE_LINES)
        .map(|(path, text)| format!("{path}: {} lines", text.lines().count()))
        .collect();
    assert!(long.is_empty(), "files over {FILE_LINES} lines:\n{}", long.join("\n"));
}

#[test]
fn the_counter_sees_bodies_but_not_braces_in_strings_or_comments() {
    let text = "pub async fn a() {\n    let s = \"}}}\";\n    // }\n    let c = '}';\n}\nfn b<'x>(v: &'x str) -> &'x str {\n    v\n}\nfn c();\n";
    let found = functions(&scan(text).code);
    assert_eq!(found, [("a".to_string(), 1, 5), ("b".to_string(), 6, 3)]);
    let long = format!("fn long() {{\n{}}}\n", "    x();\n".repeat(FUNCTION_LINES));
    assert_eq!(functions(&scan(&long).code)[0].2, FUNCTION_LINES + 2);
}
