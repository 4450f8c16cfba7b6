//! Codex CLI: `resume ID`, `fork ID`. Its `notify` program setting
//! (`-c notify=[…]`, for this run only) calls
//! `agents hook codex-notify JSON` when a turn completes; the
//! session id comes from that payload's `thread-id`, or from the newest
//! rollout transcript of the run's cwd: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-*.jsonl`
//! whose first line (`session_meta`) names the id and cwd (see
//! `shared/reference/codex-0.171.0/`).
//!
//! Not every notify is the run's conversation: after the first prompt Codex
//! 0.171 asks the model for a task title on a thread of its own, which
//! notifies too (with its own `thread-id` and the title prompt as its input)
//! but writes no rollout. [`place_notify`], run by `agents hook` where the
//! config home is known, tells the two apart by the rollout file.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, files_since};
use super::description::{Description, Words};
use crate::api::HookReport;

pub struct Codex;

/// The event name `agents hook` is called with by Codex's `notify`.
pub const NOTIFY_EVENT: &str = "codex-notify";

/// What a notify's turn is reported as when its thread has no rollout:
/// Codex's own side work, which says nothing about the run's status,
/// session or name.
pub const SIDE_TURN_EVENT: &str = "side-turn-complete";

/// How many dated folders a notify's rollout is looked for in, newest
/// first: a resumed session keeps writing the rollout of the day it began,
/// so a year of daily sessions is searched (a few ms) within the hook's
/// time budget.
const MAX_DAY_DIRS: usize = 400;

const CODEX: Description = Description {
    config_home: Some("CODEX_HOME"),
    env: &super::credentials::CODEX,
    resume: Words::Given(&["resume", "{}"]),
    // `codex fork ID` (0.171): a new thread, with a rollout of its own,
    // that starts from a copy of the session's history.
    fork: Words::Given(&["fork", "{}"]),
    pastes_prompts: true,
    install: "npm install -g @openai/codex",
    ..Description::new("codex", "codex")
};

impl Adapter for Codex {
    fn description(&self) -> &'static Description {
        &CODEX
    }

    /// Its own names, and each `env_key` the providers of its config name.
    fn env_names(&self, ctx: &LaunchContext) -> Vec<String> {
        let mut names = self.harness_env().present(ctx.env);
        let home = ctx
            .config_home("CODEX_HOME")
            .or_else(|| ctx.var("HOME").map(|h| Path::new(h).join(".codex")));
        if let Some(home) = home {
            for key in super::credentials::codex_provider_keys(&home) {
                if ctx.var(&key).is_some() && !names.contains(&key) {
                    names.push(key);
                }
            }
        }
        names.sort();
        names
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let binary = ctx.binary(self.program());
        let notify = toml_strings(&[&ctx.agents_bin.to_string_lossy(), "hook", NOTIFY_EVENT]);
        let mut argv = vec![binary, "-c".into(), format!("notify={notify}")];
        argv.extend(ctx.model_args());
        argv.extend(ctx.args.iter().cloned());
        let (_, env) = ctx.config_home_env("CODEX_HOME");
        Ok(Launch {
            argv,
            env,
            files: Vec::new(),
            session: None,
            touch: Vec::new(),
        })
    }

    /// `<CODEX_HOME>/sessions`: every day's rollouts.
    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        sessions_root(q).into_iter().collect()
    }

    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        day_dirs(&sessions_root(q)?, q.started)
            .iter()
            .flat_map(|dir| files_since(dir, q.started))
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
            })
            .find_map(|path| {
                let (id, cwd) = session_meta(&path)?;
                (Path::new(&cwd) == q.cwd).then_some(KnownSession {
                    id,
                    transcript: Some(path),
                })
            })
    }
}

/// `<CODEX_HOME, else ~/.codex>/sessions`.
fn sessions_root(q: &SessionQuery) -> Option<PathBuf> {
    let base = match &q.config_home {
        Some(dir) => dir.clone(),
        None => q.home.as_ref()?.join(".codex"),
    };
    Some(base.join("sessions"))
}

