//! The TUI's connection to the daemon, on its own task: it turns commands
//! into calls and frames into updates, and reconnects by itself. The UI loop
//! never waits on it (docs/design.md §9).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::app::{Command, Update};
use crate::api::{
    AttachParams, CancelParams, ListParams, ResizeParams, RunDetail, RunRecord, RunRef, SendParams, method,
};
use crate::client::Client;
use crate::paths::Paths;
use crate::protocol::Frame;
use crate::protocol::rpc::{Message, Request};
use crate::protocol::screen::ScreenUpdate;

/// Run-change notifications arrive in bursts (a flood of status changes);
/// the runs heard changed are read again at most this often.
const REFRESH_EVERY: Duration = Duration::from_millis(100);
/// How often the hosts' link state is read (`hosts.list`): the tree counts
/// a reconnecting link's seconds, so once a second. Only a change is sent
/// on to the UI.
const HOSTS_EVERY: Duration = Duration::from_secs(1);
/// Waits between reconnection attempts, doubling up to the last.
const BACKOFF: [u64; 5] = [100, 250, 500, 1000, 2000];

pub async fn run(paths: Paths, mut commands: mpsc::UnboundedReceiver<Command>, updates: mpsc::Sender<Update>) {
    let mut attempt = 0usize;
    loop {
        let mut client = match Client::connect(&paths, true).await {
            Ok(c) => c,
            Err(e) => {
                if updates.send(Update::Disconnected(e.message.clone())).await.is_err() {
                    return;
                }
                let wait = Duration::from_millis(BACKOFF[attempt.min(BACKOFF.len() - 1)]);
                attempt += 1;
                // Commands during an outage fail at once (a prompt keeps its draft).
                let deadline = tokio::time::Instant::now() + wait;
                loop {
                    tokio::select! {
                        cmd = commands.recv() => match cmd {
                            None => return,
                            Some(cmd) => refuse(cmd, &updates).await,
                        },
                        _ = tokio::time::sleep_until(deadline) => break,
                    }
                }
                continue;
            }
        };
        attempt = 0;
        let Some(mut events) = client.events.take() else { return };
        let client = Arc::new(client);
        if updates.send(Update::Connected).await.is_err() {
            return;
        }
        let mut refresh_at: Option<tokio::time::Instant> = None;
        let mut changed = std::collections::BTreeSet::new();
        let mut diffs = Diffs::default();
        let hosts = tokio::spawn(watch_hosts(client.clone(), updates.clone()));
        let routines = tokio::spawn(watch_routines(client.clone(), updates.clone()));
        loop {
            tokio::select! {
                cmd = commands.recv() => {
                    let Some(cmd) = cmd else { return };
                    if let Command::Changes(run) = cmd {
                        if diffs.ask(&run) {
                            execute(client.clone(), Command::Changes(run), updates.clone());
                        }
                        continue;
                    }
                    execute(client.clone(), cmd, updates.clone());
                }
                _ = async { tokio::time::sleep_until(diffs.due.unwrap_or_else(tokio::time::Instant::now)).await }, if diffs.due.is_some() => {
                    for run in diffs.take_due() {
                        execute(client.clone(), Command::Changes(run), updates.clone());
                    }
                }
                frame = events.recv() => {
                    let Some(frame) = frame else { break };
                    let update = translate(frame);
                    if let Some(Update::Changed(id)) = &update {
                        changed.insert(id.clone());
                        refresh_at.get_or_insert_with(|| tokio::time::Instant::now() + REFRESH_EVERY);
                    }
                    if let Some(update) = update
                        && updates.send(update).await.is_err()
                    {
                        return;
                    }
                }
                _ = async { tokio::time::sleep_until(refresh_at.unwrap_or_else(tokio::time::Instant::now)).await }, if refresh_at.is_some() => {
                    refresh_at = None;
                    // The runs heard changed, not the whole list: with
                    // thousands live, a few change in each tenth of a second.
                    let runs: Vec<String> = std::mem::take(&mut changed).into_iter().collect();
                    // (An empty id: changes were missed, any run may have.)
                    let whole = runs.len() > ListParams::MAX_LIMIT || runs.first().is_some_and(String::is_empty);
                    let cmd = match whole {
                        true => Command::Refresh,
                        false => Command::RefreshRuns(runs),
                    };
                    execute(client.clone(), cmd, updates.clone());
                }
            }
        }
        hosts.abort();
        routines.abort();
        if updates
            .send(Update::Disconnected("the daemon closed the connection".into()))
            .await
            .is_err()
        {
            return;
        }
    }
}

