//! Routines (docs/design.md §13): `[routines.NAME]` in `config.toml`, a
//! schedule that starts runs through the same start path as `agents run`.
//! This module is the pure part: what a routine says, checked when the
//! config is read, and when its schedule fires. The daemon fires them
//! (`daemon/routines.rs`).

use chrono::{DateTime, TimeZone, Utc};
use serde::Deserialize;

/// One `[routines.NAME]` table, as written.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Routine {
    /// A cron expression: five fields (minute hour day month weekday), or
    /// six with seconds first; `@daily` and the other aliases.
    pub schedule: String,
    /// An IANA zone (`Europe/Paris`), `UTC`, or `local` (the default).
    #[serde(default)]
    pub timezone: Option<String>,
    /// A harness family (`claude`, `cmd`, `demo`, …); or `profile`.
    #[serde(default)]
    pub harness: Option<String>,
    /// A `[profiles.NAME]`; or `harness`.
    #[serde(default)]
    pub profile: Option<String>,
    /// Arguments for the harness (`cmd`: the command line).
    #[serde(default)]
    pub args: Vec<String>,
    /// A first prompt, typed once the agent is idle.
    #[serde(default)]
    pub prompt: Option<String>,
    /// Where the run starts: `~/…` is the home of the host it runs on;
    /// the default is that home.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Each run in its own git worktree and branch (`agents run --worktree`).
    #[serde(default)]
    pub worktree: bool,
    /// A host from `agents hosts`; the default runs here.
    #[serde(default)]
    pub host: Option<String>,
    /// End the run (`timed_out`) after this long: seconds, or `30m`, `2h`.
    #[serde(default)]
    pub timeout: Option<Timeout>,
    /// Variables passed to the harness by name, their values from the
    /// daemon's environment at the fire (one that is not set there makes
    /// the fire `skipped`).
    #[serde(default)]
    pub env: Vec<String>,
    #[serde(default)]
    pub overlap: Overlap,
    #[serde(default)]
    pub catch_up: CatchUp,
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Each fire boxed (`true`, `"offline"`), as `--sandbox` asks.
    #[serde(default)]
    pub sandbox: Option<crate::values::sandbox::Setting>,
}

fn yes() -> bool {
    true
}

/// `timeout = 600` or `timeout = "10m"`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Timeout {
    Secs(u64),
    Text(String),
}

impl Timeout {
    pub fn secs(&self) -> Result<u64, String> {
        let secs = match self {
            Timeout::Secs(s) => *s,
            Timeout::Text(t) => humantime::parse_duration(t)
                .map_err(|e| format!("timeout '{t}': {e}"))?
                .as_secs(),
        };
        if secs == 0 {
            return Err("timeout must be at least 1 second".into());
        }
        Ok(secs)
    }
}

/// What a fire does while the routine's previous run still runs.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Overlap {
    /// Recorded as a `skipped` run, with the run that still runs.
    #[default]
    Skip,
    /// Started once the previous run has ended (at most `MAX_QUEUED` wait).
    Queue,
    /// Started beside it.
    Parallel,
}

/// What a restarted daemon does with the fires it missed.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CatchUp {
    /// Each recorded as `skipped`.
    #[default]
    None,
    /// The newest started now; the others recorded as `skipped`.
    Latest,
}

impl Overlap {
    pub fn as_str(self) -> &'static str {
        match self {
            Overlap::Skip => "skip",
            Overlap::Queue => "queue",
            Overlap::Parallel => "parallel",
        }
    }
}

impl CatchUp {
    pub fn as_str(self) -> &'static str {
        match self {
            CatchUp::None => "none",
            CatchUp::Latest => "latest",
        }
    }
}

/// Fires waiting under `overlap = "queue"`; one more is `skipped`. A
/// routine whose runs take longer than its period would otherwise grow a
/// queue without end.
pub const MAX_QUEUED: usize = 16;

/// Missed fires recorded for one routine at a daemon's start: the newest
/// ones (a daemon stopped for a month under a schedule of every minute
/// would otherwise write 40 000 records).
pub const MAX_MISSED: usize = 100;

/// A fire this late is missed, not started: the daemon was stopped or the
/// machine asleep at its time. A minute: longer than any stall of a live
/// daemon, shorter than any cron period.
pub const LATE_MS: i64 = 60_000;

/// The longest a routine's name may be: it names its runs.
const NAME_MAX: usize = 48;

impl Routine {
    /// What `runs.start` gets as its harness: the family or the profile.
    pub fn harness(&self) -> &str {
        self.harness.as_deref().or(self.profile.as_deref()).unwrap_or_default()
    }

