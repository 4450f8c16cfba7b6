//! What tells a turn that goes nowhere (docs/design.md §7, "stalled"): a
//! screen that has not changed, less what moves on a screen while nothing
//! happens (a spinner's glyph, an elapsed-time counter, a token count, the
//! row that says a turn is in progress), and a family saying in its own
//! words that its model refused it for a limit (`[[limit]]` in
//! `screens/`). Pure: screen lines and rules in, a digest or a limit out.

use std::hash::{Hash, Hasher};

use super::screen_rules::{BusyRule, ScreenRules};
pub use crate::protocol::supervisor::{Limit, LimitKind};

/// How many non-blank lines at the bottom a limit is looked for in: the
/// harness's last words and the status rows under its input box.
pub const LIMIT_WINDOW: usize = 16;

/// The longest line a limit carries.
const LIMIT_LINE_CHARS: usize = 160;

/// The limit `family` says it hit in its last words, if any: among the
/// last lines, below the prompt of the last turn. An error a later turn
/// followed (the user's next prompt drawn below it: `[input]`'s marker
/// starting a row above the input's own) is history, not the state the
/// harness is in. A slash command the harness ran itself after the error
/// (Claude's `/rate-limit-options`) is no prompt.
pub fn limit_on(rules: &ScreenRules, lines: &[String], family: &str) -> Option<Limit> {
    let signs = rules.limits_of(family);
    if signs.is_empty() {
        return None;
    }
    let marker = rules.input_of(family).and_then(|i| i.marker.as_deref());
    let mut prompts = 0;
    let last = lines
        .iter()
        .rev()
        .map(|l| l.trim_matches(['│', '┃', ' ', '\u{a0}']))
        .filter(|l| !l.is_empty())
        .take(LIMIT_WINDOW)
        .take_while(|line| {
            let prompt = marker
                .and_then(|m| line.strip_prefix(m))
                .is_some_and(|rest| !rest.trim_start_matches([' ', '\u{a0}']).starts_with('/'));
            prompts += usize::from(prompt);
            prompts < 2
        });
    for line in last {
        let lower = line.to_lowercase();
        let sign = signs.iter().find(|s| {
            let starts = s.starts.as_deref().is_none_or(|m| line.starts_with(m));
            starts && lower.contains(&s.says)
        });
        if let Some(sign) = sign {
            let said = line
                .trim_start_matches(['⎿', '■', '●', '└', '✕', '⚠', ' ', '\u{a0}'])
                .chars()
                .take(LIMIT_LINE_CHARS)
                .collect();
            return Some(Limit {
                kind: sign.kind,
                line: said,
            });
        }
    }
    None
}

/// A digest of what the screen shows, blind to what moves while nothing
/// happens: rows holding the family's `[busy]` words are left out, a
/// number (`94`, `1.2k`) reads as one digit, a spinner glyph as a space,
/// and a spinner's row ends before its clock (`spinning`). Two screens
/// with the same digest show the same work.
pub fn still_digest(lines: &[String], busy: Option<&BusyRule>) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    for line in lines {
        if busy.is_some_and(|b| b.says.iter().any(|w| line.contains(w.as_str()))) {
            continue;
        }
        let line = spinning(line.trim_end()).unwrap_or(line);
        let mut in_number = false;
        let mut chars = line.trim_end().chars().peekable();
        while let Some(c) = chars.next() {
            let digit = c.is_ascii_digit();
            // A number's separators and its magnitude (`1.2k`) are part of it.
            let within = in_number
                && (matches!(c, 'k' | 'K' | 'M')
                    || matches!(c, '.' | ',') && chars.peek().is_some_and(char::is_ascii_digit));
            if digit && !in_number {
                '0'.hash(&mut hasher);
            } else if !digit && !within {
                masked(c).hash(&mut hasher);
            }
            in_number = digit || within;
        }
        '\n'.hash(&mut hasher);
    }
    hasher.finish()
}

/// A character as the digest reads it.
fn masked(c: char) -> char {
    match c {
        // Braille (most CLIs' spinners), and the stars, dots and arcs
        // Claude Code, Codex and the demo cycle through.
        '\u{2800}'..='\u{28ff}' | '·' | '•' | '✢' | '✳' | '✶' | '✻' | '✽' | '✺' | '◐' | '◓' | '◑' | '◒' => {
            ' '
        }
        c => c,
    }
}

