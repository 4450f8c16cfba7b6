//! The harness child: spawn in a PTY, wait without reaping, clean up its
//! group, then reap and gather the evidence.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
use nix::unistd::Pid;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use tokio::sync::oneshot;

use super::SuperviseSpec;
use super::server::Supervised;
use crate::paths::Paths;
use crate::protocol::exit::{ExitEvidence, ProcessNote};
use crate::pty::identity::{self, Identity};
use crate::pty::signal::{group_exists, signal_name};

pub struct Started {
    pub master: Box<dyn MasterPty + Send>,
    pub reader: Box<dyn Read + Send>,
    pub writer: Box<dyn Write + Send>,
    pub leader: Identity,
}

pub fn spawn(spec: &SuperviseSpec) -> Result<Started> {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: spec.rows.max(1),
            cols: spec.cols.max(1),
            pixel_width: 0,
            pixel_height: 0,
        })
        .context("opening a PTY")?;
    let program = spec.argv.first().context("empty command")?;
    let mut cmd = CommandBuilder::new(program);
    cmd.args(&spec.argv[1..]);
    cmd.cwd(&spec.cwd);
    cmd.env_clear();
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    // The user's umask for the harness only: the process-wide mask is set
    // back at once, and no other thread creates files yet.
    let ours = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(spec.umask as _));
    let spawned = pair.slave.spawn_command(cmd);
    nix::sys::stat::umask(ours);
    let child = spawned.context("spawning the harness")?;
    // Our copy of the slave must close, or the PTY never reports end of file.
    drop(pair.slave);
    let pid = child.process_id().context("the harness has no pid")? as i32;
    // We reap the child ourselves (waitid/waitpid on its pid), so the handle
    // is not needed; dropping it neither kills nor waits.
    drop(child);
    let leader = Identity::of(pid).context("reading the harness's identity from /proc")?;
    let reader = pair.master.try_clone_reader().context("cloning the PTY reader")?;
    let writer = pair.master.take_writer().context("taking the PTY writer")?;
    Ok(Started {
        master: pair.master,
        reader,
        writer,
        leader,
    })
}