/// Completes the report of a notify in the harness's process, where the
/// run's config home is known: a turn of a thread with a rollout names that
/// rollout as the transcript (the payload does not); a turn of a thread
/// without one is Codex's side work ([`SIDE_TURN_EVENT`]), stripped of the
/// session and prompt it would otherwise give the run. Without a
/// `sessions` folder nothing can be told, and the report is left alone.
pub fn place_notify(report: &mut HookReport, codex_home: &Path) {
    let sessions = codex_home.join("sessions");
    if report.event != "agent-turn-complete" || !sessions.is_dir() {
        return;
    }
    let Some(thread) = report.session_id.as_deref() else {
        return;
    };
    match rollout_of(&sessions, thread) {
        Some(path) => report.transcript_path = Some(path.to_string_lossy().into_owned()),
        None => {
            report.event = SIDE_TURN_EVENT.into();
            report.session_id = None;
            report.prompt = None;
        }
    }
}

/// The rollout of thread `id`: `sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`,
/// newest day first. The id is only compared with file names, never joined
/// into a path.
fn rollout_of(sessions: &Path, id: &str) -> Option<PathBuf> {
    let suffix = format!("-{id}.jsonl");
    let newest_first = |dir: &Path| -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        dirs.sort_unstable_by(|a, b| b.cmp(a));
        dirs
    };
    newest_first(sessions)
        .iter()
        .flat_map(|year| newest_first(year))
        .flat_map(|month| newest_first(&month))
        .take(MAX_DAY_DIRS)
        .find_map(|day| {
            std::fs::read_dir(day).ok()?.flatten().map(|e| e.path()).find(|p| {
                p.file_name()
                    .map(|n| n.to_string_lossy())
                    .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&suffix))
            })
        })
}

/// A TOML array of basic strings (JSON string escapes are valid TOML).
fn toml_strings(items: &[&str]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| serde_json::to_string(s).unwrap_or_default())
        .collect();
    format!("[{}]", quoted.join(","))
}

/// The dated folders a session begun at `started` may be in: Codex names
/// them by local date, so the UTC days either side are searched too.
fn day_dirs(sessions: &Path, started: SystemTime) -> Vec<PathBuf> {
    const DAY: Duration = Duration::from_secs(86_400);
    let now = SystemTime::now().max(started);
    let mut day = started - DAY;
    let mut dirs = Vec::new();
    while day <= now + DAY && dirs.len() < 8 {
        let date = humantime::format_rfc3339(day).to_string();
        let (y, m, d) = (&date[0..4], &date[5..7], &date[8..10]);
        dirs.push(sessions.join(y).join(m).join(d));
        day += DAY;
    }
    dirs.reverse();
    dirs
}

