//! A harness saying it cannot reach its model for want of a login: each
//! family's own words, where it draws them. Only the agent CLIs are read
//! this way (a `cmd` run printing "401 Unauthorized" is just output), and
//! only where the CLI draws its own complaints (Claude's status row and the
//! `⎿` result under a prompt, Codex's `■` error line), never a reply that
//! mentions a login. Each family's signs are in its file of `screens/`.
//! Pure: screen lines and rules in, a finding out.

use super::screen::ScreenFinding;
use super::screen_rules::ScreenRules;
use crate::api::ActivityStatus;

/// How a login finding's reason begins (fusion lets it outrank hooks).
pub const LOGIN_WHY: &str = "screen says it is not logged in";

/// The harness's last words say it cannot work until someone logs in
/// (`waiting_input`, with the words that said so).
pub fn problem(rules: &ScreenRules, lines: &[String], family: &str) -> Option<ScreenFinding> {
    let login = rules.login_of(family)?;
    let last: Vec<&str> = lines
        .iter()
        .rev()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .take(login.window)
        .collect();
    for sign in &login.signs {
        let candidates = match sign.last_line {
            true => &last[..last.len().min(1)],
            false => &last[..],
        };
        let found = candidates.iter().find(|line| {
            sign.starts.as_deref().is_none_or(|m| line.starts_with(m)) && line.to_lowercase().contains(&sign.says)
        });
        if let Some(line) = found {
            let mut finding = finding(line, &sign.says);
            finding.rule = Some(sign.source.rule("login", &sign.says));
            return Some(finding);
        }
    }
    None
}

/// The words that said so, not the whole row: a status row holds other
/// hints, apart by runs of spaces.
fn finding(line: &str, phrase: &str) -> ScreenFinding {
    let part = line
        .split("  ")
        .find(|p| p.to_lowercase().contains(phrase))
        .unwrap_or(line);
    let said: String = super::screen::bare(part.trim())
        .trim_start_matches(['⎿', '■', '✕', ' ', '\u{a0}'])
        .chars()
        .take(100)
        .collect();
    ScreenFinding {
        status: ActivityStatus::WaitingInput,
        why: format!("{LOGIN_WHY}: {said}"),
        question: None,
        rule: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The screens each family's rules were made from are checked in
    /// `screen_rules`; here, that each family is read in its own words.
    fn problem(lines: &[String], family: &str) -> Option<ScreenFinding> {
        super::problem(ScreenRules::built_in(), lines, family)
    }

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn each_family_is_read_in_its_own_words_only() {
        let codex =
            lines("■ unexpected status 401 Unauthorized: Incorrect API key provided\n\n› Ask Codex\n  ? for shortcuts");
        assert!(problem(&codex, "codex").unwrap().is_login_problem());
        let pi = lines(" hello\n Error: 401 Incorrect API key provided: bad.\n───\n\n───\n/tmp/p\nmock-model\n");
        assert!(problem(&pi, "pi").is_some());
        assert_eq!(problem(&pi, "qwen"), None, "each family's own words");
        // The same words from another program, or in a reply, are output.
        let said = lines("GET /admin -> 401 Unauthorized (expected)\n$ ");
        for family in ["cmd", "shell", "demo", "claude", "codex"] {
            assert_eq!(problem(&said, family), None, "{family}");
        }
    }

    #[test]
    fn the_finding_quotes_the_words_that_said_so_not_the_whole_row() {
        let hint = lines("❯ \n────\n  ? for shortcuts · ← for agents                      Not logged in · Run /login");
        assert_eq!(
            problem(&hint, "claude").unwrap().why,
            format!("{LOGIN_WHY}: Not logged in · Run /login")
        );
    }
}