    /// The run each fire is asked to be, detached from whoever is there:
    /// its cwd as written (the daemon maps a local one) and its host unless
    /// `local`. The fire names it.
    pub fn spec(&self) -> crate::api::RunSpec {
        crate::api::RunSpec {
            harness: self.harness().to_string(),
            args: self.args.clone(),
            name: None,
            cwd: self.cwd.clone().unwrap_or_default(),
            prompt: self.prompt.clone(),
            worktree: self.worktree,
            host: self.host.clone().filter(|h| h != "local"),
            detached: true,
            // Checked when the config was read.
            timeout_secs: self.timeout.as_ref().and_then(|t| t.secs().ok()),
            pass_env: self.env.clone(),
            model: None,
            sandbox: self.sandbox.and_then(|s| s.mode()),
        }
    }

    pub fn schedule(&self) -> Result<Schedule, String> {
        Schedule::parse(&self.schedule, self.timezone.as_deref())
    }

    /// Every check that does not need the daemon: the config that holds a
    /// routine failing one is invalid, and never replaces the last valid
    /// one.
    pub fn validate(
        &self,
        name: &str,
        profiles: &std::collections::BTreeMap<String, crate::harness::Profile>,
    ) -> Result<(), String> {
        let at = |e: String| format!("routines.{name}: {e}");
        if name.is_empty()
            || name.len() > NAME_MAX
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(at(format!("the name must be 1 to {NAME_MAX} letters, digits, - or _")));
        }
        self.schedule().map_err(at)?;
        match (&self.harness, &self.profile) {
            (Some(_), Some(_)) => return Err(at("give harness or profile, not both".into())),
            (None, None) => return Err(at("a harness (or a profile) is required".into())),
            (None, Some(p)) if !profiles.contains_key(p) => {
                return Err(at(format!("no [profiles.{p}] for this routine")));
            }
            _ => {}
        }
        if let Some(timeout) = &self.timeout {
            timeout.secs().map_err(at)?;
        }
        if let Some(bad) = self.env.iter().find(|n| !crate::harness::is_env_name(n)) {
            return Err(at(format!("env: '{bad}' is not a variable name")));
        }
        Ok(())
    }
}

/// A routine's schedule: its cron expression in its time zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: croner::Cron,
    zone: Zone,
}

#[derive(Debug, Clone, Copy)]
enum Zone {
    Local,
    Named(chrono_tz::Tz),
}

impl Schedule {
    pub fn parse(expression: &str, timezone: Option<&str>) -> Result<Schedule, String> {
        let cron = croner::parser::CronParser::builder()
            .year(croner::parser::Year::Disallowed)
            .build()
            .parse(expression)
            .map_err(|e| format!("schedule '{expression}': {e}"))?;
        let zone = match timezone {
            None => Zone::Local,
            Some(z) if z.eq_ignore_ascii_case("local") => Zone::Local,
            Some(z) => Zone::Named(
                z.parse::<chrono_tz::Tz>()
                    .map_err(|_| format!("timezone '{z}' is not an IANA zone name (Europe/Paris, UTC) or local"))?,
            ),
        };
        // A pattern that never matches (`0 0 31 2 *`) is a mistake to say now.
        let schedule = Schedule { cron, zone };
        if schedule.next_after(crate::clock::now_ms()).is_none() {
            return Err(format!("schedule '{expression}' never fires"));
        }
        Ok(schedule)
    }

    /// The first fire strictly after `ms` (ms since the epoch).
    pub fn next_after(&self, ms: i64) -> Option<i64> {
        match self.zone {
            Zone::Local => next_in(&self.cron, &chrono::Local, ms),
            Zone::Named(tz) => next_in(&self.cron, &tz, ms),
        }
    }

    /// The fires in `(after, upto]`, oldest first, at most `max` (the
    /// newest of them); and whether older ones were left out.
    pub fn fires_between(&self, after: i64, upto: i64, max: usize) -> (Vec<i64>, bool) {
        let mut newest_first = Vec::new();
        // The first look includes `upto` itself (croner works in whole
        // seconds: a fire at 03:00:00 is due at 03:00:00.000).
        let (mut cursor, mut inclusive) = (upto, true);
        loop {
            let prev = match self.zone {
                Zone::Local => prev_in(&self.cron, &chrono::Local, cursor, inclusive),
                Zone::Named(tz) => prev_in(&self.cron, &tz, cursor, inclusive),
            };
            match prev {
                Some(t) if t > after && t <= upto => {
                    if newest_first.len() == max {
                        newest_first.reverse();
                        return (newest_first, true);
                    }
                    newest_first.push(t);
                    (cursor, inclusive) = (t, false);
                }
                // Never the same fire twice, whatever croner does with a
                // cursor between seconds.
                Some(t) if t > upto && t < cursor => (cursor, inclusive) = (t, false),
                _ => break,
            }
        }
        newest_first.reverse();
        (newest_first, false)
    }
}

