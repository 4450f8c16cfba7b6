//! A stand-in for Claude Code on PATH, for tests of sessions (resume,
//! transcripts) that need no model.

use std::os::unix::fs::PermissionsExt;

use super::Home;

/// A stand-in for Claude Code: answers --version, prints its arguments,
/// writes the first line of a new session's transcript where Claude would
/// (under $HOME/.claude), and waits for input, like the interactive CLI.
/// It prints `$AGENTS_TEST_KEY` too, to show what `--env` passed it.
pub fn fake_claude(dir: &std::path::Path) {
    let script = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "2.1.197 (Claude Code)"; exit 0; fi
printf 'args:'; printf ' %s' "$@"; printf '\n'
printf 'key=%s\n' "$AGENTS_TEST_KEY"
sid=""; prev=""
for a in "$@"; do [ "$prev" = "--session-id" ] && sid="$a"; prev="$a"; done
if [ -n "$sid" ]; then
  dir="$HOME/.claude/projects/$(printf %s "$PWD" | sed 's/[^A-Za-z0-9]/-/g')"
  mkdir -p "$dir"
  printf '{"type": "user", "message": {"role": "user", "content": "hello"}, "uuid": "u0", "sessionId": "%s"}\n' "$sid" >> "$dir/$sid.jsonl"
fi
read -r line
"#;
    let path = dir.join("claude");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The stand-in on PATH, and a HOME of the test's for the harness's own
/// files (transcripts): how these tests run agents beside it.
pub struct WithClaude {
    _bin: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub path: String,
}

impl WithClaude {
    pub fn new() -> WithClaude {
        let bin = tempfile::tempdir().unwrap();
        fake_claude(bin.path());
        let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
        WithClaude {
            _bin: bin,
            home: tempfile::tempdir().unwrap(),
            path,
        }
    }

    pub fn cmd(&self, home: &Home, args: &[&str]) -> std::process::Command {
        let mut cmd = home.cmd(args);
        cmd.env("PATH", &self.path).env("HOME", self.home.path());
        cmd
    }

    /// A command that must succeed: its output, trimmed.
    pub fn ok(&self, home: &Home, args: &[&str]) -> String {
        let out = self.cmd(home, args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}