/// A run's changes read at most once a second: a busy agent's every
/// status change asks for them while its Changes tab is shown, and each
/// read runs git. A request within the second is kept for its end.
#[derive(Default)]
struct Diffs {
    last: std::collections::HashMap<String, tokio::time::Instant>,
    wanted: std::collections::BTreeSet<String>,
    due: Option<tokio::time::Instant>,
}

impl Diffs {
    const EVERY: Duration = Duration::from_secs(1);

    /// True when `run`'s changes may be read now; else kept for later.
    fn ask(&mut self, run: &str) -> bool {
        let now = tokio::time::Instant::now();
        match self.last.get(run) {
            Some(&at) if now < at + Self::EVERY => {
                self.wanted.insert(run.to_string());
                let at = at + Self::EVERY;
                self.due = Some(self.due.map_or(at, |d| d.min(at)));
                false
            }
            _ => {
                self.last.insert(run.to_string(), now);
                true
            }
        }
    }

    /// The runs kept for later, now due.
    fn take_due(&mut self) -> Vec<String> {
        let now = tokio::time::Instant::now();
        self.due = None;
        let runs: Vec<String> = std::mem::take(&mut self.wanted).into_iter().collect();
        for run in &runs {
            self.last.insert(run.clone(), now);
        }
        runs
    }
}

/// Reads the hosts' links once a second and sends them on when they change.
async fn watch_hosts(client: Arc<Client>, updates: mpsc::Sender<Update>) {
    let mut last: Option<Vec<crate::api::HostRecord>> = None;
    let mut tick = tokio::time::interval(HOSTS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Ok(hosts) = client.call::<method::HostsList>(crate::api::NoParams).await else {
            continue;
        };
        if last.as_ref() != Some(&hosts) {
            last = Some(hosts.clone());
            if updates.send(Update::Hosts(hosts)).await.is_err() {
                return;
            }
        }
    }
}

/// How often the routines are read (`routines.list`): their next fire
/// moves once a fire has happened, so every few seconds is soon enough.
const ROUTINES_EVERY: Duration = Duration::from_secs(3);

/// The routines, sent on to the UI when they changed. A daemon of a build
/// before routines answers `unknown_method`: none are shown.
async fn watch_routines(client: Arc<Client>, updates: mpsc::Sender<Update>) {
    let mut last: Option<Vec<crate::api::RoutineRecord>> = None;
    let mut tick = tokio::time::interval(ROUTINES_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Ok(routines) = client.call::<method::RoutinesList>(crate::api::NoParams).await else {
            continue;
        };
        if last.as_ref() != Some(&routines) {
            last = Some(routines.clone());
            if updates.send(Update::Routines(routines)).await.is_err() {
                return;
            }
        }
    }
}

async fn refuse(cmd: Command, updates: &mpsc::Sender<Update>) {
    let update = match cmd {
        Command::Send { prompt_id, .. } => Update::Sent {
            prompt_id,
            result: Err("the daemon is not reachable; the draft is kept".into()),
        },
        Command::Start(_) | Command::Rerun(_) | Command::Resume { .. } => {
            Update::Started(Box::new(Err("the daemon is not reachable".into())))
        }
        Command::Cancel { .. } => Update::Failed("not cancelled: the daemon is not reachable".into()),
        Command::Rename { .. } => Update::Failed("not renamed: the daemon is not reachable".into()),
        _ => return,
    };
    let _ = updates.send(update).await;
}

fn translate(frame: Frame) -> Option<Update> {
    match frame {
        Frame::Screen { run, bytes, .. } => match ScreenUpdate::decode(&bytes) {
            Ok(update) => Some(Update::Screen {
                run,
                update: Box::new(update),
            }),
            Err(e) => {
                tracing::warn!("run {run}: {e}");
                None
            }
        },
        Frame::Control(bytes) => match Message::parse(&bytes) {
            Ok(Message::Request(Request { method: m, params, .. })) if m == method::RUN_CHANGED => params
                .get("run")
                .and_then(Value::as_str)
                .map(|id| Update::Changed(id.to_string())),
            // A screen subscription's end and size: a pane reads screens.
            Ok(Message::Request(Request { method: m, .. })) if m == method::OUTPUT_END || m == method::OUTPUT_SIZE => {
                None
            }
            Ok(Message::Request(Request { method: m, .. })) => Some(Update::Unknown(crate::text::bounded(&m, 64))),
            _ => None,
        },
        // Panes subscribe to screens: no bytes, no snapshots.
        Frame::Output { .. } | Frame::Snapshot { .. } | Frame::Input { .. } => None,
    }
}