fn at_ms<Z: TimeZone>(zone: &Z, ms: i64) -> Option<DateTime<Z>> {
    Some(DateTime::<Utc>::from_timestamp_millis(ms)?.with_timezone(zone))
}

fn next_in<Z: TimeZone>(cron: &croner::Cron, zone: &Z, ms: i64) -> Option<i64> {
    let t = at_ms(zone, ms)?;
    cron.find_next_occurrence(&t, false).ok().map(|t| t.timestamp_millis())
}

/// The last fire before `ms` (or at it, when `inclusive`).
fn prev_in<Z: TimeZone>(cron: &croner::Cron, zone: &Z, ms: i64, inclusive: bool) -> Option<i64> {
    let t = at_ms(zone, ms)?;
    cron.find_previous_occurrence(&t, inclusive)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// Checks every routine of a config (`Config::parse`).
pub fn validate_all(
    routines: &std::collections::BTreeMap<String, Routine>,
    profiles: &std::collections::BTreeMap<String, crate::harness::Profile>,
) -> Result<(), String> {
    routines.iter().try_for_each(|(name, r)| r.validate(name, profiles))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(rfc3339: &str) -> i64 {
        DateTime::parse_from_rfc3339(rfc3339).unwrap().timestamp_millis()
    }

    #[test]
    fn a_weekday_schedule_fires_next_on_the_next_weekday_in_its_zone() {
        let s = Schedule::parse("0 3 * * 1-5", Some("UTC")).unwrap();
        // Friday 2026-01-02 04:00 UTC → Monday 03:00.
        assert_eq!(
            s.next_after(ms("2026-01-02T04:00:00Z")),
            Some(ms("2026-01-05T03:00:00Z"))
        );
        let paris = Schedule::parse("0 3 * * *", Some("Europe/Paris")).unwrap();
        assert_eq!(
            paris.next_after(ms("2026-01-02T00:00:00Z")),
            Some(ms("2026-01-02T02:00:00Z"))
        );
    }

    #[test]
    fn fires_between_keeps_the_newest_and_says_when_it_left_some_out() {
        let s = Schedule::parse("*/10 * * * *", Some("UTC")).unwrap();
        let (fires, more) = s.fires_between(ms("2026-01-01T00:00:00Z"), ms("2026-01-01T01:00:00Z"), 100);
        assert_eq!(fires.len(), 6, "00:10 … 01:00, not 00:00 (already handled)");
        assert_eq!(fires.first(), Some(&ms("2026-01-01T00:10:00Z")));
        assert_eq!(fires.last(), Some(&ms("2026-01-01T01:00:00Z")));
        assert!(!more);
        let (fires, more) = s.fires_between(ms("2026-01-01T00:00:00Z"), ms("2026-01-01T01:00:00Z"), 2);
        assert_eq!(fires, vec![ms("2026-01-01T00:50:00Z"), ms("2026-01-01T01:00:00Z")]);
        assert!(more);
        // A fire exactly at `upto` is due; one exactly at `after` was handled.
        let at = ms("2026-01-01T00:10:00Z");
        assert_eq!(s.fires_between(at - 30_000, at, 10).0, vec![at]);
        assert!(s.fires_between(at, at + 30_000, 10).0.is_empty());
        assert_eq!(s.next_after(at), Some(ms("2026-01-01T00:20:00Z")));
        assert_eq!(s.next_after(at - 1), Some(at));
    }

    #[test]
    fn bad_routines_are_refused_with_their_name() {
        let profiles = Default::default();
        let parse = |text: &str| -> Result<(), String> {
            let r: Routine = toml::from_str(text).map_err(|e| e.to_string())?;
            r.validate("nightly", &profiles)
        };
        assert!(parse("schedule = \"0 3 * * 1-5\"\nharness = \"claude\"\n").is_ok());
        let e = parse("schedule = \"0 25 * * *\"\nharness = \"claude\"\n").unwrap_err();
        assert!(e.starts_with("routines.nightly: schedule '0 25 * * *'"), "{e}");
        let e = parse("schedule = \"@daily\"\nharness = \"cmd\"\ntimezone = \"Mars/Olympus\"\n").unwrap_err();
        assert!(e.contains("timezone 'Mars/Olympus'"), "{e}");
        assert!(parse("schedule = \"@daily\"\n").unwrap_err().contains("harness"));
        assert!(
            parse("schedule = \"@daily\"\nprofile = \"work\"\n")
                .unwrap_err()
                .contains("profiles.work")
        );
        assert!(parse("schedule = \"@daily\"\nharness = \"cmd\"\noverlap = \"sometimes\"\n").is_err());
        assert!(parse("schedule = \"@daily\"\nharness = \"cmd\"\ntimeout = \"0s\"\n").is_err());
        assert!(
            parse("schedule = \"0 0 31 2 *\"\nharness = \"cmd\"\n")
                .unwrap_err()
                .contains("never fires")
        );
    }
}
