//! `config.toml` (docs/design.md §3). The daemon re-reads it when its SHA-256
//! changes; an invalid revision is reported and never replaces the last
//! valid one.

pub mod routines;
pub mod teams;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::harness::status::Rules;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub engine: Engine,
    pub tui: Tui,
    /// NORMAL-mode key bindings by action name (see `keymap`).
    pub keys: std::collections::HashMap<String, String>,
    /// Harness profiles: `agents run NAME` (see `harness::Profile`).
    pub profiles: std::collections::BTreeMap<String, crate::harness::Profile>,
    /// `[prices."MODEL-PREFIX"]`: USD per million tokens, replacing the
    /// built-in estimate for models whose name starts with the prefix
    /// (see `transcript::price`).
    pub prices: std::collections::BTreeMap<String, crate::transcript::price::Price>,
    /// `[routines.NAME]`: runs started on a schedule (see `routines`).
    pub routines: std::collections::BTreeMap<String, crate::config::routines::Routine>,
    /// `[retention]`: how long ended runs' output logs are kept.
    pub retention: crate::values::retention::Retention,
    /// `[teams.NAME]`: a leader and members started together
    /// (`agents team start NAME`).
    pub teams: std::collections::BTreeMap<String, crate::config::teams::TeamDef>,
    /// `[web]`: the web view the daemon serves all the time.
    pub web: Web,
    /// `[harnesses.NAME]`: agent CLIs agents has no adapter for, declared
    /// as data (see `harness::user`).
    pub harnesses: std::collections::BTreeMap<String, crate::harness::user::FamilyDef>,
}

/// `[web]`: with `listen`, the daemon keeps the web view served there
/// (`agents web --for-daemon`), opened with a device's token (`agents web
/// tokens add NAME`). `origins` and the TLS pair apply to `agents web` too.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Web {
    /// `ADDR:PORT`; none: the daemon serves no web view.
    pub listen: Option<String>,
    /// Other addresses the page is opened at (a reverse proxy's), as URLs.
    pub origins: Vec<String>,
    /// HTTPS: the certificate chain and its key, PEM files.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Tui {
    /// Ring the terminal bell once when a run starts waiting for an answer.
    pub bell: bool,
    /// A desktop notification through the outer terminal (OSC 9 and 777)
    /// when a run starts waiting or ends.
    pub desktop: bool,
    /// A command run then, each word with `{name}`, `{why}`, `{id}`,
    /// `{state}` filled in: `["notify-send", "{name}", "{why}"]`.
    pub notify: Vec<String>,
}

