//! Hardening (issue #11): a stopped daemon answers clients with a bounded
//! wait and a one-line error naming it; names that read as ids and sizes
//! out of range are refused alike, before anything is stored; a run that
//! fills the disk ends and its end is not lost.

mod common;

use common::Home;
use serde_json::Value;

#[test]
fn a_stopped_daemon_gets_a_one_line_error_naming_it_and_serves_again_when_continued() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sleep", "60"]);
    let pid = home.json(&["daemon", "status", "--json"])["pid"].as_i64().unwrap() as i32;
    let pid = nix::unistd::Pid::from_raw(pid);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    // Continued however the test ends, so the home's clean-up can stop it.
    struct Continue(nix::unistd::Pid);
    impl Drop for Continue {
        fn drop(&mut self) {
            let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGCONT);
        }
    }
    let _continue = Continue(pid);
    // `daemon stop` too: not "not running", which it is not.
    let stop = &["daemon", "stop"][..];
    for args in [
        &["ls"][..],
        &["daemon", "status"][..],
        &["send", &id, "hello"][..],
        stop,
    ] {
        let out = home.run(args);
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("the daemon (pid {pid}) does not answer")) && stderr.contains("kill -CONT"),
            "{args:?}: {stderr}"
        );
    }
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    assert_eq!(home.state(&id), "running");
}

#[test]
fn a_name_that_reads_as_an_id_and_a_size_out_of_range_are_refused_before_anything_is_stored() {
    let home = Home::new();
    let first = home.start(&["cmd", "--", "sleep", "60"]);
    let prefix: String = first.chars().take(6).collect();
    for args in [
        vec!["run", "-d", "--name", prefix.as_str(), "cmd", "--", "true"],
        vec!["run", "-d", "--name", "ABC123", "cmd", "--", "true"],
        vec!["run", "-d", "--size", "0x0", "cmd", "--", "true"],
        vec!["run", "-d", "--size", "10x", "cmd", "--", "true"],
    ] {
        let out = home.run(&args);
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    let listed: Value = home.json(&["ls", "--all", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "only the first run: {listed}");
    // The prefix still finds the run, not a run named after it.
    assert_eq!(home.show(&prefix)["id"], first.as_str());
    assert!(
        home.run(&["run", "-d", "--name", "abc-1", "cmd", "--", "true"])
            .status
            .success()
    );
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0)
}

#[test]
fn the_daemon_s_files_are_owner_only_the_agent_s_keep_the_user_s_modes_and_a_stop_merges_the_wal() {
    let home = Home::new();
    let work = tempfile::tempdir().unwrap();
    let id = home.start(&[
        "cmd",
        "--cwd",
        &work.path().to_string_lossy(),
        "--",
        "sh",
        "-c",
        "echo made > made.txt",
    ]);
    home.wait_end(&id);
    let run_dir = home.path().join("runs").join(&id);
    assert_eq!(mode(&run_dir), 0o700, "the run's folder");
    for file in ["output.log", "output.idx", "sizes", "exit.json", "supervise.log"] {
        assert_eq!(mode(&run_dir.join(file)), 0o600, "{file}");
    }
    assert_eq!(mode(&home.path().join("agents.db")), 0o600);
    // What the agent wrote in the user's folder has the user's umask.
    let user_umask = {
        let was = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o022));
        nix::sys::stat::umask(was);
        was.bits() as u32
    };
    assert_eq!(mode(&work.path().join("made.txt")), 0o666 & !user_umask);

    home.ok(&["daemon", "stop"]);
    let wal = home.path().join("agents.db-wal");
    assert!(
        std::fs::metadata(&wal).map_or(true, |m| m.len() == 0),
        "a clean stop merges the WAL: {} bytes left",
        std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0)
    );
}

#[test]
fn doctor_says_so_when_the_database_is_empty_beside_run_folders() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "true"]);
    home.wait_end(&id);
    home.ok(&["daemon", "stop"]);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(home.path().join(format!("agents.db{suffix}")));
    }
    std::fs::write(home.path().join("agents.db"), b"").unwrap();
    let out = home.run(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("is empty but 1 run folder(s) exist: their records were lost"),
        "{text}"
    );
}

fn environ(pid: i64) -> String {
    String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default()).replace('\0', "\n")
}

