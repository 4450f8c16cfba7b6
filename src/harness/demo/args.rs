//! The demo agent's command line, `agents demo-agent …`: a `clap::Args` the
//! main CLI embeds as `DemoAgent(DemoArgs)`, and the way back to arguments
//! for launching the demo agent as a harness or as its own child.

/// More subagents than this is surely a typo, and would fork-bomb a laptop.
pub(super) const MAX_SUBAGENTS: u16 = 64;
/// Default thinking time: long enough to see the spinner, short enough for tests.
const DEFAULT_THINK_MS: u64 = 300;

/// The demo agent's command line (`agents demo-agent …`).
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct DemoArgs {
    /// Take TEXT as the first prompt, as if typed (commands like `ask` work too).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub prompt: Option<String>,

    /// Exit after the first turn (the opening turn, or else the first typed prompt).
    #[arg(long, visible_alias = "once")]
    pub exit_after_prompt: bool,

    /// At start, write exactly BYTES bytes of coloured log lines (suffix K, M, G: ×1024).
    /// Alone, the agent exits 0 after the flood.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub flood: Option<u64>,

    /// At start, show a permission prompt and wait for `1`/`y`/Enter or `2`/`n`/Esc.
    #[arg(long)]
    pub ask: bool,

    /// At start, run N subagents (child processes of this binary) and wait for them.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=MAX_SUBAGENTS as i64))]
    pub subagents: Option<u16>,

    /// Ignore SIGTERM (a harness that must be killed).
    #[arg(long)]
    pub ignore_sigterm: bool,

    /// Ignore SIGINT (Ctrl-C no longer interrupts a turn).
    #[arg(long)]
    pub ignore_sigint: bool,

    /// After the opening turn, stop responding: read nothing, print nothing.
    #[arg(long)]
    pub hang: bool,

    /// After the opening turn, print a panic message and abort (SIGABRT).
    #[arg(long)]
    pub crash: bool,

    /// Exit with code N after the first turn.
    #[arg(long, value_name = "N")]
    pub exit_code: Option<u8>,

    /// Start a child that stays in this process group (and keeps the PTY open).
    #[arg(long)]
    pub descendant: bool,

    /// Start a child that leaves this session (setsid) and lets go of the PTY.
    #[arg(long)]
    pub escaped_descendant: bool,

    /// Wait MS milliseconds before printing the banner.
    #[arg(long, value_name = "MS")]
    pub slow_start: Option<u64>,

    /// Thinking time per prompt, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_THINK_MS)]
    pub think_ms: u64,

    /// Think, past `--think-ms`, until PATH exists: a test holds the agent
    /// busy for exactly as long as it needs to, not for a guessed time.
    #[arg(long, value_name = "PATH")]
    pub think_until: Option<std::path::PathBuf>,

    /// Internal: be a descendant — do nothing for SECS seconds, then exit 0.
    #[arg(long, value_name = "SECS", hide = true)]
    pub linger_secs: Option<u64>,
}

impl Default for DemoArgs {
    /// The same as `agents demo-agent` with no flags.
    fn default() -> Self {
        Self {
            prompt: None,
            exit_after_prompt: false,
            flood: None,
            ask: false,
            subagents: None,
            ignore_sigterm: false,
            ignore_sigint: false,
            hang: false,
            crash: false,
            exit_code: None,
            descendant: false,
            escaped_descendant: false,
            slow_start: None,
            think_ms: DEFAULT_THINK_MS,
            think_until: None,
            linger_secs: None,
        }
    }
}