impl Default for Tui {
    fn default() -> Self {
        Tui {
            bell: true,
            desktop: false,
            notify: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Engine {
    /// Lines of history `agents logs` and scrollback render (docs/design.md §6).
    pub history_lines: usize,
    /// An agent is busy while its output is younger than this; prompts queue
    /// until it has been quiet this long.
    pub quiet_ms: u64,
    pub cancel_sigint_grace_ms: u64,
    pub cancel_sigterm_grace_ms: u64,
    /// PTY size while no client is attached, `COLSxROWS`.
    pub default_size: String,
    /// A status no evidence has confirmed for this long becomes `unknown`
    /// (docs/design.md §7).
    pub status_decay_secs: u64,
    /// A hook that said working, with no output since for this long, is
    /// not believed: `unknown` (docs/design.md §7).
    pub hook_stall_secs: u64,
    /// A working run whose screen (less its spinners and counters) and
    /// transcript have not changed for this long is `stalled`
    /// (docs/design.md §7). 0: never.
    pub stalled_after_secs: u64,
    /// Output going on this long since a hook that said the agent stopped
    /// (idle, waiting, asking), with no question on screen, makes the run
    /// `working` again (docs/design.md §7).
    pub hook_overrule_ms: u64,
    /// A run whose output the disk refuses (full) is paused this long,
    /// the harness held on its next write, before it is ended.
    pub disk_full_patience_ms: u64,
    /// Output faster than this many bytes a second is a flood: while it
    /// lasts the run yields the processor to the others (docs/design.md
    /// §10). 0 never yields.
    pub flood_bytes_per_s: u64,
    /// A prompt waits this long after a person last typed into the run
    /// (and while its input line holds a draft), so it never joins what
    /// they are writing. 0: only a draft holds it.
    pub hold_after_typing_ms: u64,
}

impl Default for Engine {
    fn default() -> Self {
        Engine {
            history_lines: 10_000,
            // A second of silence: long enough to span an agent's pauses
            // between streamed tokens, short enough that a queued prompt
            // follows promptly.
            quiet_ms: 1000,
            cancel_sigint_grace_ms: 3000,
            cancel_sigterm_grace_ms: 3000,
            default_size: "120x40".into(),
            // Ten minutes: longer than any pause a working agent makes
            // between hooks (a long build, a slow model), short enough that a
            // status left behind by a missed hook does not mislead for long.
            status_decay_secs: 600,
            // A minute: the agent CLIs with hooks (Claude Code, Codex)
            // redraw their spinner and its clock every second while a turn
            // goes on, tools and slow models included.
            hook_stall_secs: 60,
            // Five minutes: longer than a model thinks between two lines it
            // draws or a test suite runs between two names it prints, short
            // enough that a turn waiting on a limit or a hung tool is told
            // before the user wonders.
            stalled_after_secs: 300,
            // Three seconds: longer than the redraw after a turn's end or
            // a permission prompt, shorter than any real piece of work.
            hook_overrule_ms: 3000,
            // Half a minute: a build that filled the disk and cleaned up
            // after itself, or a user freeing space, costs no agent.
            disk_full_patience_ms: 30_000,
            flood_bytes_per_s: crate::protocol::supervisor::FLOOD_BYTES_PER_S,
            // Three seconds: a pause in typing to think is longer than the
            // gap between two keys, and a prompt kept waiting this long
            // after the last key is not kept waiting long.
            hold_after_typing_ms: 3000,
        }
    }
}

impl Engine {
    /// The timings by which a run's status is fused (`harness::status`).
    pub fn status_rules(&self) -> Rules {
        Rules {
            quiet: Duration::from_millis(self.quiet_ms),
            decay: Duration::from_secs(self.status_decay_secs),
            stall: Duration::from_secs(self.hook_stall_secs),
            overrule: Duration::from_millis(self.hook_overrule_ms),
            stalled: (self.stalled_after_secs > 0).then(|| Duration::from_secs(self.stalled_after_secs)),
        }
    }
}

impl Config {
    pub fn parse(text: &str) -> Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|e| e.to_string().trim().replace('\n', " "))?;
        parse_size(&config.engine.default_size).map_err(|e| format!("engine.default_size: {e}"))?;
        crate::keymap::Keymap::from_config(&config.keys).map_err(|e| format!("keys: {e}"))?;
        let families = config.families()?;
        crate::harness::validate_profiles(&config.profiles, &families)?;
        crate::transcript::price::validate(&config.prices)?;
        crate::config::routines::validate_all(&config.routines, &config.profiles)?;
        crate::config::teams::validate(&config.teams, &config.profiles, &families)?;
        if config.web.tls_cert.is_some() != config.web.tls_key.is_some() {
            return Err("web: tls_cert and tls_key go together".into());
        }
        Ok(config)
    }

    /// The families `[harnesses]` declares, checked.
    pub fn families(&self) -> Result<crate::harness::user::Families, String> {
        crate::harness::user::Families::read(&self.harnesses)
    }

    /// Makes this config's declared families the ones this process
    /// launches and reads (`harness::adapter_for`).
    fn install_families(&self) {
        if let Ok(families) = self.families() {
            families.install();
        }
    }

    pub fn default_size(&self) -> (u16, u16) {
        parse_size(&self.engine.default_size).unwrap_or((40, 120))
    }
}

/// Parses `COLSxROWS` into (rows, cols).
pub fn parse_size(s: &str) -> Result<(u16, u16), String> {
    let (c, r) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("size '{s}' is not COLSxROWS"))?;
    let cols: u16 = c.trim().parse().map_err(|_| format!("bad column count in '{s}'"))?;
    let rows: u16 = r.trim().parse().map_err(|_| format!("bad row count in '{s}'"))?;
    if !(2..=2000).contains(&cols) || !(2..=1000).contains(&rows) {
        return Err(format!("size '{s}' out of range (2..2000 x 2..1000)"));
    }
    Ok((rows, cols))
}