/// The id and cwd from a rollout's first line, if it is a `session_meta`.
fn session_meta(path: &Path) -> Option<(String, String)> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    // The first line carries the harness's base instructions: tens of KB.
    std::io::BufReader::new(std::io::Read::take(file, 1 << 20))
        .read_line(&mut line)
        .ok()?;
    let meta: Value = serde_json::from_str(&line).ok()?;
    if meta["type"] != "session_meta" {
        return None;
    }
    let payload = &meta["payload"];
    let id = payload["id"].as_str().or(payload["session_id"].as_str())?;
    Some((id.to_string(), payload["cwd"].as_str()?.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_s_notify_program_is_set_on_the_command_line_only() {
        let args = vec!["resume".to_string(), "abc".to_string()];
        let env = vec![("HOME".to_string(), "/home/u".to_string())];
        let profile = super::super::Profile {
            config_home: Some("/srv/codex-home".into()),
            model: Some("gpt-9".into()),
            ..Default::default()
        };
        let launch = Codex
            .launch(&LaunchContext {
                args: &args,
                env: &env,
                profile: Some(&profile),
                run_dir: Path::new("/state/runs/R1"),
                agents_bin: Path::new("/opt/agents"),
                cwd: Path::new("/w"),
            })
            .unwrap();
        assert_eq!(
            launch.argv,
            vec![
                "codex",
                "-c",
                r#"notify=["/opt/agents","hook","codex-notify"]"#,
                "--model",
                "gpt-9",
                "resume",
                "abc"
            ]
        );
        assert_eq!(
            launch.env,
            vec![("CODEX_HOME".to_string(), "/srv/codex-home".to_string())]
        );
        assert!(launch.files.is_empty() && launch.session.is_none());
        assert_eq!(Codex.resume_args("abc").unwrap(), vec!["resume", "abc"]);
        assert_eq!(Codex.fork_args("abc").unwrap(), vec!["fork", "abc"]);
    }

    #[test]
    fn a_notify_names_its_thread_s_rollout_and_a_thread_without_one_is_side_work() {
        let home = tempfile::tempdir().unwrap();
        let older = home.path().join("sessions/2026/11/28");
        let newer = home.path().join("sessions/2026/11/29");
        std::fs::create_dir_all(&older).unwrap();
        std::fs::create_dir_all(&newer).unwrap();
        // A resumed session keeps the rollout of the day it began.
        let rollout = older.join("rollout-2026-11-28T23-59-01-01a2-main.jsonl");
        std::fs::write(&rollout, "{}\n").unwrap();
        std::fs::write(newer.join("rollout-2026-11-29T00-10-00-01a2-other.jsonl"), "{}\n").unwrap();
        let notify = |thread: &str| HookReport {
            event: "agent-turn-complete".into(),
            session_id: Some(thread.into()),
            prompt: Some("hello".into()),
            ..HookReport::default()
        };

        let mut main = notify("01a2-main");
        place_notify(&mut main, home.path());
        assert_eq!(main.transcript_path.as_deref(), Some(rollout.to_str().unwrap()));
        assert_eq!(main.session_id.as_deref(), Some("01a2-main"));
        assert!(super::super::hooks::status_of(&main).is_some());

        // The task-title thread: its own id, no rollout.
        let mut side = notify("01a2-title");
        place_notify(&mut side, home.path());
        assert_eq!(side.event, SIDE_TURN_EVENT);
        assert_eq!((side.session_id, side.prompt, side.transcript_path), (None, None, None));
        assert_eq!(
            super::super::hooks::status_of(&notify("x")).map(|s| s.1).as_deref(),
            Some("hook agent-turn-complete")
        );
        assert!(
            super::super::hooks::status_of(&HookReport {
                event: SIDE_TURN_EVENT.into(),
                ..HookReport::default()
            })
            .is_none()
        );

        // No sessions folder: nothing to tell the threads apart by.
        let mut unknown = notify("01a2-title");
        place_notify(&mut unknown, &home.path().join("elsewhere"));
        assert_eq!(unknown, notify("01a2-title"));
    }

    #[test]
    fn the_newest_rollout_for_the_cwd_is_the_run_s_session() {
        let home = tempfile::tempdir().unwrap();
        let started = SystemTime::now() - Duration::from_secs(2);
        let date = humantime::format_rfc3339(SystemTime::now()).to_string();
        let dir = home
            .path()
            .join(".codex/sessions")
            .join(&date[0..4])
            .join(&date[5..7])
            .join(&date[8..10]);
        std::fs::create_dir_all(&dir).unwrap();
        let meta = |id: &str, cwd: &str| {
            format!(
                "{{\"timestamp\":\"{date}\",\"type\":\"session_meta\",\"payload\":{{\"id\":\"{id}\",\"cwd\":\"{cwd}\"}}}}\n"
            )
        };
        std::fs::write(dir.join("rollout-a-other.jsonl"), meta("other", "/elsewhere")).unwrap();
        std::fs::write(dir.join("rollout-b-01a2.jsonl"), meta("01a2", "/home/user/project")).unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        let found = Codex
            .find_session(&SessionQuery {
                cwd: PathBuf::from("/home/user/project"),
                started,
                config_home: None,
                home: Some(home.path().to_path_buf()),
            })
            .unwrap();
        assert_eq!(found.id, "01a2");
        assert!(found.transcript.unwrap().ends_with("rollout-b-01a2.jsonl"));
    }
}
