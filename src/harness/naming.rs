//! A run started without `--name` is named after its first prompt: a short
//! readable slug (`fix the failing parser test` → `fix-failing-parser-test`).
//! Pure; the store makes it unique.

/// Words that make a name longer without telling runs apart.
const FILLER: &[&str] = &[
    "a", "an", "the", "please", "can", "could", "you", "would", "will", "to", "of", "for", "and", "me", "us", "i",
    "we", "my", "our", "this", "that", "it", "is", "are", "be", "in", "on", "with", "pls", "now", "just",
];

/// At most this many words and characters: long enough to recognise, short
/// enough for the run tree's column.
const MAX_WORDS: usize = 5;
const MAX_CHARS: usize = 32;

/// The slug for a prompt, or `None` when nothing readable is left (a prompt
/// of symbols, or a slash command like `/exit`).
pub fn slug(prompt: &str) -> Option<String> {
    if prompt.trim_start().starts_with('/') {
        return None;
    }
    let words: Vec<String> = prompt
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let meaningful: Vec<&String> = words.iter().filter(|w| !FILLER.contains(&w.as_str())).collect();
    let chosen: Vec<&String> = if meaningful.is_empty() {
        words.iter().collect()
    } else {
        meaningful
    };
    let mut out = String::new();
    for word in chosen.into_iter().take(MAX_WORDS) {
        let extra = if out.is_empty() { word.len() } else { word.len() + 1 };
        if out.len() + extra > MAX_CHARS {
            if out.is_empty() {
                out = word[..MAX_CHARS].to_string();
            }
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(word);
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_become_short_readable_names() {
        let cases = [
            ("fix the failing parser test", Some("fix-failing-parser-test")),
            ("please SPAWN a helper", Some("spawn-helper")),
            (
                "Refactor src/engine/queue.rs so that hooks win",
                Some("refactor-src-engine-queue-rs"),
            ),
            ("hello", Some("hello")),
            ("¿qué tal?", Some("qu-tal")),
            ("/exit", None),
            ("!!!", None),
            ("the", Some("the")),
            (
                "supercalifragilisticexpialidociousness-and-more",
                Some("supercalifragilisticexpialidocio"),
            ),
        ];
        for (prompt, want) in cases {
            assert_eq!(slug(prompt).as_deref(), want, "{prompt}");
        }
    }
}