/// The config as last read, with the revision it came from.
pub struct ConfigWatch {
    path: Option<PathBuf>,
    hash: Option<[u8; 32]>,
    /// The file's stamp when last read, if it was already settled then: the
    /// daemon asks for the config on every output wake of every run, and an
    /// unchanged settled stamp spares reading and hashing the file.
    settled: Option<FileStamp>,
    pub current: Config,
    /// The last problem seen with the file, if its newest revision is invalid.
    pub problem: Option<String>,
    /// Where the last valid revision is kept (`config.valid.toml` in the
    /// home), so that a restart with an invalid file still uses it.
    kept: Option<PathBuf>,
    /// Whether this watch writes each valid revision there (the daemon's),
    /// or only reads the one kept (a client's).
    keeps: bool,
}

impl ConfigWatch {
    pub fn new(path: Option<PathBuf>) -> ConfigWatch {
        Self::keeping(path, None)
    }

    /// A watch that keeps each valid revision in `kept` (with its SHA-256)
    /// and, when the file is invalid from the start (a restart after a bad
    /// edit), uses the kept revision instead of the built-in defaults.
    pub fn keeping(path: Option<PathBuf>, kept: Option<PathBuf>) -> ConfigWatch {
        Self::open(path, kept, true)
    }

    /// The config as a client reads it (the TUI, `attach`, `logs`, MCP):
    /// the user's file, or, while it is invalid, the last valid revision
    /// the daemon kept — never the built-in defaults in its place. Only the
    /// daemon writes the kept revision.
    pub fn reading(paths: &crate::paths::Paths) -> ConfigWatch {
        Self::open(crate::paths::Paths::config_file(), Some(paths.kept_config()), false)
    }

    fn open(path: Option<PathBuf>, kept: Option<PathBuf>, keeps: bool) -> ConfigWatch {
        let mut watch = ConfigWatch {
            path,
            hash: None,
            settled: None,
            current: Config::default(),
            problem: None,
            kept,
            keeps,
        };
        watch.refresh();
        if watch.problem.is_some()
            && let Some((config, hash)) = watch.kept.as_deref().and_then(read_kept)
        {
            watch.current = config;
            watch.current.install_families();
            if let Some(problem) = &mut watch.problem {
                problem.push_str(&format!(" (revision {} kept from before)", &hash[..12]));
            }
        }
        watch
    }

