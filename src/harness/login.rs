//! A harness saying it cannot reach its model for want of a login: each
//! family's own words, where it draws them. Only the agent CLIs are read
//! this way (a `cmd` run printing "401 Unauthorized" is just output), and
//! only where the CLI draws its own complaints (Claude's status row and the
//! `⎿` result under a prompt, Codex's `■` error line), never a reply that
//! mentions a login. Pure: screen lines in, a finding out.

use super::screen::ScreenFinding;
use crate::api::ActivityStatus;

/// How a login finding's reason begins (fusion lets it outrank hooks).
pub const LOGIN_WHY: &str = "screen says it is not logged in";

/// How many non-blank lines at the bottom a complaint must be among to
/// count: the agent's last words above its input box (Claude's result, box
/// and hint row are five; Gemini's error, box and footer six). Once a later
/// turn is drawn, the old complaint has moved above them.
const WINDOW: usize = 6;

/// Qwen Code draws rules above and below its composer and a two-line
/// footer: its error, which may wrap, is two lines further up. Copilot
/// draws its folder row, two rules and a footer under a two-line error.
fn window(family: &str) -> usize {
    match family {
        "qwen" | "copilot" => WINDOW + 2,
        _ => WINDOW,
    }
}

/// One way a family says so: the line starts with `marker` (after
/// indentation; `None`: anywhere in the window, `Some("")`: the last line,
/// the status row) and holds `phrase` (lower-case).
struct Sign {
    family: &'static str,
    marker: Option<&'static str>,
    phrase: &'static str,
}

const SIGNS: &[Sign] = &[
    // Claude Code 2.1: "Not logged in · Run /login" at the right of its
    // hint row from the start; "Not logged in · Please run /login",
    // "Invalid API key · Please run /login", "OAuth token has expired …"
    // as the result of a prompt.
    Sign {
        family: "claude",
        marker: Some(""),
        phrase: "not logged in",
    },
    Sign {
        family: "claude",
        marker: Some("⎿"),
        phrase: "please run /login",
    },
    Sign {
        family: "claude",
        marker: Some("⎿"),
        phrase: "oauth token has expired",
    },
    // Codex: "■ unexpected status 401 Unauthorized: …".
    Sign {
        family: "codex",
        marker: Some("■"),
        phrase: "401 unauthorized",
    },
    Sign {
        family: "codex",
        marker: Some("■"),
        phrase: "incorrect api key",
    },
    // Gemini CLI: "[API Error: API key not valid. Please pass a valid API key.]".
    Sign {
        family: "gemini",
        marker: None,
        phrase: "api key not valid",
    },
    // Qwen Code 0.24: "✕ [API Error: 401 Incorrect API key provided: …]"
    // above its composer.
    Sign {
        family: "qwen",
        marker: Some("✕"),
        phrase: "api error: 401",
    },
    // pi 0.73: "Error: 401 Incorrect API key provided: …" as the reply.
    Sign {
        family: "pi",
        marker: Some("Error: 401"),
        phrase: "error: 401",
    },
    // Copilot CLI 1.0 with a custom provider: "✗ Authentication failed
    // with provider at URL (HTTP 401)." and a hint row below it.
    Sign {
        family: "copilot",
        marker: Some("✗"),
        phrase: "authentication failed",
    },
    // Droid 0.225 with no Factory login: "Please login with your Factory
    // account to continue." above its Login / Exit choices; with a key it
    // refused: "Authentication failed. FACTORY_API_KEY is set but appears
    // to be invalid." (from its source and its screen here).
    Sign {
        family: "droid",
        marker: None,
        phrase: "please login with your factory account",
    },
    Sign {
        family: "droid",
        marker: Some("Authentication failed"),
        phrase: "appears to be invalid",
    },
    // aider, through litellm: "litellm.AuthenticationError: …".
    Sign {
        family: "aider",
        marker: None,
        phrase: "litellm.authenticationerror",
    },
];