/// The subagents of these runs; `None` when the daemon cannot say (an
/// older daemon), so the tree keeps what it had.
async fn subagents_of(client: &Client, runs: &[RunRecord]) -> Option<Vec<crate::api::RunSubagent>> {
    let mut all = Vec::new();
    for chunk in runs.chunks(crate::api::SubagentsParams::MAX_RUNS) {
        let params = crate::api::SubagentsParams {
            runs: chunk.iter().map(|r| r.id.clone()).collect(),
        };
        all.extend(client.call::<method::SubagentsList>(params).await.ok()?);
    }
    Some(all)
}

/// Each command on its own task, so a slow call never holds up the next key.
fn execute(client: Arc<Client>, cmd: Command, updates: mpsc::Sender<Update>) {
    tokio::spawn(async move {
        if let Some(update) = call(&client, cmd, &updates).await {
            let _ = updates.send(update).await;
        }
    });
}

/// The daemon's call for a command, and the update it brings the UI: none
/// when what it did shows by itself, or when the daemon cannot say.
async fn call(client: &Client, cmd: Command, updates: &mpsc::Sender<Update>) -> Option<Update> {
    let update = match cmd {
        Command::Refresh => refresh(client, updates).await,
        Command::RefreshRuns(runs) => refresh_runs(client, runs, updates).await,
        Command::Show(run) => {
            let detail: RunDetail = client.call::<method::RunsShow>(RunRef { run }).await.ok()?;
            Update::Detail(Box::new(detail))
        }
        Command::Subscribe(run) => return subscribe(client, run, None).await,
        Command::Fit { run, rows, cols } => return subscribe(client, run, Some([rows, cols])).await,
        Command::Unsubscribe(run) => {
            let detach = crate::api::DetachParams {
                run,
                screen: None,
                sub: None,
            };
            let _ = client.call::<method::RunsDetach>(detach).await;
            return None;
        }
        Command::Input { run, bytes } => {
            let _ = client.send_frame(Frame::Input { run, bytes }).await;
            return None;
        }
        Command::Resize { run, rows, cols } => {
            let _ = client
                .call::<method::RunsResize>(ResizeParams { run, rows, cols })
                .await;
            return None;
        }
        Command::Send { run, text, prompt_id } => send(client, run, text, prompt_id).await,
        Command::Cancel { run, force } => return cancel(client, run, force).await,
        Command::Start(params) => Update::Started(Box::new(
            client.call::<method::RunsStart>(*params).await.map_err(|e| e.message),
        )),
        Command::Rerun(run) => rerun(client, run).await,
        Command::Rename { run, name } => {
            let params = crate::api::RenameParams { run, name };
            match client.call::<method::RunsRename>(params).await {
                Ok(record) => Update::Changed(record.id),
                Err(e) => Update::Failed(format!("not renamed: {}", e.message)),
            }
        }
        Command::Answer { run, answer } => return answer_run(client, run, answer).await,
        Command::Resume { session, queue } => resume(client, session, queue).await,
        Command::Transcript(run) => Update::Transcript {
            result: newest_messages(client, &run).await,
            run,
        },
        Command::Lineage(run) => Update::Lineage {
            result: client
                .call::<method::RunsLineage>(RunRef { run: run.clone() })
                .await
                .map_err(|e| e.message),
            run,
        },
        Command::Mail(of) => Update::Mail {
            result: client
                .call::<method::MailList>(of.params())
                .await
                .map_err(|e| e.message),
            of,
        },
        Command::Changes(_) | Command::Merge { .. } => worktree_call(client, cmd).await,
        Command::Remove(runs) => {
            let params = crate::api::RemoveParams {
                runs,
                ..Default::default()
            };
            Update::Removed(client.call::<method::RunsRm>(params).await.map_err(|e| e.message))
        }
        Command::History {
            run,
            ask,
            before,
            kept_from,
            max_lines,
        } => return history(client, run, (ask, before), kept_from, max_lines).await,
        Command::Ack { run, offset } => {
            let _ = client
                .notify::<method::RunsAck>(crate::api::AckParams {
                    run,
                    offset,
                    screen: true,
                    sub: 0,
                })
                .await;
            return None;
        }
        Command::Terminal(_) | Command::Notify(_) => return None,
    };
    Some(update)
}

