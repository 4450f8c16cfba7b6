//! Link loss between this daemon and a remote host (docs/design.md §5, §8, §11): a
//! real sshd on loopback behind a fault-injecting proxy that cuts, stalls
//! and restores the link while a remote run prints numbered lines. The
//! remote run lives on; the local mirror of its output ends up byte for
//! byte the remote output log — nothing lost, nothing doubled.

mod common;
mod sshd;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::pane::Pane;
use serde_json::Value;
use sshd::{Net, Proxy};

/// Lines printed in each flood (≈ 55 bytes each with the PTY's `\r`): a
/// couple of MB, so a cut lands while frames are in flight.
const FLOOD_LINES: u32 = 40_000;

/// Keepalives every 5 s, the link dropped after 3 unanswered (src/remote/
/// ssh.rs): a stalled link is noticed within ~20 s, plus a busy machine.
const KEEPALIVE_NOTICE: Duration = Duration::from_secs(45);

/// The remote run: a flood of numbered lines, then one numbered line every
/// 10 ms until `gate` exists, then another flood, then exit. Every line
/// starts with its 7-digit number, so loss or doubling shows.
fn start_printer(net: &Net, host: &str, gate: &Path) -> String {
    let script = format!(
        "flood() {{ i=$1; while [ $i -lt $2 ]; do printf '%07d the quick brown fox jumps over the lazy dog\\n' $i; i=$((i+1)); done; }}; \
         flood 0 {FLOOD_LINES}; n={FLOOD_LINES}; \
         while [ ! -e '{gate}' ]; do printf '%07d waiting for the gate\\n' $n; n=$((n+1)); sleep 0.01; done; \
         flood $n $((n+{FLOOD_LINES}))",
        gate = gate.display()
    );
    net.start_on(host, &["cmd", "--", "sh", "-c", &script])
}

/// The host as `agents hosts ls --json` shows it.
fn host(net: &Net, name: &str) -> Value {
    let hosts = net.json(&["hosts", "ls", "--json"]);
    hosts
        .as_array()
        .and_then(|all| all.iter().find(|h| h["name"] == name).cloned())
        .unwrap_or_else(|| panic!("host {name} in {hosts}"))
}

fn link(net: &Net, name: &str) -> String {
    host(net, name)["link"].as_str().unwrap_or_default().to_string()
}

fn mirror_len(net: &Net, id: &str) -> u64 {
    std::fs::metadata(net.local.log_path(id)).map(|m| m.len()).unwrap_or(0)
}

fn remote_len(net: &Net, id: &str) -> u64 {
    std::fs::metadata(net.remote.log_path(id)).map(|m| m.len()).unwrap_or(0)
}

fn open_gate(gate: &Path) {
    std::fs::write(gate, b"").unwrap();
}

fn gate_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("gate")
}