impl DemoArgs {
    /// The arguments after `demo-agent` that parse back into `self`, for
    /// launching the demo agent as a harness command or as a child.
    pub fn to_cli_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        let mut flag = |on: bool, name: &str| {
            if on {
                args.push(format!("--{name}"));
            }
        };
        flag(self.exit_after_prompt, "exit-after-prompt");
        flag(self.ask, "ask");
        flag(self.ignore_sigterm, "ignore-sigterm");
        flag(self.ignore_sigint, "ignore-sigint");
        flag(self.hang, "hang");
        flag(self.crash, "crash");
        flag(self.descendant, "descendant");
        flag(self.escaped_descendant, "escaped-descendant");
        // `--name=value` so a prompt starting with `-` stays one value.
        let mut value = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                args.push(format!("--{name}={value}"));
            }
        };
        value("prompt", self.prompt.clone());
        value("flood", self.flood.map(|n| n.to_string()));
        value("subagents", self.subagents.map(|n| n.to_string()));
        value("exit-code", self.exit_code.map(|n| n.to_string()));
        value("slow-start", self.slow_start.map(|n| n.to_string()));
        value(
            "think-ms",
            (self.think_ms != DEFAULT_THINK_MS).then(|| self.think_ms.to_string()),
        );
        value(
            "think-until",
            self.think_until.as_ref().map(|p| p.to_string_lossy().into_owned()),
        );
        value("linger-secs", self.linger_secs.map(|n| n.to_string()));
        args
    }

    pub(super) fn has_opening_turn(&self) -> bool {
        self.flood.is_some() || self.ask || self.subagents.is_some() || self.prompt.is_some()
    }

    /// Whether the agent leaves after its first turn (see the module docs, step 6).
    pub(super) fn one_shot(&self) -> bool {
        let flood_only = self.flood.is_some() && !self.ask && self.subagents.is_none() && self.prompt.is_none();
        self.exit_after_prompt || self.exit_code.is_some() || flood_only
    }
}

/// A byte count with an optional binary suffix: `1000`, `64K`, `100M`, `1G`.
pub(super) fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, scale) = match text.char_indices().last() {
        Some((at, 'k' | 'K')) => (&text[..at], 1 << 10),
        Some((at, 'm' | 'M')) => (&text[..at], 1 << 20),
        Some((at, 'g' | 'G')) => (&text[..at], 1 << 30),
        _ => (text, 1),
    };
    let count: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a byte count like 1000, 64K or 100M"))?;
    count.checked_mul(scale).ok_or_else(|| format!("`{text}` is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: DemoArgs,
    }

    fn parse(args: &[&str]) -> DemoArgs {
        Cli::try_parse_from(std::iter::once("demo-agent").chain(args.iter().copied()))
            .expect("valid demo-agent arguments")
            .args
    }

    #[test]
    fn default_args_are_the_same_as_no_flags() {
        assert_eq!(parse(&[]), DemoArgs::default());
        assert!(DemoArgs::default().to_cli_args().is_empty());
    }

    #[test]
    fn cli_args_parse_back_into_the_same_args() {
        let args = DemoArgs {
            prompt: Some("-leading dash and spaces".into()),
            exit_after_prompt: true,
            flood: Some(1234),
            ask: true,
            subagents: Some(3),
            ignore_sigterm: true,
            ignore_sigint: true,
            hang: true,
            crash: true,
            exit_code: Some(7),
            descendant: true,
            escaped_descendant: true,
            slow_start: Some(50),
            think_ms: 10,
            think_until: Some("/tmp/go".into()),
            linger_secs: Some(5),
        };
        let cli = args.to_cli_args();
        let cli: Vec<&str> = cli.iter().map(String::as_str).collect();
        assert_eq!(parse(&cli), args);
    }

    #[test]
    fn once_is_an_alias_of_exit_after_prompt() {
        assert!(parse(&["--once"]).exit_after_prompt);
    }

    #[test]
    fn flood_alone_is_a_one_shot_but_flood_with_a_prompt_is_not() {
        assert!(parse(&["--flood", "10"]).one_shot());
        assert!(parse(&["--flood", "10", "--slow-start", "5"]).one_shot());
        assert!(!parse(&["--flood", "10", "--prompt", "hi"]).one_shot());
        assert!(!parse(&["--flood", "10", "--ask"]).one_shot());
        assert!(parse(&["--flood", "10", "--ask", "--once"]).one_shot());
        assert!(parse(&["--exit-code", "4"]).one_shot());
        assert!(!parse(&[]).one_shot());
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("2m"), Ok(2 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert!(parse_size("").is_err());
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }

    #[test]
    fn out_of_range_subagent_counts_are_refused() {
        assert!(Cli::try_parse_from(["demo-agent", "--subagents", "0"]).is_err());
        assert!(Cli::try_parse_from(["demo-agent", "--subagents", "65"]).is_err());
        assert!(Cli::try_parse_from(["demo-agent", "--exit-code", "256"]).is_err());
    }
}