/// The run list: every live run and the newest ended ones, so the tree
/// stays quick with thousands of runs in the database. Subagents and team
/// headings are rows of the tree too: sent before the runs, so the tree is
/// built once with them all (a daemon older than teams has none).
async fn refresh(client: &Client, updates: &mpsc::Sender<Update>) -> Update {
    // Page by page: thousands of live runs are more than one answer holds.
    let (live, newest) = tokio::join!(
        client.list_runs(false),
        client.list_pages(true, ListParams::DEFAULT_LIMIT)
    );
    let runs: std::collections::BTreeMap<String, RunRecord> = match (live, newest) {
        (Ok(live), Ok(newest)) => live
            .into_iter()
            .chain(newest)
            .map(|l| (l.run.id.clone(), l.run))
            .collect(),
        (Err(e), _) | (_, Err(e)) => return Update::Failed(e.message),
    };
    let runs: Vec<RunRecord> = runs.into_values().collect();
    if let Some(subagents) = subagents_of(client, &runs).await {
        let _ = updates.send(Update::Subagents(subagents)).await;
    }
    send_teams(client, updates).await;
    Update::Runs(runs)
}

/// The teams, for their headings in the tree (a daemon older than teams
/// has none).
async fn send_teams(client: &Client, updates: &mpsc::Sender<Update>) {
    if let Ok(teams) = client.call::<method::TeamsList>(crate::api::NoParams).await {
        let _ = updates.send(Update::Teams(teams)).await;
    }
}

/// The runs heard changed, read again by id (their parents come with
/// them), with their subagents; the teams too, whose members they may be.
async fn refresh_runs(client: &Client, asked: Vec<String>, updates: &mpsc::Sender<Update>) -> Update {
    let mut runs = Vec::new();
    for chunk in asked.chunks(ListParams::MAX_LIMIT) {
        let params = ListParams {
            runs: chunk.to_vec(),
            ..Default::default()
        };
        match client.call::<method::RunsList>(params).await {
            Ok(listed) => runs.extend(listed.runs().into_iter().map(|listed| listed.run)),
            Err(e) => return Update::Failed(e.message),
        }
    }
    let subagents = subagents_of(client, &runs).await;
    send_teams(client, updates).await;
    Update::RunsChanged { asked, runs, subagents }
}

/// A pane's subscription to its run's screen, in the newest format this
/// build reads; only a refusal is news.
async fn subscribe(client: &Client, run: String, fit: Option<[u16; 2]>) -> Option<Update> {
    let params = AttachParams {
        fit,
        ..AttachParams::screen(run, crate::protocol::screen::FORMAT)
    };
    let refused = client.call::<method::RunsAttach>(params).await.err()?;
    Some(Update::Failed(refused.message))
}

/// A prompt sent under the id the composer minted; the answer names it,
/// so the composer knows which draft was taken.
async fn send(client: &Client, run: String, text: String, prompt_id: String) -> Update {
    let params = SendParams {
        run,
        text,
        prompt_id: Some(prompt_id.clone()),
    };
    Update::Sent {
        prompt_id,
        result: client.call::<method::RunsSend>(params).await.map_err(|e| e.message),
    }
}

/// A run cancelled (its end shows in the tree); only a refusal is news.
async fn cancel(client: &Client, run: String, force: bool) -> Option<Update> {
    let params = CancelParams {
        run,
        force,
        by: None,
        proof: None,
    };
    let refused = client.call::<method::RunsCancel>(params).await.err()?;
    Some(Update::Failed(format!("not cancelled: {}", refused.message)))
}

/// A run started again, with the variables of this TUI's environment.
async fn rerun(client: &Client, run: String) -> Update {
    let env: Vec<(String, String)> = std::env::vars().collect();
    Update::Started(Box::new(
        client
            .call::<method::RunsRerun>(crate::api::RerunParams { run, env })
            .await
            .map_err(|e| e.message),
    ))
}