#[test]
fn a_token_in_the_shell_that_started_the_daemon_reaches_no_daemon_supervisor_or_run() {
    let home = Home::new();
    let out = home
        .cmd(&["run", "-d", "cmd", "--", "sh", "-c", "env > env.txt; sleep 60"])
        .current_dir(tempfile::tempdir().unwrap().keep())
        .env("UNRELATED_TOKEN", "tok-never-anywhere")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let shown = home.show(&id);
    let daemon = home.json(&["daemon", "status", "--json"])["pid"].as_i64().unwrap();
    let cwd = std::path::PathBuf::from(shown["cwd"].as_str().unwrap());
    home.wait_until("the run wrote its environment", || {
        std::fs::read_to_string(cwd.join("env.txt")).is_ok_and(|e| e.contains("AGENTS_RUN_ID"))
    });
    let supervisor = std::fs::read_to_string(format!("/proc/{}/stat", shown["pid"].as_i64().unwrap()))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(str::to_string))
        .and_then(|rest| rest.split_whitespace().nth(1).and_then(|p| p.parse::<i64>().ok()))
        .expect("the run's parent, its supervisor");
    for (what, env) in [
        ("the daemon", environ(daemon)),
        ("the supervisor", environ(supervisor)),
        ("the run", std::fs::read_to_string(cwd.join("env.txt")).unwrap()),
    ] {
        assert!(!env.is_empty(), "{what}'s environment was read");
        assert!(!env.contains("tok-never-anywhere"), "{what} holds the token:\n{env}");
    }
    assert!(
        environ(daemon).contains("AGENTS_HOME="),
        "what the daemon needs is kept"
    );
}

#[test]
fn a_restart_after_a_bad_edit_keeps_the_last_valid_config() {
    let home = Home::with_config("[engine]\nquiet_ms = 300\n[profiles.mine]\nfamily = \"demo\"\n");
    let first = home.start(&["mine"]);
    assert_eq!(home.show(&first)["profile"], "mine");
    home.ok(&["cancel", "--force", &first]);
    home.ok(&["daemon", "stop"]);
    std::fs::write(
        home.config.path().join("agents/config.toml"),
        "[profiles.mine\nfamily = ",
    )
    .unwrap();

    // The daemon that starts now has only the bad file: it uses the kept one.
    let again = home.start(&["mine"]);
    let shown = home.show(&again);
    assert_eq!(shown["state"], "running", "{shown}");
    assert_eq!(shown["profile"], "mine");
    let doctor = home.run(&["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains("is invalid, keeping the last valid config") && text.contains("kept from before"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_descriptors_the_daemon_backs_off_says_so_once_and_keeps_serving_its_clients() {
    let home = Home::new();
    home.start(&["cmd", "--", "sleep", "60"]);
    let paths = agents::paths::Paths::at(home.path().to_path_buf());
    let held = agents::client::Client::connect_existing(&paths, false).await.unwrap();
    let pid = home.json(&["daemon", "status", "--json"])["pid"].as_i64().unwrap();
    let open = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count();
    // The soft limit only: the hard one cannot be raised again here.
    let limit = |n: usize| {
        let out = std::process::Command::new("prlimit")
            .args(["--pid", &pid.to_string(), &format!("--nofile={n}:")])
            .output()
            .expect("prlimit (util-linux)");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    limit(open);
    // Connections the kernel queues and the daemon cannot take.
    let waiting: Vec<_> = (0..4)
        .map(|_| std::os::unix::net::UnixStream::connect(paths.daemon_socket()).unwrap())
        .collect();
    let log = || std::fs::read_to_string(home.path().join("daemon.log")).unwrap_or_default();
    home.wait_until("the daemon says it cannot accept", || {
        log().contains("cannot accept connections")
    });
    // The connection it has is served meanwhile.
    let status = held
        .call::<agents::api::method::DaemonStatus>(agents::api::NoParams)
        .await
        .unwrap();
    assert_eq!(Some(status.pid as i64), Some(pid));
    assert_eq!(
        log().matches("cannot accept connections").count(),
        1,
        "said once:\n{}",
        log()
    );

    limit(1024);
    drop(waiting);
    home.wait_until("it accepts again", || log().contains("accepting connections again"));
    assert!(home.run(&["ls"]).status.success());
}

#[test]
fn silent_connections_to_a_run_s_socket_are_bounded_and_closed_and_the_run_goes_on() {
    use std::io::Read;
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "while read -r l; do echo \"got $l\"; done"]);
    let paths = agents::paths::Paths::at(home.path().to_path_buf());
    let socket = paths.run_socket(&id);
    let silent: Vec<std::os::unix::net::UnixStream> = (0..24)
        .map(|_| std::os::unix::net::UnixStream::connect(&socket).unwrap())
        .collect();
    // Every one ends: past the bound at once, the others at the header
    // timeout; none is held open for good.
    let (done, ended) = std::sync::mpsc::channel();
    for mut conn in silent {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 256];
            while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
            let _ = done.send(());
        });
    }
    for n in 0..24 {
        ended
            .recv_timeout(common::PATIENCE)
            .unwrap_or_else(|_| panic!("silent connection {n} still open"));
    }
    // The run and its daemon's link carried on meanwhile.
    home.ok(&["send", &id, "ping"]);
    home.wait_until("the run answers", || home.logs(&id).contains("got ping"));
}

