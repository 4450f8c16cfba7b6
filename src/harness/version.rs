//! Which version of a harness a run starts (docs/design.md §4: resolved before spawn
//! and written to the run record). `PROGRAM --version` is asked once per
//! binary: the answer is cached by path, modification time and size, so an
//! upgrade in place is noticed and a hundred runs ask once.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// How long a harness may take to print its version. Claude Code's native
/// binary answers in about a second the first time on a busy 2-core machine;
/// pi 0.73 loads its whole bundle first: ~2 s here, 11.5 s with two builds
/// running beside it. Twenty leaves room without letting a broken binary
/// hold up a start for long (once: the answer, or its absence, is cached).
const VERSION_TIMEOUT: Duration = Duration::from_secs(20);

type Key = (PathBuf, SystemTime, u64);

fn cache() -> &'static Mutex<HashMap<Key, Option<String>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Option<String>>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The version `binary --version` prints, from the cache when the binary is
/// unchanged. `None` when it cannot say (not a failure: the run still starts).
pub fn version_of(binary: &Path) -> Option<String> {
    let meta = std::fs::metadata(binary).ok()?;
    let key = (binary.to_path_buf(), meta.modified().ok()?, meta.len());
    if let Some(known) = cache().lock().get(&key) {
        return known.clone();
    }
    // A binary that could not be started at all (being written: ETXTBSY)
    // is asked again next time; one that ran and said nothing is not.
    let found = probe(binary)?;
    cache().lock().insert(key, found.clone());
    found
}

/// [`version_of`] the program `prepared` launches, asked off the async
/// runtime; none when its family has no version to say.
pub async fn launched(prepared: &super::Prepared) -> Option<String> {
    if !prepared.adapter.has_version() {
        return None;
    }
    let binary = PathBuf::from(&prepared.launch.argv[0]);
    tokio::task::spawn_blocking(move || version_of(&binary))
        .await
        .ok()
        .flatten()
}

/// `None`: the binary did not start. `Some(None)`: it gave no version.
fn probe(binary: &Path) -> Option<Option<String>> {
    // Asked in a folder of no one's: some write into the one they are
    // asked in, even for --version (Letta Code's `.letta/`).
    let binary = std::path::absolute(binary).ok()?;
    let child = Command::new(&binary)
        .arg("--version")
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    Some(match rx.recv_timeout(VERSION_TIMEOUT) {
        // pi 0.73 prints its version on stderr: read there when stdout has none.
        Ok(Ok(out)) => {
            let text = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(4096)]).into_owned();
            parse_version(&text(&out.stdout)).or_else(|| parse_version(&text(&out.stderr)))
        }
        Ok(Err(_)) => None,
        Err(_) => {
            // Our own child, still unreaped (the thread waits on it): its pid
            // cannot have been reused.
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            None
        }
    })
}

/// The first word that looks like a version: `2.1.197 (Claude Code)`,
/// `codex-cli 0.171.0`, `aider 0.86.1`, `v1.2.3`, `GitHub Copilot CLI
/// 1.0.102.` (a sentence's full stop is not part of it).
pub fn parse_version(out: &str) -> Option<String> {
    out.split_whitespace()
        .map(|w| w.trim_start_matches('v').trim_end_matches([',', ')', ';', '.']))
        .find(|w| {
            w.starts_with(|c: char| c.is_ascii_digit())
                && w.contains('.')
                && w.len() <= 64
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
        })
        .map(str::to_string)
}

/// The newest version of each agent CLI that agents was verified with:
/// the versions `.ci/run` pins and the real-CLI tests run (a unit test
/// keeps the two the same).
pub const VERIFIED: &[(&str, &str)] = &[
    ("claude", "2.1.197"),
    ("codex", "0.171.0"),
    ("gemini", "0.61.0"),
    ("aider", "0.86.2"),
    ("opencode", "1.18.33"),
    ("kilo", "7.7.7"),
    ("qwen", "0.24.4"),
    ("pi", "0.73.1"),
    ("copilot", "1.0.102"),
    ("droid", "0.225.2"),
    ("auggie", "0.36.0"),
    ("continue", "1.5.47"),
    ("gptme", "0.35.1"),
    ("cline", "3.0.65"),
    // Its package is 0.0.34; it says 1.0.1 whatever its version.
    ("grok", "1.0.1"),
    ("nanocoder", "1.30.0"),
    ("letta", "0.25.9"),
    ("mini", "2.4.6"),
    ("interpreter", "0.4.3"),
    ("hermes", "0.19.0"),
    ("code-puppy", "0.0.946"),
];