/// A run's question answered; only a refusal is news.
async fn answer_run(client: &Client, run: String, answer: String) -> Option<Update> {
    let params = crate::api::AnswerParams {
        run,
        answer,
        answer_id: None,
        request: None,
    };
    let refused = client.call::<method::RunsAnswer>(params).await.err()?;
    Some(Update::Failed(format!("not answered: {}", refused.message)))
}

/// A conversation resumed in a new run, with the variables of this TUI's
/// environment (`queue`: once the run still in it has ended).
async fn resume(client: &Client, session: String, queue: bool) -> Update {
    let params = crate::api::ResumeParams {
        queue,
        session,
        args: Vec::new(),
        env: std::env::vars().collect(),
        launch_id: None,
        placed: false,
    };
    Update::Started(Box::new(
        client
            .call::<method::SessionsResume>(params)
            .await
            .map_err(|e| e.message),
    ))
}

/// A pane's lines from before it opened. An older daemon has none to give:
/// the pane's history then starts when it opened.
async fn history(
    client: &Client,
    run: String,
    (ask, before): (u64, u64),
    kept_from: usize,
    max_lines: usize,
) -> Option<Update> {
    let params = crate::api::HistoryParams {
        run: run.clone(),
        before,
        max_lines,
    };
    let lines: Vec<String> = client.call::<method::RunsHistory>(params).await.ok()?;
    Some(Update::History {
        run,
        ask,
        kept_from,
        lines,
    })
}

/// The Changes tab's calls: a run's changes, or its merge.
async fn worktree_call(client: &Client, cmd: Command) -> Update {
    match cmd {
        Command::Changes(run) => Update::Changes {
            result: client
                .call::<method::RunsChanges>(RunRef { run: run.clone() })
                .await
                .map_err(|e| e.message),
            run,
        },
        Command::Merge { run, squash } => Update::Merged {
            result: client
                .call::<method::RunsMerge>(crate::api::MergeParams {
                    run: run.clone(),
                    squash,
                })
                .await
                .map_err(|e| e.message),
            run,
        },
        _ => Update::Failed("not a worktree call".into()),
    }
}

/// How many of a transcript's newest messages the Transcript tab keeps.
const TRANSCRIPT_TAIL: usize = 400;

/// Pages through a run's transcript, keeping the newest messages.
async fn newest_messages(client: &Client, run: &str) -> Result<Vec<crate::api::TranscriptMessage>, String> {
    let mut kept: std::collections::VecDeque<crate::api::TranscriptMessage> = std::collections::VecDeque::new();
    let mut after: Option<i64> = None;
    // Bounded: 64 pages of up to 1000 messages.
    for _ in 0..64 {
        let page: crate::api::TranscriptPage = client
            .call::<method::TranscriptRead>(crate::api::TranscriptParams {
                id: run.to_string(),
                after_seq: after,
                limit: None,
                wait_ms: None,
            })
            .await
            .map_err(|e| e.message)?;
        for m in page.messages {
            kept.push_back(m);
            if kept.len() > TRANSCRIPT_TAIL {
                kept.pop_front();
            }
        }
        if !page.more {
            break;
        }
        after = page.last_seq;
    }
    Ok(kept.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(method: &str) -> Frame {
        let request = Request::notification(method, serde_json::json!({ "run": "R1" }));
        Frame::Control(serde_json::to_vec(&request).unwrap())
    }

    /// A notification from a newer daemon reaches the status bar once; the
    /// ones a TUI knows and leaves to its panes say nothing.
    #[test]
    fn a_notification_this_tui_does_not_know_is_said_once() {
        assert!(matches!(translate(note(method::RUN_CHANGED)), Some(Update::Changed(id)) if id == "R1"));
        assert!(translate(note(method::OUTPUT_END)).is_none());
        let mut app = super::super::app::App::new();
        let mut said = Vec::new();
        for _ in 0..2 {
            let heard = translate(note("runs.future")).expect("an update");
            assert!(matches!(&heard, Update::Unknown(m) if m == "runs.future"));
            app.update(heard);
            said.push(app.message.take());
        }
        assert!(
            said[0].as_deref().is_some_and(|m| m.contains("runs.future")),
            "{said:?}"
        );
        assert_eq!(said[1], None, "said once");
    }
}
