//! Codex CLI. Its `notify` program setting (`-c notify=[…]`, for this run
//! only) calls `agents hook codex-notify JSON` when a turn completes; the
//! session id comes from that payload's `thread-id`, or from the newest
//! rollout transcript of the run's cwd: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-*.jsonl`
//! whose first line (`session_meta`) names the id and cwd (see
//! `shared/reference/codex-0.171.0/`).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, files_since};

pub struct Codex;

/// The event name `agents hook` is called with by Codex's `notify`.
pub const NOTIFY_EVENT: &str = "codex-notify";

impl Adapter for Codex {
    fn family(&self) -> &'static str {
        "codex"
    }

    fn program(&self) -> &'static str {
        "codex"
    }

    fn config_home_var(&self) -> Option<&'static str> {
        Some("CODEX_HOME")
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let binary = ctx
            .profile
            .and_then(|p| p.binary.clone())
            .unwrap_or_else(|| self.program().into());
        let notify = toml_strings(&[&ctx.agents_bin.to_string_lossy(), "hook", NOTIFY_EVENT]);
        let mut argv = vec![binary, "-c".into(), format!("notify={notify}")];
        if let Some(model) = ctx.model() {
            argv.extend(["--model".into(), model.to_string()]);
        }
        argv.extend(ctx.args.iter().cloned());
        let env = ctx
            .config_home("CODEX_HOME")
            .iter()
            .map(|dir| ("CODEX_HOME".to_string(), dir.to_string_lossy().into_owned()))
            .collect();
        Ok(Launch {
            argv,
            env,
            files: Vec::new(),
            session: None,
        })
    }

    fn resume_args(&self, session: &str) -> Result<Vec<String>, String> {
        Ok(vec!["resume".into(), session.into()])
    }

    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let base = match &q.config_home {
            Some(dir) => dir.clone(),
            None => q.home.as_ref()?.join(".codex"),
        };
        day_dirs(&base.join("sessions"), q.started)
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
        assert!(Codex.fork_args("abc").unwrap_err().contains("cannot fork"));
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