fn alive(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

/// The daemon heals itself: killed with `kill -9`, it is started again by
/// the supervisors of the runs it left, with no command typed, and a prompt
/// it had queued is delivered. Stopped on purpose, it stays stopped.
#[test]
fn a_daemon_killed_is_started_again_by_its_runs_and_one_stopped_stays_stopped() {
    let home = Home::new();
    let gates = tempfile::tempdir().unwrap();
    let gate = gates.path().join("gate");
    let script = format!(
        "i=0; while [ ! -e '{}' ]; do echo tick $i; i=$((i+1)); sleep 0.05; done; exec cat",
        gate.display()
    );
    let id = home.start(&["cmd", "--", "sh", "-c", &script]);
    home.wait_until("the run prints", || {
        String::from_utf8_lossy(&std::fs::read(home.log_path(&id)).unwrap_or_default()).contains("tick 3")
    });
    // Busy: the prompt waits in the daemon's queue.
    let sent = home.ok(&["send", &id, "healed-prompt"]);
    assert!(sent.contains("queued"), "{sent}");
    let killed = home.daemon_pid().expect("daemon.pid");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(killed), nix::sys::signal::Signal::SIGKILL).unwrap();
    std::fs::write(&gate, b"").unwrap();
    // No command from here on: the log file and the pid file are read.
    home.wait_until(
        "a daemon started by the run's supervisor delivers the queued prompt",
        || String::from_utf8_lossy(&std::fs::read(home.log_path(&id)).unwrap_or_default()).contains("healed-prompt"),
    );
    let healed = home.daemon_pid().expect("the new daemon's pid file");
    assert_ne!(healed, killed);
    assert!(alive(healed));

    home.ok(&["daemon", "stop"]);
    // Longer than a supervisor waits for its daemon to come back, and the
    // spread between supervisors (`supervise::keeper`).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(8);
    while std::time::Instant::now() < until {
        assert!(
            home.daemon_pid().is_none(),
            "a daemon stopped on purpose was started again"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(!alive(healed));
}

/// `agents doctor` in a home set up by `prepare`: (exit status, stdout).
/// A home `prepare` mounted something on (it says so) is unmounted after.
fn doctor_in(prepare: impl FnOnce(&std::path::Path) -> bool) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::set_permissions(&home, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let mounted = prepare(&home);
    let out = std::process::Command::new(common::BIN)
        .arg("doctor")
        .env("AGENTS_HOME", &home)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .output();
    if mounted {
        let _ = std::process::Command::new("umount").arg(&home).status();
    }
    let out = out.unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Doctor says what is wrong where nothing would work: a database that is
/// not one, a socket directory of another user, a read-only home.
#[test]
fn doctor_names_a_broken_database_another_users_socket_directory_and_a_read_only_home() {
    let (status, out) = doctor_in(|home| {
        std::fs::write(home.join("agents.db"), [0x5a; 4096]).unwrap();
        false
    });
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("problem  database") && out.contains("not a database"),
        "{out}"
    );
    assert!(out.contains("fix: move agents.db aside"), "{out}");

    // Root owns no directory it gives to another user: that is how a
    // second user's socket directory looks from here.
    let (status, out) = doctor_in(|home| {
        // Only root may give a directory away; others skip this case.
        let _ = nix::unistd::chown(home, Some(nix::unistd::Uid::from_raw(65534)), None);
        false
    });
    if nix::unistd::geteuid().is_root() {
        assert_eq!(status, 1, "{out}");
        assert!(out.contains("belongs to another user (uid 65534)"), "{out}");
    }

    let mounted = std::cell::Cell::new(false);
    let (status, out) = doctor_in(|home| {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=1m,mode=700", "tmpfs"])
            .arg(home)
            .status()
            .is_ok_and(|s| s.success());
        mounted.set(ok);
        ok
    });
    if mounted.get() {
        assert_eq!(status, 1, "{out}");
        assert!(out.contains("cannot be written: Read-only file system"), "{out}");
    } else {
        eprintln!("no read-only mount here (needs root with CAP_SYS_ADMIN): that case is not checked");
    }
}

/// A home on a small file system of its own, unmounted (after its daemon
/// stopped) however the test ends.
struct SmallDisk {
    // Unmounted before the home's directory is removed.
    _disk: common::disk::Tmpfs,
    home: common::Home,
}

impl SmallDisk {
    /// `None` where nothing can be mounted (needs root with CAP_SYS_ADMIN).
    /// A run is paused on a full disk for `patience_ms` before it is ended.
    fn mount(size: &str, patience_ms: u64) -> Option<SmallDisk> {
        let home = common::Home::with_config(&format!(
            "[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\ndisk_full_patience_ms = {patience_ms}\n"
        ));
        let disk = common::disk::Tmpfs::mount(home.path(), size).ok()?;
        Some(SmallDisk { _disk: disk, home })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        if let Ok(out) = self.home.cmd(&["ls", "--json"]).output()
            && let Ok(Value::Array(runs)) = serde_json::from_slice::<Value>(&out.stdout)
        {
            for id in runs.iter().filter_map(|r| r["id"].as_str()) {
                let _ = self.home.cmd(&["cancel", "--force", id]).output();
            }
        }
        let _ = self.home.cmd(&["daemon", "stop"]).output();
    }
}

/// A run that fills the disk ends, and its end is not lost: `wait`,
/// `cancel` and `logs` answer while the database cannot take the write, the
/// reason says the disk is full, and once space returns the end is stored
/// (a daemon killed after that still says so, not "supervisor died").
#[test]
fn a_run_that_fills_the_disk_ends_with_the_reason_and_its_end_is_stored_once_space_returns() {
    let Some(disk) = SmallDisk::mount("8m", 1000) else {
        eprintln!("no tmpfs mount here (needs root with CAP_SYS_ADMIN): the full disk is not checked");
        return;
    };
    let home = &disk.home;
    home.ok(&["daemon", "start"]);
    // Space to give back later.
    let filler = home.path().join("filler");
    std::fs::write(&filler, vec![0u8; 1 << 20]).unwrap();
    let id = home.start(&["cmd", "--", "yes", "a line of flood that fills the disk"]);

    let out = home.run(&["wait", &id, "--json", "--timeout", "60"]);
    assert!(
        out.status.code() != Some(124),
        "wait did not return: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ended: Value = serde_json::from_slice(&out.stdout).expect("wait --json");
    assert_eq!(ended["state"], "failed", "{ended}");
    let reason = ended["reason"].as_str().unwrap_or_default().to_string();
    assert!(reason.contains("the disk is full"), "{reason}");
    assert_eq!(home.show(&id)["state"], "failed");

    let cancel = home.run(&["cancel", &id]);
    let said = String::from_utf8_lossy(&cancel.stderr);
    assert!(!cancel.status.success() && said.contains("failed"), "{said}");
    assert!(!said.contains("still starting"), "{said}");
    let logs = home.run(&["logs", &id]);
    assert!(logs.status.success(), "{}", String::from_utf8_lossy(&logs.stderr));
    assert!(String::from_utf8_lossy(&logs.stdout).contains("a line of flood"));

    std::fs::remove_file(&filler).unwrap();
    home.wait_until("the end is stored once space returns", || {
        home.event_kinds(&id).iter().any(|k| k == "RUN_ERROR")
    });
    common::kill9(home.daemon_pid().expect("daemon.pid"));
    let after = home.show(&id);
    assert_eq!(after["state"], "failed", "{after}");
    assert_eq!(after["reason"].as_str(), Some(reason.as_str()), "{after}");
}

/// A disk full for a moment costs no agent and no byte: the run is paused
/// (held on its next write to the terminal) while the log is refused, and
/// goes on once space returns, every line it printed in its log.
#[test]
fn a_run_paused_by_a_full_disk_goes_on_once_space_returns_with_every_line() {
    let Some(disk) = SmallDisk::mount("8m", 60_000) else {
        eprintln!("no tmpfs mount here (needs root with CAP_SYS_ADMIN): the full disk is not checked");
        return;
    };
    let home = &disk.home;
    let outside = tempfile::tempdir().unwrap();
    let (gate, count) = (outside.path().join("gate"), outside.path().join("count"));
    // Its count is written outside the full disk, so the test can tell it
    // went on printing while the disk was full. Lines of 200 bytes: 50 of
    // them are more than the free end of the log's last page (4 KiB) and
    // less than the terminal holds before the harness waits (64 KiB).
    let pad = "x".repeat(192);
    let script = format!(
        "i=0; while [ ! -e '{gate}' ]; do echo line $i {pad}; i=$((i+1)); echo $i > '{count}'; sleep 0.01; done; echo last $i",
        gate = gate.display(),
        count = count.display()
    );
    let id = home.start(&["cmd", "--", "sh", "-c", &script]);
    let printed = || -> u64 {
        std::fs::read_to_string(&count)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    };
    home.wait_until("the run prints", || printed() >= 20);
    let filler = common::disk::fill(home.path(), "filler");
    let at_full = printed();
    home.wait_until("the run prints 50 lines more while the disk is full", || {
        printed() >= at_full + 50
    });
    assert_eq!(home.state(&id), "running");
    std::fs::remove_file(&filler).unwrap();
    std::fs::write(&gate, b"").unwrap();
    let end = home.wait_end(&id);
    assert_eq!(end["state"], "succeeded", "{end}");
    let last = printed();
    let log = String::from_utf8_lossy(&home.raw_log(&id)).replace('\r', "");
    let lines: Vec<&str> = log.lines().collect();
    let expected: Vec<String> = (0..last)
        .map(|i| format!("line {i} {pad}"))
        .chain([format!("last {last}")])
        .collect();
    assert_eq!(lines, expected, "every line, in order, once");
}

#[test]
fn doctor_reports_a_key_bound_to_two_actions() {
    let home = Home::with_config("[keys]\nnew = \"N\"\n");
    let doctor = home.run(&["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains("config [keys]: a key with two actions: N: new, not deny"),
        "{text}"
    );
    assert!(!doctor.status.success(), "a problem is a non-zero exit: {text}");
}

/// A limit from `/proc/PID/limits`: (soft, hard).
fn open_files_limit(pid: i64) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap()
        .to_string();
    let mut words = line["Max open files".len()..].split_whitespace();
    (words.next().unwrap().into(), words.next().unwrap().into())
}

/// The daemon holds a socket per run: it raises its own open-files limit
/// to the hard one, and gives its supervisors (and their agents) the
/// user's soft limit back; a supervisor, spawned without a fork's copy of
/// the daemon, leaves the daemon's session as it starts.
#[test]
fn the_daemon_raises_its_open_files_limit_and_its_runs_keep_the_user_s() {
    let home = Home::new();
    let out = home
        .cmd_of(
            std::path::Path::new("sh"),
            &[
                "-c",
                "ulimit -Sn 256 && exec \"$0\" run -d cmd -- sleep 60",
                common::BIN,
            ],
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let daemon = home.daemon_pid().expect("a daemon") as i64;
    let (soft, hard) = open_files_limit(daemon);
    assert_eq!(soft, hard, "the daemon's soft limit is its hard one");
    let run = home.show(&id);
    let (harness_soft, _) = open_files_limit(run["pid"].as_i64().unwrap());
    assert_eq!(
        harness_soft, "256",
        "the run keeps the soft limit of the shell that started the daemon"
    );
    // Its supervisor (the harness's parent) has the user's limit too, and
    // leads a session of its own, apart from the daemon's.
    let harness = nix::unistd::Pid::from_raw(run["pid"].as_i64().unwrap() as i32);
    let stat = std::fs::read_to_string(format!("/proc/{harness}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let supervisor: i64 = after_name.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(open_files_limit(supervisor).0, "256", "the supervisor's soft limit");
    let sid = nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(supervisor as i32))).unwrap();
    assert_eq!(sid.as_raw() as i64, supervisor, "the supervisor leads its own session");
    assert_ne!(supervisor, daemon);
    home.ok(&["cancel", &id]);
}

/// `agents doctor` says when the daemon's open-files limit leaves room for
/// few more runs, with the fix.
#[test]
fn doctor_says_when_the_open_files_limit_leaves_room_for_few_runs() {
    let home = Home::new();
    let out = home
        .cmd_of(
            std::path::Path::new("sh"),
            &["-c", "ulimit -n 150 && exec \"$0\" daemon start", common::BIN],
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doctor = home.run(&["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(!doctor.status.success(), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("open files:"))
        .expect("an open-files line");
    assert!(line.starts_with("problem") && line.contains("of its 150"), "{text}");
    assert!(text.contains("ulimit -Hn"), "{text}");

    let fine = Home::new();
    fine.ok(&["daemon", "start"]);
    let text = fine.ok(&["doctor"]);
    assert!(
        text.lines().any(|l| l.starts_with("ok") && l.contains("open files:")),
        "{text}"
    );
    // Each run holds a PTY: the machine's count is said beside.
    assert!(
        text.lines()
            .any(|l| l.contains("PTYs:") && l.contains("of the machine's")),
        "{text}"
    );
}

/// `daemon.log` takes the daemon's stderr: created owner-only, made so
/// when an older build left it readable, and never opened through a link
/// planted in its place (the daemon would append to the file it names).
#[test]
fn the_daemon_log_is_owner_only_and_never_opened_through_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let home = Home::new();
    let log = home.path().join("daemon.log");
    home.ok(&["ls"]);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&log), 0o600, "a new daemon.log is the owner's only");
    home.ok(&["daemon", "stop"]);
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    home.ok(&["ls"]);
    assert_eq!(mode(&log), 0o600, "an older, readable one is made the owner's only");
    home.ok(&["daemon", "stop"]);

    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("settings");
    std::fs::write(&victim, "mine\n").unwrap();
    std::fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink(&victim, &log).unwrap();
    let err = home.fails(&["ls"]);
    assert!(err.contains("daemon.log: it is a symbolic link; remove it"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "mine\n",
        "the linked file untouched"
    );
}

/// Issue #34 (8): on a disk filled to the last byte, `agents rm` frees what
/// agents took (the run's log first, then its rows), and `agents doctor`
/// says the disk is full rather than that all is well.
#[test]
fn on_a_full_disk_doctor_says_so_and_rm_frees_a_runs_log() {
    let Some(disk) = SmallDisk::mount("8m", 1000) else {
        eprintln!("no tmpfs mount here (needs root with CAP_SYS_ADMIN): the full disk is not checked");
        return;
    };
    let home = &disk.home;
    let id = home.start(&["cmd", "--", "sh", "-c", "yes a line of its log | head -c 3000000"]);
    assert_eq!(home.wait_end(&id)["state"], "succeeded");
    let filler = common::disk::fill(home.path(), "filler");
    let doctor = home.run(&["doctor"]);
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(1), "{said}");
    assert!(
        said.contains("problem  disk of the state directory: 0 MiB free"),
        "{said}"
    );
    let rm = home.run(&["rm", &id, "--yes"]);
    assert!(rm.status.success(), "{}", String::from_utf8_lossy(&rm.stderr));
    assert_eq!(home.json(&["ls", "--all", "--json"]), serde_json::json!([]));
    assert!(!home.path().join("runs").join(&id).exists());
    std::fs::remove_file(filler).unwrap();
}

/// Issue #34 (9): doctor said all was well where every command failed: a
/// `runs` that is a file, a `daemon.lock` that is a folder, and a state
/// directory that is a file (where it advised `chmod 700`).
#[test]
fn doctor_names_state_entries_of_the_wrong_kind_and_a_state_directory_that_is_a_file() {
    let (status, out) = doctor_in(|home| {
        std::fs::write(home.join("runs"), "").unwrap();
        std::fs::create_dir(home.join("daemon.lock")).unwrap();
        false
    });
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("runs is not a folder"), "{out}");
    assert!(out.contains("daemon.lock is not a regular file"), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("state");
    std::fs::write(&file, "").unwrap();
    let out = std::process::Command::new(common::BIN)
        .arg("doctor")
        .env("AGENTS_HOME", &file)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("is not a directory"), "{said}");
    assert!(!said.contains("chmod 700"), "{said}");
}
