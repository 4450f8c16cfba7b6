//! `agents hook [--suppress-output] EVENT [PAYLOAD]`: what a harness hook
//! runs (the per-run settings of Claude Code and Droid, Copilot's per-run
//! plugin, Codex's `notify`). It reads the hook's JSON (stdin, or
//! the argument Codex passes), reports a small summary to the daemon with
//! the run's `AGENTS_RUN_ID`/`AGENTS_LAUNCH_ID` and its proof
//! (`crate::proof`) — or, in a box, to the run's own hook socket
//! (`supervise::hooks`) — and exits 0 — always, and
//! within [`BUDGET`] even when the daemon is down or stuck: a hook must
//! never block or fail the harness. It never starts a daemon, and prints
//! nothing (Claude adds a hook's stdout to the conversation) but, when
//! asked, the one line that hides the hook in Droid's chat.

use std::io::{IsTerminal, Read, Write};
use std::time::{Duration, Instant};

use crate::api::method;
use crate::client::Client;
use crate::paths::Paths;

/// The most a hook may take, from process start to exit. Claude runs
/// several hooks per tool call; a person notices a stall past about a
/// second, and the harness's own hook timeout (5 s) is never reached.
pub const BUDGET: Duration = Duration::from_millis(1500);

/// The option asking for `{"suppressOutput":true}` on stdout.
const SUPPRESS_OUTPUT: &str = "--suppress-output";

/// The largest payload read (docs/design.md §5: 1 MiB is the frame cap; a payload
/// past it carries tool output we would not keep anyway).
const MAX_PAYLOAD: usize = 1 << 20;

pub fn main(words: &[String]) -> i32 {
    let started = Instant::now();
    // `--suppress-output`: the harness shows each hook that ran unless
    // its output asks not to (Droid); said first, so it is said however
    // the report goes. Nothing else is ever printed.
    let words = match words.split_first() {
        Some((first, rest)) if first == SUPPRESS_OUTPUT => {
            // A closed stdout is no failure of the hook.
            let _ = writeln!(std::io::stdout(), "{{\"suppressOutput\":true}}");
            rest
        }
        _ => words,
    };
    // Whatever happens below (a daemon that accepts and never answers, a
    // harness that never closes our stdin), the process ends on time.
    std::thread::spawn(|| {
        std::thread::sleep(BUDGET);
        std::process::exit(0);
    });
    report(words, started);
    0
}

fn report(words: &[String], started: Instant) -> Option<()> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let ((run, proof), launch) = (crate::proof::claim(), var("AGENTS_LAUNCH_ID"));
    let raw = match words.get(1) {
        Some(arg) => arg.clone().into_bytes(),
        None => read_stdin(),
    };
    if run.is_none() && launch.is_none() {
        // Not started by agents (a hook copied into a user's own settings).
        return None;
    }
    let event = words.first().map_or("unknown", String::as_str);
    let payload = serde_json::from_slice(&raw).unwrap_or(serde_json::Value::Null);
    let mut report = crate::harness::hooks::report_from(event, &payload);
    if event == crate::harness::codex::NOTIFY_EVENT {
        // Codex's notify names a thread, not its rollout; the config home
        // that holds it is known only here, in the harness's environment.
        let home = var("CODEX_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| var("HOME").map(|h| std::path::Path::new(&h).join(".codex")));
        if let Some(home) = home {
            crate::harness::codex::place_notify(&mut report, &home);
        }
    }
    report.run = run;
    report.launch_id = launch;
    report.proof = proof;
    report.at_ms = crate::store::now_ms();
    let left = BUDGET.checked_sub(started.elapsed())?;
    if let Some(socket) = var(crate::harness::sandbox::HOOK_SOCKET_VAR) {
        // In a box: the run's own socket, which its supervisor serves.
        return tell_box(&socket, &report, left);
    }
    let paths = Paths::from_env().ok()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    runtime.block_on(async move {
        tokio::time::timeout(left, async move {
            let client = Client::connect_existing(&paths, false).await.ok()?;
            client.call::<method::HooksReport>(report).await.ok()
        })
        .await
        .ok()
        .flatten()
    })?;
    Some(())
}

/// Writes the report to a boxed run's hook socket, within `left`.
fn tell_box(socket: &str, report: &crate::api::HookReport, left: Duration) -> Option<()> {
    let mut stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    stream.set_write_timeout(Some(left)).ok()?;
    let bytes = serde_json::to_vec(report).ok()?;
    stream.write_all(&bytes).ok()?;
    stream.shutdown(std::net::Shutdown::Write).ok()
}

/// The payload on stdin, at most [`MAX_PAYLOAD`] bytes kept; the rest is
/// read and dropped, so the harness's write never fails on a closed pipe.
fn read_stdin() -> Vec<u8> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Vec::new();
    }
    let mut lock = stdin.lock();
    let mut kept = Vec::new();
    let _ = (&mut lock).take(MAX_PAYLOAD as u64).read_to_end(&mut kept);
    let _ = std::io::copy(&mut lock, &mut std::io::sink());
    kept
}