    /// Re-reads the file if its content changed. Returns whether the active
    /// config changed.
    pub fn refresh(&mut self) -> bool {
        let Some(path) = &self.path else { return false };
        // Stamped before reading: a rewrite during the read changes the stamp
        // after it, so the next call reads again.
        let stamp = FileStamp::of(path);
        if stamp.is_some() && stamp == self.settled {
            return false;
        }
        let read_at = std::time::SystemTime::now();
        self.settled = stamp.filter(|s| s.settled_at(read_at));
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                self.problem = Some(format!("{}: {e}", path.display()));
                return false;
            }
        };
        let hash: [u8; 32] = Sha256::digest(&bytes).into();
        if self.hash == Some(hash) {
            return false;
        }
        self.hash = Some(hash);
        match std::str::from_utf8(&bytes)
            .map_err(|e| e.to_string())
            .and_then(Config::parse)
        {
            Ok(config) => {
                self.problem = None;
                if let Some(kept) = self.kept.as_ref().filter(|_| self.keeps) {
                    keep(kept, &bytes, &hash);
                }
                let changed = config != self.current;
                self.current = config;
                self.current.install_families();
                changed
            }
            Err(e) => {
                let msg = format!("{} is invalid, keeping the last valid config: {e}", path.display());
                tracing::warn!("{msg}");
                self.problem = Some(msg);
                false
            }
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

/// The first line of a kept revision names its SHA-256; the rest is the
/// file as it was.
const KEPT_HEADER: &str = "# agents: the last valid config.toml, sha256 ";

fn keep(kept: &Path, bytes: &[u8], hash: &[u8; 32]) {
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    let mut text = format!("{KEPT_HEADER}{hex}\n").into_bytes();
    text.extend_from_slice(bytes);
    let tmp = kept.with_extension("tmp");
    // A home that cannot be written keeps the previous copy; the daemon
    // says so elsewhere (every write to the home fails alike).
    if std::fs::write(&tmp, &text).is_ok() {
        let _ = std::fs::rename(&tmp, kept);
    }
}

/// The kept revision, if it is whole (its hash matches) and valid.
fn read_kept(kept: &Path) -> Option<(Config, String)> {
    let text = std::fs::read_to_string(kept).ok()?;
    let (first, body) = text.split_once('\n')?;
    let hex = first.strip_prefix(KEPT_HEADER)?;
    let hash: [u8; 32] = Sha256::digest(body.as_bytes()).into();
    let actual: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    if actual != hex {
        tracing::warn!("{} does not match its hash; not used", kept.display());
        return None;
    }
    Some((Config::parse(body).ok()?, actual))
}

/// What changes whenever a file is rewritten or replaced, short of its
/// bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct FileStamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: std::time::SystemTime,
    ctime: (i64, i64),
}

/// File times come from a coarse clock (a kernel tick; 2 s on FAT), so a
/// rewrite soon after a read may keep the stamp. A stamp whose mtime was
/// this much older than the read cannot be kept by a later rewrite.
const STAMP_SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

impl FileStamp {
    fn of(path: &Path) -> Option<FileStamp> {
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: m.modified().ok()?,
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }

    fn settled_at(&self, read_at: std::time::SystemTime) -> bool {
        self.mtime + STAMP_SETTLED < read_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_revision_never_replaces_the_last_valid_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[engine]\nquiet_ms = 250\n").unwrap();
        let mut watch = ConfigWatch::new(Some(path.clone()));
        assert_eq!(watch.current.engine.quiet_ms, 250);
        assert!(watch.problem.is_none());

        std::fs::write(&path, "[engine]\nquiet_ms = \"soon\"\n").unwrap();
        assert!(!watch.refresh());
        assert_eq!(watch.current.engine.quiet_ms, 250);
        assert!(watch.problem.as_deref().unwrap().contains("invalid"));

        std::fs::write(&path, "[engine]\nquiet_ms = 300\n").unwrap();
        assert!(watch.refresh());
        assert_eq!(watch.current.engine.quiet_ms, 300);
        assert!(watch.problem.is_none());
    }