/// A spinner's row (its glyph first, then a space) as the digest reads
/// it: the glyph a space, and the row ending before a closing `(…)`, the
/// clock and counters a spinner grows as a turn goes on (Claude's
/// `✻ Billowing… (16s · ↓ 1.2k tokens)`, whose `(16s)` first shows
/// after some seconds). Claude also draws a plain `*` among its glyphs,
/// read as one only here. None for any other row.
fn spinning(line: &str) -> Option<&str> {
    let body = line.trim_start();
    let mut chars = body.chars();
    let glyph = chars.next()?;
    let spins = glyph == '*' || masked(glyph) == ' ' && !glyph.is_whitespace();
    if !spins || chars.next() != Some(' ') {
        return None;
    }
    let rest = &body[glyph.len_utf8()..];
    let rest = match rest.strip_suffix(')').and_then(|r| r.rfind(" (")) {
        Some(clock) => &rest[..clock],
        None => rest,
    };
    Some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn a_spinner_and_its_counters_are_not_a_change() {
        let busy = BusyRule {
            says: vec!["esc to interrupt".into()],
            last_line: false,
        };
        let at = |frame: &str, secs: u32, tokens: u32| {
            lines(&format!(
                "● Running the build\n  ⎿  Bash(make)\n{frame} Thinking… ({secs}s · ↓ {tokens} tokens)\n⠙ 12s esc to interrupt {secs}"
            ))
        };
        let first = still_digest(&at("✻", 3, 120), Some(&busy));
        assert_eq!(first, still_digest(&at("✢", 94, 4180), Some(&busy)));
        let thousands = at("✶", 9, 0)
            .into_iter()
            .map(|l| l.replace("↓ 0", "↓ 1.2k"))
            .collect::<Vec<_>>();
        assert_eq!(first, still_digest(&thousands, Some(&busy)));
        assert_eq!(first, still_digest(&at("⠋", 7, 1), Some(&busy)));
        let more =
            lines("● Running the build\n  ⎿  Bash(make)\n    cc -o main main.c\n✻ Thinking… (3s · ↓ 120 tokens)");
        assert_ne!(first, still_digest(&more, Some(&busy)), "a new line is a change");
        let worded = at("✻", 3, 120)
            .into_iter()
            .map(|l| l.replace("build", "tests"))
            .collect::<Vec<_>>();
        assert_ne!(first, still_digest(&worded, Some(&busy)), "a word is a change");
    }

    /// Claude 2.1.197 hanging on its model: its glyph cycles through a
    /// plain `*`, and its clock first shows after some seconds.
    #[test]
    fn a_spinner_s_asterisk_and_a_clock_that_shows_late_are_not_a_change() {
        let at = |spinner: &str| lines(&format!("❯ HANG please\n{spinner}\n────\n❯ \n  esc to interrupt"));
        let first = still_digest(&at("· Billowing…"), None);
        assert_eq!(first, still_digest(&at("* Billowing…"), None));
        assert_eq!(first, still_digest(&at("✢ Billowing… (16s)"), None));
        assert_eq!(
            first,
            still_digest(&at("✻ Billowing… (1m 2s · ↓ 1.2k tokens · thinking)"), None)
        );
        assert_ne!(
            first,
            still_digest(&at("✻ Running tests…"), None),
            "a new step is a change"
        );
        let bullet = |text: &str| lines(&format!("* {text}\nmore"));
        assert_ne!(
            still_digest(&bullet("one (a)"), None),
            still_digest(&bullet("two (a)"), None),
            "a list's words are read"
        );
    }

    #[test]
    fn a_family_s_limit_is_read_in_its_own_words_near_the_bottom_only() {
        let file = "[[limit]]\nkind = \"rate_limit\"\nstarts = \"⎿\"\nsays = \"API Error: 429\"\n";
        let rules = ScreenRules::with_files(&[("newcli".into(), file.into())]).unwrap();
        let screen = lines("> hi\n  ⎿  API Error: 429 {\"type\":\"rate_limit_error\"}\n\n> ");
        let found = limit_on(&rules, &screen, "newcli").unwrap();
        assert_eq!(found.kind, LimitKind::RateLimit);
        assert!(found.line.starts_with("API Error: 429"), "{found:?}");
        assert_eq!(
            limit_on(&rules, &screen, "cmd"),
            None,
            "another program's words are output"
        );
        let said_in_a_reply = lines("● The API Error: 429 means a rate limit\n> ");
        assert_eq!(limit_on(&rules, &said_in_a_reply, "newcli"), None);
        let mut scrolled = screen.clone();
        scrolled.extend((0..LIMIT_WINDOW).map(|i| format!("line {i}")));
        assert_eq!(
            limit_on(&rules, &scrolled, "newcli"),
            None,
            "an old message scrolled up"
        );
    }
}
