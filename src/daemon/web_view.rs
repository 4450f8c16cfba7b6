//! `[web] listen`: the daemon keeps the web view served there, as a child
//! process of its own (`agents web --for-daemon`, a client like any other),
//! started again when it dies (after a pause that grows) and when `[web]`
//! changes, stopped with the daemon. The address it serves at is in
//! `daemon.status` (`web`). The child ends by itself if the daemon dies
//! without stopping it.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

use super::Daemon;
use crate::config::Web;

/// The pause before the web view is started again after it died, at
/// first and at most.
const FIRST_PAUSE: Duration = Duration::from_secs(1);
const LONGEST_PAUSE: Duration = Duration::from_secs(60);
/// How long a new web view has to say where it serves.
const SAYS_URL_WITHIN: Duration = Duration::from_secs(10);

/// The web view the daemon serves, if any.
#[derive(Default)]
pub struct Served {
    /// The address it serves at, once it said.
    pub url: Mutex<Option<String>>,
    child: tokio::sync::Mutex<Option<Child>>,
}

/// Keeps the web view served as `[web]` says, until the daemon stops.
pub async fn keep(daemon: Arc<Daemon>) {
    let mut serving: Option<Web> = None;
    let mut pause = FIRST_PAUSE;
    loop {
        let wanted = daemon.engine.config().web.clone();
        let wanted = wanted.listen.is_some().then_some(wanted);
        if wanted != serving {
            stop(&daemon).await;
            serving = None;
            pause = FIRST_PAUSE;
        }
        if serving.is_none()
            && let Some(web) = &wanted
        {
            match start(&daemon, web).await {
                Ok(()) => serving = wanted.clone(),
                Err(e) => {
                    tracing::warn!(
                        "the web view ([web] listen) did not start: {e}; trying again in {}s",
                        pause.as_secs()
                    );
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(LONGEST_PAUSE);
                    continue;
                }
            }
        }
        tokio::select! {
            died = exited(&daemon), if serving.is_some() => {
                tracing::warn!("the web view exited ({died}); starting it again in {}s", pause.as_secs());
                *daemon.web.url.lock() = None;
                serving = None;
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            _ = tokio::time::sleep(super::CONFIG_RECHECK) => {}
        }
    }
}

/// Starts `agents web --for-daemon` and waits for the address it serves.
async fn start(daemon: &Daemon, web: &Web) -> Result<(), String> {
    let listen = web.listen.as_deref().ok_or("no [web] listen")?;
    let mut command = Command::new(super::own_exe());
    command
        .arg("web")
        .arg("--for-daemon")
        .arg("--listen")
        .arg(listen)
        .env("AGENTS_HOME", &daemon.engine.paths.home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| format!("cannot start it: {e}"))?;
    let mut out = tokio::io::BufReader::new(child.stdout.take().expect("piped")).lines();
    let mut err = tokio::io::BufReader::new(child.stderr.take().expect("piped")).lines();
    let said = tokio::time::timeout(SAYS_URL_WITHIN, out.next_line()).await;
    let url = match said {
        Ok(Ok(Some(line))) => serde_json::from_str::<serde_json::Value>(&line)
            .ok()
            .and_then(|v| v["url"].as_str().map(str::to_string)),
        _ => None,
    };
    let Some(url) = url else {
        let _ = child.start_kill();
        let why = err
            .next_line()
            .await
            .ok()
            .flatten()
            .unwrap_or_else(|| "it said nothing".into());
        return Err(crate::text::bounded(&why, 300));
    };
    // What it says later (a warning, a failure) goes to the daemon's log.
    tokio::spawn(async move {
        while let Ok(Some(line)) = err.next_line().await {
            tracing::warn!("web view: {}", crate::text::bounded(&line, 500));
        }
    });
    tracing::info!("the web view serves at {url}");
    *daemon.web.url.lock() = Some(url);
    *daemon.web.child.lock().await = Some(child);
    Ok(())
}

/// Once the web view has exited: how.
async fn exited(daemon: &Daemon) -> String {
    let mut child = daemon.web.child.lock().await;
    let Some(running) = child.as_mut() else {
        return std::future::pending().await;
    };
    let status = running.wait().await;
    *child = None;
    match status {
        Ok(status) => status.to_string(),
        Err(e) => e.to_string(),
    }
}

/// Stops the web view the daemon started, if it runs: our own child,
/// whose handle we hold.
pub async fn stop(daemon: &Daemon) {
    *daemon.web.url.lock() = None;
    if let Some(mut child) = daemon.web.child.lock().await.take() {
        let _ = child.kill().await;
    }
}
