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
    /// A command with a wrong argument: how to use it.
    Usage(&'static str),
    /// Anything else: a prompt to answer.
    Say(String),
}

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
        assert_eq!(parse_command(" fix the tests "), Command::Say("fix the tests".into()));
        assert_eq!(
            parse_command("exit the loop early"),
            Command::Say("exit the loop early".into())
        );
    }
}
