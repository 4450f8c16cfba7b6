//! What a line typed at the demo agent's prompt asks for.

use super::args::{MAX_SUBAGENTS, parse_size};

/// A line typed at the prompt (or given with `--prompt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Command {
    /// Nothing typed: no turn, the prompt again.
    Empty,
    /// `exit` or `/exit`.
    Exit,
    /// `fail`: exit with an error.
    Fail,
    /// `ask`: a permission prompt.
    Ask,
    /// `flood BYTES`.
    Flood(u64),
    /// `spawn N`: N subagents.
    Spawn(u16),
    /// `stall [rate|usage|overloaded|quota]`: a turn that goes nowhere,
    /// its spinner and clock ticking, after saying the limit it hit.
    Stall(Option<StallCause>),
    /// A command with a wrong argument: how to use it.
    Usage(&'static str),
    /// Anything else: a prompt to answer.
    Say(String),
}

/// The limit a `stall` says it hit, in words styled after Claude Code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StallCause {
    Rate,
    Usage,
    Overloaded,
    Quota,
}

impl StallCause {
    fn parse(word: &str) -> Option<StallCause> {
        match word {
            "rate" => Some(StallCause::Rate),
            "usage" => Some(StallCause::Usage),
            "overloaded" => Some(StallCause::Overloaded),
            "quota" => Some(StallCause::Quota),
            _ => None,
        }
    }

    /// What the demo prints, as a result line under the prompt.
    pub(super) fn message(self) -> &'static str {
        match self {
            StallCause::Rate => "API Error: 429 rate limit exceeded · retrying",
            StallCause::Usage => "demo usage limit reached · resets at 5pm",
            StallCause::Overloaded => "API Error: 529 overloaded · retrying",
            StallCause::Quota => "Credit balance is too low",
        }
    }
}

const STALL_USAGE: &str = "usage: stall [rate|usage|overloaded|quota]";

/// Reads a command; a line that is not one of the commands, word for word,
/// is a prompt (so `exit the loop early` is a prompt, not `exit`).
pub(super) fn parse_command(line: &str) -> Command {
    let line = line.trim();
    let mut words = line.split_whitespace();
    let (verb, arg) = (words.next(), words.next());
    let extra = words.next().is_some();
    match (verb, arg, extra) {
        (None, _, _) => Command::Empty,
        (Some("exit" | "/exit"), None, _) => Command::Exit,
        (Some("fail"), None, _) => Command::Fail,
        (Some("ask"), None, _) => Command::Ask,
        (Some("flood"), Some(size), false) => match parse_size(size) {
            Ok(bytes) => Command::Flood(bytes),
            Err(_) => Command::Usage("usage: flood BYTES (suffix K, M, G: ×1024)"),
        },
        (Some("flood"), _, _) => Command::Usage("usage: flood BYTES (suffix K, M, G: ×1024)"),
        (Some("spawn"), Some(count), false) => match count.parse::<u16>() {
            Ok(n @ 1..=MAX_SUBAGENTS) => Command::Spawn(n),
            _ => Command::Usage("usage: spawn N (1 to 64)"),
        },
        (Some("spawn"), _, _) => Command::Usage("usage: spawn N (1 to 64)"),
        (Some("stall"), None, _) => Command::Stall(None),
        (Some("stall"), Some(cause), false) => match StallCause::parse(cause) {
            Some(cause) => Command::Stall(Some(cause)),
            None => Command::Usage(STALL_USAGE),
        },
        (Some("stall"), _, _) => Command::Usage(STALL_USAGE),
        _ => Command::Say(line.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_lines_become_commands() {
        assert_eq!(parse_command("  "), Command::Empty);
        assert_eq!(parse_command("exit"), Command::Exit);
        assert_eq!(parse_command("/exit"), Command::Exit);
        assert_eq!(parse_command("fail"), Command::Fail);
        assert_eq!(parse_command("ask"), Command::Ask);
        assert_eq!(parse_command("flood 4K"), Command::Flood(4096));
        assert!(matches!(parse_command("flood lots"), Command::Usage(_)));
        assert_eq!(parse_command("spawn 2"), Command::Spawn(2));
        assert!(matches!(parse_command("spawn 0"), Command::Usage(_)));
        assert!(matches!(parse_command("spawn 65"), Command::Usage(_)));
        assert_eq!(parse_command("stall"), Command::Stall(None));
        assert_eq!(parse_command("stall rate"), Command::Stall(Some(StallCause::Rate)));
        assert!(matches!(parse_command("stall often"), Command::Usage(_)));
        assert_eq!(parse_command(" fix the tests "), Command::Say("fix the tests".into()));
        assert_eq!(
            parse_command("exit the loop early"),
            Command::Say("exit the loop early".into())
        );
    }
}