/// Waits (on a thread) for the leader to exit, without reaping it: the zombie
/// keeps its pid and group id reserved while we clean up the group.
pub fn watch_exit(run: Arc<Supervised>, pid: i32) -> oneshot::Receiver<WaitStatus> {
    let (tx, rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("wait".into())
        .spawn(move || {
            let status = loop {
                match waitid(Id::Pid(Pid::from_raw(pid)), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
                    Ok(status) => break status,
                    Err(nix::Error::EINTR) => continue,
                    Err(_) => break WaitStatus::StillAlive,
                }
            };
            run.leader_exited();
            let _ = tx.send(status);
        })
        .ok();
    rx
}

/// How long members killed with the leader get to be gone, and how often
/// that is looked at.
const KILLED_SETTLE: Duration = Duration::from_millis(250);
const KILLED_STEP: Duration = Duration::from_millis(10);
/// How long processes left in the group get after SIGTERM before SIGKILL.
const LEFTOVER_GRACE: Duration = Duration::from_millis(1000);
/// How long we wait for the PTY to report end of file once the harness is
/// gone; a descendant that escaped with the terminal open can hold it forever.
/// Generous: the reader may be behind the harness's last output (a disk
/// write on a busy machine), and a run that exited 0 with its group gone but
/// its end not reached in time is `failed`. 2 s failed a real Open
/// Interpreter run on a busy 2-core CI machine once.
const DRAIN_LIMIT: Duration = Duration::from_millis(5000);
/// How often the bounded exit-time loops look again.
const RECHECK: Duration = Duration::from_millis(20);

pub async fn finish(
    run: Arc<Supervised>,
    exited: oneshot::Receiver<WaitStatus>,
    paths: &Paths,
    spec: &SuperviseSpec,
) -> ExitEvidence {
    let status = exited.await.unwrap_or(WaitStatus::StillAlive);
    let leader = run.leader.pid;
    let pgid = leader; // the harness is a session and group leader (setsid in spawn)

    // Processes still in the group. The unreaped zombie leader pins the group
    // id, so every member found here is ours: signalling the group is safe.
    let mut leftovers = group_members(pgid, leader);
    // Members a signal to the whole group reached die a moment after the
    // leader (later on a busy machine): they are no leftovers.
    let settle = tokio::time::Instant::now() + KILLED_SETTLE;
    while !leftovers.is_empty() && tokio::time::Instant::now() < settle {
        tokio::time::sleep(KILLED_STEP).await;
        leftovers = group_members(pgid, leader);
    }
    if !leftovers.is_empty() {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGTERM);
        let deadline = tokio::time::Instant::now() + LEFTOVER_GRACE;
        while !group_members(pgid, leader).is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(RECHECK).await;
        }
        if !group_members(pgid, leader).is_empty() {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        leftovers.sort_by_key(|n| n.pid);
    }

    // Now reap the leader.
    let reaped = matches!(
        waitpid(Pid::from_raw(leader), None),
        Ok(WaitStatus::Exited(..)) | Ok(WaitStatus::Signaled(..))
    );
    let (exit_code, signal) = match status {
        WaitStatus::Exited(_, code) => (Some(code), None),
        WaitStatus::Signaled(_, sig, _) => (None, Some(signal_name(sig as i32))),
        _ => (None, None),
    };
    // Members killed with SIGKILL may take a moment to leave the group.
    let deadline = tokio::time::Instant::now() + LEFTOVER_GRACE;
    while group_exists(pgid) && tokio::time::Instant::now() < deadline {
        reap_orphans();
        tokio::time::sleep(RECHECK).await;
    }
    let group_gone = !group_exists(pgid);

    // Descendants that left the group were re-parented to us (subreaper).
    let me = std::process::id() as i32;
    reap_orphans();
    let ours = run.started_daemons.lock().clone();
    let escaped: Vec<ProcessNote> = children_of(me)
        .unwrap_or_else(all_pids)
        .into_iter()
        .filter(|&pid| identity::ppid_of(pid) == Some(me) && !ours.contains(&pid))
        .map(note)
        .collect();

    let mut output_complete = run.wait_for_eof(DRAIN_LIMIT).await;
    if !output_complete && run.disk_paused.load(std::sync::atomic::Ordering::Relaxed) {
        // Its last output waits for space on a full disk: as long as the
        // harness would have been paused, then the log's end is known (and
        // a refusal is in `log_error`) before the evidence is taken.
        let patience = Duration::from_millis(spec.disk_full_patience_ms);
        output_complete = run.wait_for_eof(patience + DRAIN_LIMIT).await;
    }
    let _ = paths;
    ExitEvidence {
        exit_code,
        signal,
        reaped,
        group_gone,
        group_leftovers: leftovers,
        escaped,
        output_complete,
        output_bytes: run.offset(),
        ended_by: run.ended_by(),
        last_signal_sent: run.last_signal_sent(),
        log_error: run.log_error(),
        ended_at: crate::clock::now_ms(),
        leader: Some(run.leader.clone()),
    }
}

fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// The children of `pid` (`/proc/PID/task/*/children`): none if it is
/// gone; `None` where the kernel does not list children.
fn children_of(pid: i32) -> Option<Vec<i32>> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Some(Vec::new());
    };
    let mut found = Vec::new();
    for task in tasks.flatten() {
        match std::fs::read_to_string(task.path().join("children")) {
            Ok(list) => found.extend(list.split_whitespace().filter_map(|p| p.parse::<i32>().ok())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && task.path().exists() => return None,
            Err(_) => {}
        }
    }
    Some(found)
}

/// This supervisor's descendants: every member of its harness's group is
/// one (a member whose parent died was re-parented to us, the subreaper),
/// so this walk finds them without reading every process on the machine,
/// which hundreds of runs ending at once made slow.
fn our_descendants() -> Vec<i32> {
    let mut found = Vec::new();
    let mut frontier = vec![std::process::id() as i32];
    while let Some(pid) = frontier.pop() {
        let Some(children) = children_of(pid) else {
            return all_pids();
        };
        for child in children {
            if !found.contains(&child) {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found
}

/// The processes still alive in the group, the leader aside: a member
/// killed with it is a zombie until reaped (by us, once re-parented), and
/// needs no signal.
fn group_members(pgid: i32, leader: i32) -> Vec<ProcessNote> {
    our_descendants()
        .into_iter()
        .filter(|&pid| pid != leader && identity::pgid_of(pid) == Some(pgid) && !identity::has_exited(pid))
        .map(note)
        .collect()
}

fn note(pid: i32) -> ProcessNote {
    ProcessNote {
        pid,
        command: identity::comm_of(pid).unwrap_or_else(|| "?".into()),
    }
}

/// Collects exited orphans re-parented to us, so none lingers as a zombie.
fn reap_orphans() {
    while let Ok(status) = waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
        if status == WaitStatus::StillAlive {
            break;
        }
    }
}