/// The version `family` was verified with, when `found` is newer: its
/// screen rules (a new wording of a question) may need an update.
pub fn newer_than_verified(family: &str, found: &str) -> Option<&'static str> {
    let verified = VERIFIED.iter().find(|(f, _)| *f == family)?.1;
    (numbers(found)? > numbers(verified)?).then_some(verified)
}

/// `1.18.33` as `[1, 18, 33]`; a pre-release suffix (`-beta.1`) is left out.
fn numbers(version: &str) -> Option<Vec<u64>> {
    let core = version.split(['-', '+']).next()?;
    core.split('.').map(|n| n.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_asked_for_in_a_folder_of_no_one_s() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("cli");
        let said = dir.path().join("asked-in");
        std::fs::write(
            &script,
            format!("#!/bin/sh\npwd > {}\necho 'cli 4.5.6'\n", said.display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(version_of(&script).as_deref(), Some("4.5.6"));
        let asked_in = std::fs::read_to_string(&said).unwrap();
        let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        assert_eq!(std::fs::canonicalize(asked_in.trim()).unwrap(), temp);
    }

    #[test]
    fn a_version_newer_than_the_one_verified_is_told() {
        assert_eq!(newer_than_verified("claude", "2.1.332"), Some("2.1.197"));
        assert_eq!(newer_than_verified("claude", "2.1.197"), None);
        assert_eq!(newer_than_verified("claude", "2.1.50"), None, "not by text order");
        assert_eq!(newer_than_verified("codex", "0.200.0-alpha.3"), Some("0.171.0"));
        assert_eq!(newer_than_verified("cmd", "9.9.9"), None);
    }

    #[test]
    fn the_versions_verified_are_those_the_ci_pins() {
        let ci = include_str!("../../.ci/run");
        for (family, version) in VERIFIED {
            // `npm_cli NAME PACKAGE VERSION BIN AGENTS_TEST_FAMILY …`, or
            // `family_version=VERSION` for one installed otherwise (a
            // family's `-` is `_` in a shell's names).
            let family = family.replace('-', "_");
            let var = format!("AGENTS_TEST_{} ", family.to_uppercase());
            let pinned = ci.lines().any(|l| {
                (l.starts_with("npm_cli ") && l.contains(&format!(" {version} ")) && l.contains(&var))
                    || l == format!("{family}_version={version}")
            });
            assert!(pinned, "{family}: .ci/run pins another version than {version}");
        }
    }

    #[test]
    fn versions_are_read_from_what_each_harness_prints() {
        assert_eq!(parse_version("2.1.197 (Claude Code)\n").as_deref(), Some("2.1.197"));
        assert_eq!(parse_version("codex-cli 0.171.0").as_deref(), Some("0.171.0"));
        assert_eq!(parse_version("aider v0.86.1").as_deref(), Some("0.86.1"));
        assert_eq!(parse_version("0.30.0-nightly.2\n").as_deref(), Some("0.30.0-nightly.2"));
        assert_eq!(
            parse_version("GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.\n").as_deref(),
            Some("1.0.102")
        );
        assert_eq!(parse_version("no version here"), None);
    }

    #[test]
    fn a_binary_is_asked_once_until_it_changes() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("fake-claude");
        let count = dir.path().join("count");
        let script = |v: &str| format!("#!/bin/sh\necho x >> '{}'\necho '{v} (Claude Code)'\n", count.display());
        // Another test thread forking while the script is open for writing
        // makes exec fail with ETXTBSY for a moment: such a failure is not
        // cached, so asking again is the remedy.
        let asked = |bin: &Path| {
            (0..100).find_map(|_| {
                version_of(bin).or_else(|| {
                    std::thread::sleep(Duration::from_millis(10));
                    None
                })
            })
        };
        std::fs::write(&bin, script("1.0.0")).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(asked(&bin).as_deref(), Some("1.0.0"));
        assert_eq!(asked(&bin).as_deref(), Some("1.0.0"));
        assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 1);

        // An upgrade in place: new contents (and size), so asked again.
        std::fs::write(&bin, script("1.0.10")).unwrap();
        assert_eq!(asked(&bin).as_deref(), Some("1.0.10"));
        assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 2);
    }
}