/// The harness's last words say it cannot work until someone logs in
/// (`waiting_input`, with the words that said so).
pub fn problem(lines: &[String], family: &str) -> Option<ScreenFinding> {
    let last: Vec<&str> = lines
        .iter()
        .rev()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .take(window(family))
        .collect();
    for sign in SIGNS.iter().filter(|s| s.family == family) {
        let candidates: &[&str] = match sign.marker {
            Some("") => &last[..last.len().min(1)],
            _ => &last,
        };
        let found = candidates.iter().find(|line| {
            let starts = match sign.marker {
                Some(m) if !m.is_empty() => line.starts_with(m),
                _ => true,
            };
            starts && line.to_lowercase().contains(sign.phrase)
        });
        if let Some(line) = found {
            return Some(finding(line, sign.phrase));
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    /// As Qwen Code 0.24.4 and pi 0.73.1 drew a 401 from an OpenAI-compatible
    /// endpoint (tmux `capture-pane`, 120 columns).
    #[test]
    fn qwen_and_pi_saying_their_key_was_refused_are_login_problems() {
        let rule = "─".repeat(120);
        let qwen = lines(&format!(
            "  > hello\n  ✕ [API Error: 401 Incorrect API key provided: bad. You can find your API key at\n    \
             https://platform.openai.com/account/api-keys.] (Press Ctrl+Y to retry)\n{rule}\n>   Type your message or \
             @path/to/file\n{rule}\n  ➜ proj · mock-model\n  Auto mode (shift + tab to cycle)\n"
        ));
        let found = problem(&qwen, "qwen").unwrap();
        assert_eq!(found.status, ActivityStatus::WaitingInput);
        assert!(found.why.contains("[API Error: 401 Incorrect API key"), "{}", found.why);
        let pi = lines(&format!(
            " hello\n Error: 401 Incorrect API key provided: bad.\n{rule}\n\n{rule}\n/tmp/pq/proj\n0.0%/128k (auto)      mock-model\n"
        ));
        assert!(problem(&pi, "pi").unwrap().why.contains("Error: 401 Incorrect API key"));
        assert_eq!(problem(&pi, "qwen"), None, "each family's own words");
        let answered = lines(
            " Error: 401 Incorrect API key provided: bad.\n hello again\n Mock reply\n Mock reply\n rule\n rule\n cwd\n footer\n",
        );
        assert_eq!(problem(&answered, "pi"), None, "a later turn moved it up");
    }

    /// As Copilot CLI 1.0.102 drew a 401 from its custom provider (tmux
    /// `capture-pane`, 120 columns).
    #[test]
    fn copilot_saying_its_provider_refused_the_key_is_a_login_problem() {
        let rule = "─".repeat(120);
        let screen = lines(&format!(
            " ❯ hello                                                   17:13\n\n \
             ● Request failed due to a transient API error. Retrying...\n\n \
             ✗ Authentication failed with provider at http://127.0.0.1:18934/v1 (HTTP 401).\n     \
             Check your COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_API_KEY_COMMAND, or COPILOT_PROVIDER_BEARER_TOKEN.\n\n\n \
             /tmp/clis/ws1 [⎇ master%]\n{rule}\n❯\n{rule}\n \
             ← open sidebar · Interactive · Manual Approval · / commands · ? help · tab next tab      mock-model\n"
        ));
        let found = problem(&screen, "copilot").unwrap();
        assert!(found.is_login_problem());
        assert!(
            found.why.contains("Authentication failed with provider"),
            "{}",
            found.why
        );
        assert_eq!(problem(&screen, "qwen"), None);
    }

    /// As Droid 0.225.2 drew its start with no Factory login.
    #[test]
    fn droid_asking_for_a_factory_login_is_a_login_problem() {
        let screen = lines(concat!(
            "│ Welcome to Factory CLI                   │\n",
            "╰──────────────────────────────────────────╯\n",
            "\n",
            "Please login with your Factory account to continue.\n",
            "\n",
            "> Login\n",
            "  Exit\n",
        ));
        assert!(problem(&screen, "droid").unwrap().is_login_problem());
        let refused = lines("Authentication failed. FACTORY_API_KEY is set but appears to be invalid. Unset it.\n");
        assert!(problem(&refused, "droid").is_some());
        assert_eq!(problem(&screen, "copilot"), None);
    }

    #[test]
    fn claude_not_logged_in_waits_for_a_login_until_a_later_turn_is_drawn() {
        let failed = lines(concat!(
            "> hello\n",
            "  ⎿  Not logged in · Please run /login\n",
            "\n",
            "────────────────\n",
            "> \n",
            "────────────────\n",
            "  ? for shortcuts\n",
        ));
        let found = problem(&failed, "claude").unwrap();
        assert_eq!(found.status, ActivityStatus::WaitingInput);
        assert!(found.is_login_problem());
        assert_eq!(found.why, format!("{LOGIN_WHY}: Not logged in · Please run /login"));
        // As Claude Code 2.1.197 draws its status row with no login.
        let hint = lines("❯ \n────\n  ? for shortcuts · ← for agents                      Not logged in · Run /login");
        assert_eq!(
            problem(&hint, "claude").unwrap().why,
            format!("{LOGIN_WHY}: Not logged in · Run /login")
        );
        let later = lines(concat!(
            "> hello\n",
            "  ⎿  Not logged in · Please run /login\n",
            "  Login successful\n",
            "> hello again\n",
            "⏺ Hello!\n",
            "────────────────\n",
            "> \n",
            "────────────────\n",
            "  ? for shortcuts\n",
        ));
        assert_eq!(problem(&later, "claude"), None);
    }

    #[test]
    fn each_family_is_read_in_its_own_words_only() {
        let codex =
            lines("■ unexpected status 401 Unauthorized: Incorrect API key provided\n\n› Ask Codex\n  ? for shortcuts");
        assert!(problem(&codex, "codex").unwrap().is_login_problem());
        let gemini =
            lines("✕ [API Error: API key not valid. Please pass a valid API key.]\n╭──╮\n│ > │\n╰──╯\n~/p  no sandbox");
        assert!(problem(&gemini, "gemini").is_some());
        // The same words from another program, or in a reply, are output.
        let said = lines("GET /admin -> 401 Unauthorized (expected)\n$ ");
        for family in ["cmd", "shell", "demo", "claude", "codex"] {
            assert_eq!(problem(&said, family), None, "{family}");
        }
        let reply = lines(
            "> why does it say not logged in?\n⏺ The page returns 401 Unauthorized when not logged in.\n────\n> \n────\n  ? for shortcuts",
        );
        assert_eq!(problem(&reply, "claude"), None);
    }
}