/// The mirror's own state (`show` asks the host while the link is up).
fn mirror_state(net: &Net, id: &str) -> String {
    let runs = net.json(&["ls", "--all", "--json"]);
    let run = runs
        .as_array()
        .and_then(|all| all.iter().find(|r| r["id"] == id).cloned());
    run.and_then(|r| r["state"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Waits for the mirror to end, then holds it to the remote log: the same
/// bytes (`agents logs --raw`, through the daemon), and every line there
/// once, in order.
fn assert_mirror_complete(net: &Net, id: &str) {
    net.wait_until("the mirror ends", || {
        !matches!(mirror_state(net, id).as_str(), "pending" | "starting" | "running")
    });
    assert_eq!(mirror_state(net, id), "succeeded", "{}", net.ok(&["show", id]));
    assert_eq!(net.remote.state(id), "succeeded");
    let mirror = net.local.raw_log(id);
    let remote = std::fs::read(net.remote.log_path(id)).unwrap();
    assert!(
        mirror == remote,
        "mirror ({} bytes) != remote log ({} bytes); first difference at byte {:?}",
        mirror.len(),
        remote.len(),
        mirror.iter().zip(&remote).position(|(a, b)| a != b)
    );
    let text = String::from_utf8(mirror).unwrap();
    let numbers: Vec<u32> = text
        .lines()
        .filter_map(|l| l.get(..7).and_then(|n| n.parse().ok()))
        .collect();
    assert!(numbers.len() as u32 >= 2 * FLOOD_LINES, "{} lines", numbers.len());
    for (expected, got) in numbers.iter().enumerate() {
        assert_eq!(*got, expected as u32, "line {expected} of the mirror");
    }
}

/// A host behind the net's proxy, its key known, its link up.
fn net_with_host() -> Net {
    let net = Net::with_proxy();
    net.know_the_host();
    net.add_host("box", &net.target_via_proxy());
    net
}

#[test]
fn output_comes_through_the_proxy_whole() {
    let net = net_with_host();
    let gates = tempfile::tempdir().unwrap();
    let gate = gate_in(&gates);
    open_gate(&gate);
    let id = start_printer(&net, "box", &gate);
    assert_mirror_complete(&net, &id);
    assert_eq!(link(&net, "box"), "up");
}

#[test]
fn a_link_cut_during_a_flood_loses_and_doubles_nothing() {
    let net = net_with_host();
    let gates = tempfile::tempdir().unwrap();
    let gate = gate_in(&gates);
    let id = start_printer(&net, "box", &gate);
    net.wait_until("the flood starts arriving", || mirror_len(&net, &id) > 0);
    net.proxy().cut();
    let at_cut = mirror_len(&net, &id);
    net.wait_until("the cut is noticed", || link(&net, "box") != "up");

    // The run goes on there: the rest of the flood is written while cut.
    open_gate(&gate);
    net.wait_until("the remote run ends", || net.remote.state(&id) == "succeeded");
    assert!(
        remote_len(&net, &id) > mirror_len(&net, &id),
        "output produced during the cut is not here yet"
    );
    assert!(mirror_len(&net, &id) >= at_cut);

    net.proxy().restore();
    assert_mirror_complete(&net, &id);
    net.wait_until("the link is up again", || link(&net, "box") == "up");
}

#[test]
fn a_stalled_link_is_noticed_by_keepalives_and_resumes_without_loss() {
    let net = net_with_host();
    let gates = tempfile::tempdir().unwrap();
    let gate = gate_in(&gates);
    let id = start_printer(&net, "box", &gate);
    net.wait_mirrored(&id, "waiting");
    net.proxy().stall();
    let stalled = Instant::now();
    common::wait_until("the keepalives give the stalled link up", KEEPALIVE_NOTICE, &mut || {
        link(&net, "box") == "reconnecting"
    });
    let noticed = stalled.elapsed();
    assert!(
        noticed >= Duration::from_secs(10),
        "a stall is not a cut: noticed after {noticed:?}"
    );
    let during = host(&net, "box");
    assert!(during["since"].is_string(), "{during}");
    assert!(during["error"].is_string(), "{during}");
    // The run went on printing there meanwhile.
    assert!(remote_len(&net, &id) > mirror_len(&net, &id));

    net.proxy().restore();
    net.wait_until("the link is up again", || link(&net, "box") == "up");
    let resumed = mirror_len(&net, &id);
    net.wait_until("output flows again", || mirror_len(&net, &id) > resumed);
    open_gate(&gate);
    assert_mirror_complete(&net, &id);
}

#[test]
fn output_sent_but_never_persisted_here_is_sent_again_once() {
    let net = net_with_host();
    let gates = tempfile::tempdir().unwrap();
    let gate = gate_in(&gates);
    let id = start_printer(&net, "box", &gate);
    net.wait_mirrored(&id, "waiting");
    // Held in the link: the remote side has written it, this side never
    // read it, so the mirror never acknowledged it (its length is the ack).
    net.proxy().stall();
    open_gate(&gate);
    net.wait_until("the remote run ends", || net.remote.state(&id) == "succeeded");
    let held_from = mirror_len(&net, &id);
    assert!(remote_len(&net, &id) > held_from + 1_000_000);
    // The connection drops with those bytes in it.
    net.proxy().cut();
    net.wait_until("the cut is noticed", || link(&net, "box") != "up");
    assert_eq!(mirror_len(&net, &id), held_from, "nothing arrived through a stall");
    net.proxy().restore();
    assert_mirror_complete(&net, &id);
    // The rest came over a new connection, a new epoch (frames of the old
    // one would be rejected: `remote::mirror` unit tests).
    let log = std::fs::read_to_string(net.local.path().join("daemon.log")).unwrap();
    let lost = log.find("link lost (epoch 1)").expect("the first link lost");
    let epochs: Vec<u64> = log[lost..]
        .split("link up (epoch ")
        .skip(1)
        .filter_map(|rest| rest.split(',').next()?.parse().ok())
        .collect();
    assert!(epochs.first().is_some_and(|e| *e > 1), "{log}");
}

#[test]
fn a_cut_host_does_not_hold_up_another() {
    let net = net_with_host();
    let other = Proxy::start(net.sshd.port);
    net.know_the_host_at(other.port);
    net.add_host("other", &net.target_at(other.port));
    let gates = tempfile::tempdir().unwrap();
    let (gate_a, gate_b) = (gates.path().join("a"), gates.path().join("b"));
    let cut_run = start_printer(&net, "box", &gate_a);
    let live_run = start_printer(&net, "other", &gate_b);
    net.wait_until("both runs are mirrored", || {
        mirror_len(&net, &cut_run) > 0 && mirror_len(&net, &live_run) > 0
    });

    net.proxy().cut();
    let tried = net.proxy().accepted();
    net.wait_until("the cut is noticed", || link(&net, "box") != "up");
    // Frames the cut connection delivered before it closed may still be on
    // their way into the mirror when the link is marked down; the run's
    // follower connects again only once it has written all of them.
    net.wait_until("the cut run's follower tries to connect again", || {
        net.proxy().accepted() > tried
    });
    let frozen = mirror_len(&net, &cut_run);
    let before = mirror_len(&net, &live_run);
    net.wait_until("the other host's run keeps coming", || {
        mirror_len(&net, &live_run) > before + 2_000
    });
    assert_eq!(link(&net, "other"), "up");
    assert_ne!(link(&net, "box"), "up");
    assert_eq!(mirror_len(&net, &cut_run), frozen, "nothing through a cut");
    open_gate(&gate_b);
    assert_mirror_complete(&net, &live_run);

    net.proxy().restore();
    open_gate(&gate_a);
    assert_mirror_complete(&net, &cut_run);
}

#[test]
fn hosts_ls_says_reconnecting_and_since_when_while_the_link_is_down() {
    let net = net_with_host();
    let gates = tempfile::tempdir().unwrap();
    let gate = gate_in(&gates);
    let id = start_printer(&net, "box", &gate);
    net.wait_until("the run is mirrored", || mirror_len(&net, &id) > 0);
    let up = host(&net, "box");
    assert_eq!(up["link"], "up", "{up}");

    net.proxy().cut();
    net.wait_until("the link says reconnecting", || link(&net, "box") == "reconnecting");
    let down = host(&net, "box");
    assert!(down["since"].is_string() && down["since"] != up["since"], "{down}");
    assert!(down["latency_ms"].is_null(), "{down}");
    assert!(down["error"].is_string(), "{down}");
    assert_eq!(down["live_runs"], 1, "{down}");
    let table = net.ok(&["hosts", "ls"]);
    assert!(table.contains("reconnecting"), "{table}");
    // The daemon retries on its own (nobody is attached), and the link
    // stays `reconnecting` since the same moment.
    let tried = net.proxy().accepted();
    net.wait_until("the daemon has retried twice", || net.proxy().accepted() >= tried + 2);
    let still = host(&net, "box");
    assert_eq!(still["link"], "reconnecting", "{still}");
    assert_eq!(still["since"], down["since"], "{still}");

    net.proxy().restore();
    net.wait_until("the link is up again", || link(&net, "box") == "up");
    let again = host(&net, "box");
    assert!(again["latency_ms"].is_u64(), "{again}");
    assert!(again["error"].is_null(), "{again}");
    open_gate(&gate);
    assert_mirror_complete(&net, &id);
}

/// After a cut, a remote run's pane shows the run's screen as it is now,
/// before the mirror of its log has caught up with what was printed while
/// the link was down: screens cross the link ahead of the byte mirror.
#[test]
fn after_a_cut_a_remote_pane_shows_the_current_screen_before_the_mirror_catches_up() {
    let net = net_with_host();
    let gates = tempfile::tempdir().unwrap();
    let gate = gate_in(&gates);
    let script = format!(
        "i=0; while [ ! -e '{gate}' ]; do echo tick $i; i=$((i+1)); sleep 0.05; done; \
         yes 'the quick brown fox jumps over the lazy dog, printed while the link was cut' | head -c 40000000; \
         printf '\\033[2J\\033[HTHE SCREEN AFTER THE CUT\\n'; exec sleep 600",
        gate = gate.display()
    );
    let id = net.start_on("box", &["cmd", "--", "sh", "-c", &script]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut pane = rt.block_on(Pane::open(net.local.path(), &id));
    rt.block_on(pane.until_shows("tick", || ()));

    net.proxy().cut();
    net.wait_until("the cut is noticed", || link(&net, "box") != "up");
    open_gate(&gate);
    net.wait_until("the remote run has drawn its last screen", || {
        String::from_utf8_lossy(&std::fs::read(net.remote.log_path(&id)).unwrap_or_default())
            .contains("THE SCREEN AFTER THE CUT")
    });
    let remote_end = remote_len(&net, &id);
    net.proxy().restore();
    let mirrored = rt.block_on(pane.until_shows("THE SCREEN AFTER THE CUT", || mirror_len(&net, &id)));
    assert!(
        mirrored < remote_end,
        "the screen came after the mirror had caught up ({mirrored} of {remote_end} bytes here)"
    );
    net.wait_until("the mirror catches up", || mirror_len(&net, &id) >= remote_end);
    net.ok(&["cancel", &id]);
}

/// Two panes here of one remote run (the TUI and an `agents attach`, say)
/// each hold their own screen subscription on the host: both follow the
/// run, and neither takes the host's updates from the other (each taking
/// them back was an endless round of re-subscriptions, every one a whole
/// screen sent again).
#[test]
fn two_panes_of_one_remote_run_both_follow_it_without_taking_turns() {
    let net = net_with_host();
    let gates = tempfile::tempdir().unwrap();
    let gate = gate_in(&gates);
    let script = format!(
        "echo ready; while [ ! -e '{gate}' ]; do sleep 0.05; done; echo the gate opened; exec sleep 600",
        gate = gate.display()
    );
    let id = net.start_on("box", &["cmd", "--", "sh", "-c", &script]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut first = rt.block_on(Pane::open(net.local.path(), &id));
    rt.block_on(first.until_shows("ready", || ()));
    let mut second = rt.block_on(Pane::open(net.local.path(), &id));
    rt.block_on(second.until_shows("ready", || ()));
    // The first pane, still shown, goes on receiving: it is not cut off.
    open_gate(&gate);
    rt.block_on(first.until_shows("the gate opened", || ()));
    rt.block_on(second.until_shows("the gate opened", || ()));
    // One subscription on the host for each pane, held.
    let log = std::fs::read_to_string(net.local.path().join("daemon.log")).unwrap();
    let subscribed = log
        .lines()
        .filter(|l| l.contains(&format!("run {id}: screen")) && l.contains("subscribed"))
        .count();
    assert_eq!(subscribed, 2, "screen subscriptions made on the host:\n{log}");
    net.ok(&["cancel", &id]);
}

/// A remote run that ends while a pane here shows it, its mirror still
/// catching up after a cut: the screen subscription's end (the host sends
/// it as soon as the last screen is out) is not the byte stream's, so the
/// mirror goes on until it holds every byte, and the pane ends after the
/// run's last screen.
#[test]
fn a_remote_run_ending_while_a_pane_shows_it_is_still_mirrored_whole() {
    let net = net_with_host();
    let gates = tempfile::tempdir().unwrap();
    let gate = gate_in(&gates);
    let script = format!(
        "echo started; while [ ! -e '{gate}' ]; do sleep 0.05; done; \
         yes 'the quick brown fox jumps over the lazy dog, printed while the link was cut' | head -c 30000000; \
         echo THE LAST LINE",
        gate = gate.display()
    );
    let id = net.start_on("box", &["cmd", "--", "sh", "-c", &script]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut pane = rt.block_on(Pane::open(net.local.path(), &id));
    rt.block_on(pane.until_shows("started", || ()));
    net.proxy().cut();
    net.wait_until("the cut is noticed", || link(&net, "box") != "up");
    open_gate(&gate);
    net.wait_until("the run has ended there", || {
        String::from_utf8_lossy(&std::fs::read(net.remote.log_path(&id)).unwrap_or_default()).contains("THE LAST LINE")
            && net.remote.json(&["show", &id, "--json"])["state"] == "succeeded"
    });
    let remote_end = remote_len(&net, &id);
    net.proxy().restore();
    rt.block_on(pane.until_shows("THE LAST LINE", || ()));
    let ended = net.json(&["wait", &id, "--json"]);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert_eq!(
        mirror_len(&net, &id),
        remote_end,
        "the mirror ended with part of the output"
    );
}
