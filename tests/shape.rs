//! The shape of the code a newcomer reads (issue #32): no function in
//! `src/` longer than a screen and a half, no file longer than one sitting.
//! Counted on the code with its comments and literals blanked, so a brace
//! in a string or a comment counts for nothing.

use std::path::{Path, PathBuf};

/// The longest function, in lines from its `fn` to its closing brace.
const FUNCTION_LINES: usize = 120;
/// The longest file.
const FILE_LINES: usize = 800;

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

/// `text` with comments and the insides of string and char literals made
/// spaces; line breaks kept, so lines still count.
fn code_of(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let end = if c == '/' && at(i + 1) == '/' {
            (i..chars.len()).find(|&j| chars[j] == '\n').unwrap_or(chars.len())
        } else if c == '/' && at(i + 1) == '*' {
            (i + 2..chars.len())
                .find(|&j| chars[j] == '*' && at(j + 1) == '/')
                .map_or(chars.len(), |j| j + 2)
        } else if c == '\'' {
            // A char literal ('x', '\n', '{'); a lifetime is not one.
            match (at(i + 1), at(i + 2)) {
                ('\\', _) => (i + 3..chars.len())
                    .find(|&j| chars[j] == '\'')
                    .map_or(chars.len(), |j| j + 1),
                (_, '\'') => i + 3,
                _ => i,
            }
        } else if c == '"' || (c == 'r' && matches!(at(i + 1), '"' | '#') && !at(i.wrapping_sub(1)).is_alphanumeric()) {
            string_end(&chars, i)
        } else {
            i
        };
        if end > i {
            out.extend(chars[i..end].iter().map(|&c| blank(c)));
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
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
        for (name, line, lines) in functions(&code_of(&text)) {
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
    let found = functions(&code_of(text));
    assert_eq!(found, [("a".to_string(), 1, 5), ("b".to_string(), 6, 3)]);
    let long = format!("fn long() {{\n{}}}\n", "    x();\n".repeat(FUNCTION_LINES));
    assert_eq!(functions(&code_of(&long))[0].2, FUNCTION_LINES + 2);
}
