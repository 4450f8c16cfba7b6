//! Letta Code (npm `@letta-ai/letta-code`, 0.25.9, `letta`). It talks to
//! Letta's service (`LETTA_API_KEY`, a login), or with `--backend local`
//! to model providers directly (a local server through
//! `LLAMA_CPP_BASE_URL`, `OLLAMA_BASE_URL`, `LMSTUDIO_BASE_URL`, or a
//! provider's key), keeping its agents in a store of its own,
//! `LETTA_LOCAL_BACKEND_DIR`, else `~/.letta/lc-local-backend`. Its
//! settings are `~/.letta/settings.json` (no variable moves them: a
//! profile's home is its `HOME`).
//!
//! A session is an agent's conversation: its default one (named by the
//! agent's id, `agent-…`, which `--conv` takes) or one of its others
//! (`local-conv-N`). Letta Code makes them itself and says which one it is
//! in at its start, in the cwd's `.letta/settings.local.json`
//! (`lastSession`, and under `sessionsByServer` the store it is kept in),
//! so a new session is found there: written since the run started (two
//! Letta Codes started in one folder at once could take each other's).
//! The local backend's conversation is `conversations/<key>/messages.jsonl`
//! in its store (`transcript::letta`), the key the base64url of
//! `default:<agent id>` or `conversation:<id>`; the service's keeps its
//! messages on the service. `--conv ID` resumes one; it has no fork.
//!
//! It takes no first prompt on its command line: a prompt is typed once
//! its input box is drawn. By default it runs tools without asking;
//! `--permission-mode standard` makes it ask ("Run this command?",
//! numbered choices, `1` allows, Esc refuses). Its hooks are in its
//! settings files, none given for one process: its status is the screen's.

use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::Value;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, files_since};
use super::description::{Description, Words};

pub struct Letta;

const LETTA: Description = Description {
    env: &super::credentials::LETTA,
    resume: Words::Given(&["--conv", "{}"]),
    // Text and its Enter in one write are a paste holding a newline.
    enter_delay_ms: 300,
    install: "npm install -g @letta-ai/letta-code",
    ..Description::new("letta", "letta")
};

impl Adapter for Letta {
    fn description(&self) -> &'static Description {
        &LETTA
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let store = store_dir(ctx.var("LETTA_LOCAL_BACKEND_DIR"), ctx.var("HOME").map(Path::new));
        let session = resumed(ctx.args).map(|id| KnownSession {
            transcript: store.map(|s| messages_file(&s, &id)),
            id,
        });
        Ok(Launch {
            argv: ctx.argv(self.program()),
            session,
            ..Launch::default()
        })
    }

    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        store_dir(None, q.home.as_deref())
            .map(|s| s.join("conversations"))
            .into_iter()
            .collect()
    }

    /// The conversation its start wrote into the cwd's
    /// `.letta/settings.local.json`, if written since the run started.
    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let settings = files_since(&q.cwd.join(".letta"), q.started)
            .into_iter()
            .find(|p| p.file_name().is_some_and(|n| n == "settings.local.json"))?;
        let doc: Value = serde_json::from_slice(&std::fs::read(settings).ok()?).ok()?;
        let last = &doc["lastSession"];
        let agent = last["agentId"].as_str()?;
        let conversation = last["conversationId"].as_str()?;
        let id = if conversation == "default" { agent } else { conversation };
        // The local store it is kept in, if it is kept locally.
        let store = doc["sessionsByServer"].as_object().and_then(|servers| {
            servers
                .iter()
                .find(|(_, s)| *s == last)
                .and_then(|(server, _)| server.strip_prefix("local:"))
        });
        Some(KnownSession {
            id: id.to_string(),
            transcript: store.map(|s| messages_file(Path::new(s), id)),
        })
    }
}

/// Its local backend's store: `LETTA_LOCAL_BACKEND_DIR`, else
/// `~/.letta/lc-local-backend`.
fn store_dir(set: Option<&str>, home: Option<&Path>) -> Option<PathBuf> {
    match set {
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(home?.join(".letta/lc-local-backend")),
    }
}

/// A conversation's messages in a store: an agent's id names its default
/// conversation.
fn messages_file(store: &Path, id: &str) -> PathBuf {
    let key = if id.starts_with("agent-") {
        format!("default:{id}")
    } else {
        format!("conversation:{id}")
    };
    let dir = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key);
    store.join("conversations").join(dir).join("messages.jsonl")
}

/// The conversation `--conv ID` (`--conversation`, `-C`) names.
fn resumed(args: &[String]) -> Option<String> {
    let at = args
        .iter()
        .position(|a| matches!(a.as_str(), "--conv" | "--conversation" | "-C"))?;
    args.get(at + 1).filter(|id| !id.starts_with('-')).cloned()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn launch(args: &[&str]) -> Launch {
        crate::harness::adapter::launched(&Letta, args, &[("HOME", "/h")]).unwrap()
    }

    #[test]
    fn a_resumed_conversation_is_known_by_its_file() {
        let l = launch(&["--conv", "local-conv-1"]);
        let s = l.session.unwrap();
        assert_eq!(s.id, "local-conv-1");
        let file = "/h/.letta/lc-local-backend/conversations/Y29udmVyc2F0aW9uOmxvY2FsLWNvbnYtMQ/messages.jsonl";
        assert_eq!(s.transcript, Some(PathBuf::from(file)));
        let agent = "agent-local-a1b9a86e-c793-4e78-933b-5b127591026c";
        let s = launch(
            &Letta
                .resume_args(agent)
                .unwrap()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .session
        .unwrap();
        let key = "ZGVmYXVsdDphZ2VudC1sb2NhbC1hMWI5YTg2ZS1jNzkzLTRlNzgtOTMzYi01YjEyNzU5MTAyNmM";
        let file = format!("/h/.letta/lc-local-backend/conversations/{key}/messages.jsonl");
        assert_eq!(s.transcript, Some(PathBuf::from(file)));
        assert_eq!(launch(&["--backend", "local"]).session, None);
        assert!(Letta.fork_args(agent).is_err());
        assert_eq!(Letta.prompt_args("go on"), None);
    }

    #[test]
    fn a_new_session_is_the_one_its_start_wrote_into_the_cwd() {
        let cwd = tempfile::tempdir().unwrap();
        let started = SystemTime::now() - Duration::from_secs(1);
        let q = SessionQuery {
            cwd: cwd.path().into(),
            started,
            config_home: None,
            home: Some("/h".into()),
        };
        assert_eq!(Letta.find_session(&q), None);
        std::fs::create_dir_all(cwd.path().join(".letta")).unwrap();
        let write = |last: Value, servers: Value| {
            let doc = serde_json::json!({ "lastSession": last, "sessionsByServer": servers });
            std::fs::write(cwd.path().join(".letta/settings.local.json"), doc.to_string()).unwrap();
        };
        let last = serde_json::json!({ "agentId": "agent-local-1", "conversationId": "default" });
        write(last.clone(), serde_json::json!({ "local:/store": last }));
        let found = Letta.find_session(&q).unwrap();
        assert_eq!(found.id, "agent-local-1");
        assert_eq!(
            found.transcript,
            Some(messages_file(Path::new("/store"), "agent-local-1"))
        );
        // Kept on Letta's service: no file here.
        let last = serde_json::json!({ "agentId": "agent-2", "conversationId": "conv-9" });
        write(last.clone(), serde_json::json!({ "https://api.letta.com": last }));
        let found = Letta.find_session(&q).unwrap();
        assert_eq!((found.id.as_str(), found.transcript), ("conv-9", None));
    }
}