    #[test]
    fn the_last_valid_revision_is_kept_and_used_when_the_file_is_invalid_from_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let (path, kept) = (dir.path().join("config.toml"), dir.path().join("config.valid.toml"));
        std::fs::write(&path, "[engine]\nquiet_ms = 250\n").unwrap();
        let watch = ConfigWatch::keeping(Some(path.clone()), Some(kept.clone()));
        assert_eq!(watch.current.engine.quiet_ms, 250);
        // A bad edit, then a restart: the kept revision, and a problem saying so.
        std::fs::write(&path, "[engine]\nquiet_ms = \"soon\"\n").unwrap();
        let restarted = ConfigWatch::keeping(Some(path.clone()), Some(kept.clone()));
        assert_eq!(restarted.current.engine.quiet_ms, 250);
        assert!(restarted.problem.as_deref().unwrap().contains("kept from before"));
        // A kept copy that was tampered with is not used.
        let text = std::fs::read_to_string(&kept).unwrap().replace("250", "999");
        std::fs::write(&kept, text).unwrap();
        let tampered = ConfigWatch::keeping(Some(path), Some(kept));
        assert_eq!(tampered.current.engine.quiet_ms, Config::default().engine.quiet_ms);
    }

    #[test]
    fn a_client_reads_the_kept_revision_while_the_file_is_invalid_and_keeps_none_itself() {
        let dir = tempfile::tempdir().unwrap();
        let (path, kept) = (dir.path().join("config.toml"), dir.path().join("config.valid.toml"));
        std::fs::write(&path, "[engine]\nquiet_ms = 250\n").unwrap();
        let client = ConfigWatch::open(Some(path.clone()), Some(kept.clone()), false);
        assert_eq!(client.current.engine.quiet_ms, 250);
        assert!(!kept.exists(), "only the daemon writes the kept revision");
        // The daemon kept it; then a bad edit: a client reads the kept one,
        // not the built-in defaults, and says why.
        ConfigWatch::keeping(Some(path.clone()), Some(kept.clone()));
        std::fs::write(&path, "[engine]\nquiet_ms = \"soon\"\n").unwrap();
        let client = ConfigWatch::open(Some(path), Some(kept), false);
        assert_eq!(client.current.engine.quiet_ms, 250);
        assert!(client.problem.as_deref().unwrap().contains("kept from before"));
    }

    #[test]
    fn a_rewrite_of_a_settled_config_is_seen_even_with_the_same_length_and_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let write = |text: &str| {
            std::fs::write(&path, text).unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(long_ago).unwrap();
        };
        write("[engine]\nquiet_ms = 250\n");
        let mut watch = ConfigWatch::new(Some(path.clone()));
        assert!(!watch.refresh());
        assert!(watch.settled.is_some(), "an old, unchanged file is not read again");

        write("[engine]\nquiet_ms = 300\n");
        assert!(watch.refresh());
        assert_eq!(watch.current.engine.quiet_ms, 300);
    }

    #[test]
    fn prices_override_by_prefix_and_bad_ones_are_refused() {
        let config = Config::parse(
            "[prices.\"claude-opus-4\"]\ninput = 3.0\noutput = 15.0\ncache_read = 0.3\ncache_write = 3.75\n",
        )
        .unwrap();
        assert_eq!(config.prices["claude-opus-4"].output, 15.0);
        let missing = Config::parse("[prices.\"gpt-5\"]\ninput = 1.0\noutput = 2.0\ncache_read = 0.1\n").unwrap_err();
        assert!(missing.contains("cache_write"), "{missing}");
        let negative =
            Config::parse("[prices.\"gpt-5\"]\ninput = -1.0\noutput = 2.0\ncache_read = 0.1\ncache_write = 1.0\n")
                .unwrap_err();
        assert!(negative.contains("prices.\"gpt-5\": input = -1"), "{negative}");
        let unknown =
            Config::parse("[prices.x]\ninput = 1.0\noutput = 1.0\ncache_read = 0\ncache_write = 0\ncached = 1\n");
        assert!(unknown.unwrap_err().contains("cached"));
    }

    #[test]
    fn an_invalid_schedule_is_reported_and_the_last_valid_routines_stay() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[routines.nightly]\nschedule = \"0 3 * * 1-5\"\nharness = \"cmd\"\n",
        )
        .unwrap();
        let mut watch = ConfigWatch::new(Some(path.clone()));
        assert_eq!(watch.current.routines["nightly"].schedule, "0 3 * * 1-5");
        std::fs::write(
            &path,
            "[routines.nightly]\nschedule = \"0 3 * * 8\"\nharness = \"cmd\"\n",
        )
        .unwrap();
        assert!(!watch.refresh());
        assert_eq!(watch.current.routines["nightly"].schedule, "0 3 * * 1-5");
        let problem = watch.problem.as_deref().unwrap();
        assert!(problem.contains("routines.nightly: schedule '0 3 * * 8'"), "{problem}");
    }

    #[test]
    fn sizes_parse_as_cols_by_rows() {
        assert_eq!(parse_size("200x50"), Ok((50, 200)));
        assert!(parse_size("0x0").is_err());
        assert!(parse_size("wide").is_err());
    }
}
