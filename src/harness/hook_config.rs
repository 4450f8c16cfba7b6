//! Hook settings in the shape Claude Code reads, which Factory Droid reads
//! too: `{"hooks": {EVENT: [{"matcher": "*", "hooks": [{"type":
//! "command", "command": "…"}]}]}}`, each event running `agents hook EVENT`.
//! Written per run into the run's folder and passed with `--settings`; a
//! user's own `--settings` is merged into that file, not dropped.

use std::path::Path;

use serde_json::{Value, json};

use super::adapter::shell_quote;

/// The harness's own limit for one hook, in seconds. `agents hook` gives
/// up after 1.5 s (`cli::hook::BUDGET`); this only guards against a hook
/// that cannot even start.
pub const HOOK_TIMEOUT_SECS: u64 = 5;

/// What a family's settings install.
pub struct HookSet {
    pub events: &'static [&'static str],
    /// Events that take a tool matcher; `*` is every tool.
    pub tool_events: &'static [&'static str],
    /// Words before the event on `agents hook`'s command line
    /// (`--suppress-output` where the harness would show each hook ran).
    pub options: &'static str,
}

/// The per-run settings: `base` (the user's own `--settings`, if any) with
/// every event of `set` also running `agents hook EVENT`.
pub fn settings(mut base: Value, agents_bin: &Path, set: &HookSet) -> String {
    let program = shell_quote(&agents_bin.to_string_lossy());
    if !base["hooks"].is_object() {
        base["hooks"] = json!({});
    }
    for event in set.events {
        let words = match set.options {
            "" => format!("{program} hook {event}"),
            options => format!("{program} hook {options} {event}"),
        };
        let command = json!({ "type": "command", "command": words, "timeout": HOOK_TIMEOUT_SECS });
        let mut group = json!({ "hooks": [command] });
        if set.tool_events.contains(event) {
            group["matcher"] = Value::from("*");
        }
        let groups = &mut base["hooks"][*event];
        match groups.as_array_mut() {
            Some(list) => list.push(group),
            None => *groups = json!([group]),
        }
    }
    // One command per line, so a person (or a test's shell script) can read it.
    serde_json::to_string_pretty(&base).unwrap_or_default()
}

/// Splits a user's `--settings FILE-OR-JSON` off their arguments.
fn take_settings(args: &[String]) -> (Option<String>, Vec<String>) {
    let mut own = None;
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--settings" {
            own = it.next().cloned();
        } else if let Some(value) = arg.strip_prefix("--settings=") {
            own = Some(value.to_string());
        } else {
            rest.push(arg.clone());
        }
    }
    (own, rest)
}

/// The user's own settings the arguments name, or none: inline JSON, or a
/// file (relative to the run's cwd); the arguments without them.
pub fn own_settings(args: &[String], cwd: &Path) -> Result<(Value, Vec<String>), String> {
    let (own, rest) = take_settings(args);
    let own = match own {
        Some(given) => read_settings(&given, cwd)?,
        None => Value::Object(Default::default()),
    };
    Ok((own, rest))
}

/// A user's settings: inline JSON, or a file (relative to the run's cwd).
fn read_settings(given: &str, cwd: &Path) -> Result<Value, String> {
    let text = if given.trim_start().starts_with('{') {
        given.to_string()
    } else {
        std::fs::read_to_string(cwd.join(given))
            .map_err(|e| format!("bad option: cannot read --settings {given}: {e}"))?
    };
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(Value::Object(map)),
        _ => Err(format!("bad option: --settings {given} is not a JSON object")),
    }
}
