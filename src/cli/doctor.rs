//! `agents doctor`: what is wrong with this installation and how to fix it.

use std::os::unix::fs::MetadataExt;

use anyhow::Result;

use crate::api::method;
use crate::client::Client;
use crate::paths::Paths;

pub async fn doctor(paths: &Paths) -> Result<i32> {
    let mut report = Report::default();
    state_dir(&mut report, paths);
    disk(&mut report, paths);
    daemon(&mut report, paths).await;
    database(&mut report, paths);
    config(&mut report, paths);
    binaries(&mut report);
    declared_families(&mut report);
    sandbox();
    Ok(if report.problems == 0 { 0 } else { 1 })
}

/// Whether `--sandbox` can box a run here: bubblewrap found, its version,
/// and a box made. Not having it is no problem until a run asks for one.
fn sandbox() {
    let path = std::env::var("PATH").ok();
    match crate::harness::sandbox::usable(path.as_deref()) {
        Ok(bwrap) => {
            let version = std::process::Command::new(&bwrap)
                .arg("--version")
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            say!("ok       --sandbox: {version} at {} makes a box here", bwrap.display());
        }
        Err(why) => say!("info     --sandbox: not available: {why}"),
    }
}

/// What doctor found: each line said as it is found, the problems counted.
#[derive(Default)]
struct Report {
    problems: usize,
}

impl Report {
    fn ok(&self, what: String) {
        say!("ok       {what}");
    }

    fn bad(&mut self, what: String, fix: &str) {
        say!("problem  {what}\n         fix: {fix}");
        self.problems += 1;
    }
}

/// The state directory and the sockets' directory.
fn state_dir(report: &mut Report, paths: &Paths) {
    match std::fs::metadata(&paths.home) {
        Ok(m) if !m.is_dir() => report.bad(
            format!("state directory {} is not a directory", paths.home.display()),
            &format!("move {} aside, or set AGENTS_HOME to a directory", paths.home.display()),
        ),
        Ok(m) if m.mode() & 0o077 == 0 => report.ok(format!("state directory {} (0700)", paths.home.display())),
        Ok(m) => report.bad(
            format!(
                "state directory {} is mode {:o}",
                paths.home.display(),
                m.mode() & 0o777
            ),
            &format!("chmod 700 {}", paths.home.display()),
        ),
        Err(_) => report.ok(format!(
            "state directory {} (created on first use)",
            paths.home.display()
        )),
    }
    if paths.home.is_dir()
        && let Err(e) = writable(&paths.home)
    {
        report.bad(
            format!("state directory {} cannot be written: {e}", paths.home.display()),
            "make it writable (remount read-write, free space), or set AGENTS_HOME to a directory that is",
        );
    }
    state_entries(report, paths);
    if let Err(e) = paths.trust_socket_dir() {
        report.bad(
            e,
            "remove that folder if it is yours to remove, or set AGENTS_HOME to a shorter path",
        );
    }
    if paths.socket_dir().is_none()
        && let Some(dir) = paths.daemon_socket().parent()
        && let Ok(m) = std::fs::metadata(dir)
        && m.uid() != nix::unistd::geteuid().as_raw()
    {
        report.bad(
            format!(
                "socket directory {} belongs to another user (uid {}): a daemon there is not yours",
                dir.display(),
                m.uid()
            ),
            "set AGENTS_HOME to a directory of your own (or remove that one, if it is yours to remove)",
        );
    }
    match paths.socket_dir() {
        Some(dir) => report.ok(format!(
            "AGENTS_HOME is too deep for Unix socket paths; sockets live in {}",
            dir.display()
        )),
        None => report.ok(format!("daemon socket {}", paths.daemon_socket().display())),
    }
}

/// The state directory's own entries, each of the kind agents makes: a
/// `runs` that is a file or a `daemon.lock` that is a folder stops every
/// command.
fn state_entries(report: &mut Report, paths: &Paths) {
    let home = &paths.home;
    let entries = [
        (home.join("runs"), true),
        (paths.daemon_lock(), false),
        (paths.daemon_pid(), false),
        (paths.daemon_log(), false),
        (paths.proof_key(), false),
    ];
    for (path, folder) in entries {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let right = match folder {
            true => meta.is_dir(),
            false => meta.is_file(),
        };
        if !right {
            let kind = if folder { "a folder" } else { "a regular file" };
            report.bad(
                format!("{} is not {kind}, which agents needs it to be", path.display()),
                &format!("move {} aside (agents makes it anew)", path.display()),
            );
        }
    }
}

/// The space left where the state directory is: a full disk pauses and
/// then fails the runs writing their logs.
// statvfs's counts are 32 bits wide on some targets.
#[allow(clippy::unnecessary_cast)]
fn disk(report: &mut Report, paths: &Paths) {
    let Ok(fs) = nix::sys::statvfs::statvfs(&paths.home) else {
        return;
    };
    let block = fs.fragment_size() as u64;
    let (free, total) = (fs.blocks_available() as u64 * block, fs.blocks() as u64 * block);
    let mib = |bytes: u64| bytes / (1 << 20);
    // Less than 5% free, or than 64 MiB on a large disk.
    let little = free < (total / 20).min(64 << 20);
    let what = format!(
        "disk of the state directory: {} MiB free of {} MiB",
        mib(free),
        mib(total)
    );
    match little {
        true => report.bad(
            format!("{what}: runs writing their logs will pause, then fail"),
            "free space there: agents rm --ended (ended runs and their logs), or [retention] in config.toml",
        ),
        false => report.ok(what),
    }
}

/// The daemon, if one runs: its build and its supervisors'.
async fn daemon(report: &mut Report, paths: &Paths) {
    match Client::connect_existing(paths, false).await {
        Ok(client) => match client.call::<method::DaemonStatus>(crate::api::NoParams).await {
            Ok(s) => {
                report.ok(format!(
                    "daemon running (pid {}, version {}, {}), {} live run(s)",
                    s.pid, s.version, s.exe, s.live_runs
                ));
                for b in &s.supervisors {
                    // A supervisor of a replaced build keeps its run; the
                    // daemon speaks the versioned protocol to it.
                    let older = if b.exe.ends_with(" (deleted)") {
                        " (an earlier build of this file, still served)"
                    } else {
                        ""
                    };
                    say!("info     {} run(s) supervised by {}{older}", b.runs, b.exe);
                }
                for u in &s.unknown {
                    say!(
                        "warning  the daemon heard {} {} time(s) and does not know it: a newer build's? (`agents daemon stop` lets the next command start the newest)",
                        u.what,
                        u.count
                    );
                }
                limits(report, s.pid, s.live_runs);
                retention(&client).await;
            }
            Err(e) => report.bad(
                format!("daemon answered with an error: {e}"),
                "agents daemon stop; agents daemon start",
            ),
        },
        Err(e) if e.code == crate::api::ErrorCode::VersionMismatch => {
            report.bad(e.message.clone(), "agents daemon stop, then run any agents command")
        }
        Err(e) if e.code == crate::api::ErrorCode::DaemonNotAnswering => report.bad(
            e.message.clone(),
            "kill -CONT the pid if it was stopped; else kill it and run any agents command (runs go on)",
        ),
        Err(_) => report.ok("daemon not running (any agents command starts it)".to_string()),
    }
}

/// Descriptors the daemon holds per live run (its supervisor's socket, and
/// a few while a run starts or is watched), and tasks (processes and
/// threads) per run under the user's limit: a supervisor's few threads and
/// its agent's own.
const FILES_PER_RUN: u64 = 2;
const TASKS_PER_RUN: u64 = 8;
/// Room for fewer runs than this more is a problem.
const ROOM_FOR: u64 = 100;

/// The daemon's open-files and the user's process limits against what the
/// live runs hold, with the room left in runs.
fn limits(report: &mut Report, daemon: u32, live_runs: usize) {
    let limits = std::fs::read_to_string(format!("/proc/{daemon}/limits")).unwrap_or_default();
    if let Some(max) = soft_limit(&limits, "Max open files") {
        let open = std::fs::read_dir(format!("/proc/{daemon}/fd")).map_or(0, |d| d.count() as u64);
        let room = max.saturating_sub(open) / FILES_PER_RUN;
        let what = format!(
            "open files: the daemon holds {open} of its {max} with {live_runs} live run(s): room for about {room} more runs"
        );
        match room < ROOM_FOR {
            true => report.bad(
                what,
                "raise the hard limit where the daemon starts (`ulimit -Hn 65536`, or LimitNOFILE= in its unit), then `agents daemon stop`: the next command starts it again",
            ),
            false => report.ok(what),
        }
    }
    ptys(report);
    if let Some(max) = soft_limit(&limits, "Max processes") {
        let tasks = user_tasks();
        let room = max.saturating_sub(tasks) / TASKS_PER_RUN;
        let what = format!(
            "processes: this user has {tasks} of {max} (processes and threads) with {live_runs} live run(s): room for about {room} more runs"
        );
        match room < ROOM_FOR && !nix::unistd::geteuid().is_root() {
            true => report.bad(
                what,
                "raise the limit (`ulimit -u`, nproc in /etc/security/limits.conf, or TasksMax= for a systemd unit), then `agents daemon stop`",
            ),
            false => report.ok(what),
        }
    }
}

/// The machine's PTYs: each run holds one, and Linux allows 4 096 by
/// default (`kernel.pty.max`), fewer in a container.
fn ptys(report: &mut Report) {
    let read = |name: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/proc/sys/kernel/pty/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let (Some(max), Some(used)) = (read("max"), read("nr")) else {
        return;
    };
    let room = max.saturating_sub(used);
    let what = format!("PTYs: {used} of the machine's {max} in use: room for about {room} more runs");
    match room < ROOM_FOR {
        true => report.bad(
            what,
            "raise kernel.pty.max (`sysctl -w kernel.pty.max=65536`, and in /etc/sysctl.d/)",
        ),
        false => report.ok(what),
    }
}

/// A soft limit from `/proc/PID/limits`; none when unlimited or unread.
fn soft_limit(limits: &str, name: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The processes and threads of this user, as its process limit counts them.
fn user_tasks() -> u64 {
    let uid = nix::unistd::getuid().as_raw();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .filter(|status| field(status, "Uid:") == Some(uid as u64))
        .filter_map(|status| field(&status, "Threads:"))
        .sum()
}

/// The first number after `name` in a `/proc/PID/status`.
fn field(status: &str, name: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The database: there, of a schema this build knows, whole.
fn database(report: &mut Report, paths: &Paths) {
    if let Some(runs) = paths.lost_database() {
        report.bad(
            format!(
                "{} is empty but {runs} run folder(s) exist: their records were lost",
                paths.db().display()
            ),
            "restore agents.db from a backup; their output logs are still in runs/",
        );
    }
    if paths.db().exists() {
        match crate::store::open_connection(&paths.db()).and_then(|c| {
            let v: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let check: String = c.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
            Ok((v, check))
        }) {
            Ok((v, check)) if v <= crate::store::LATEST_VERSION && check == "ok" => {
                report.ok(format!("database {} (schema {v}, integrity ok)", paths.db().display()))
            }
            Ok((v, _)) if v > crate::store::LATEST_VERSION => report.bad(
                format!(
                    "database schema {v} is newer than this agents ({})",
                    crate::store::LATEST_VERSION
                ),
                "install the newer agents that wrote it",
            ),
            Ok((_, check)) => report.bad(
                format!("database integrity: {check}"),
                "restore agents.db from a backup",
            ),
            Err(e) if is_not_a_database(&e) => report.bad(
                format!("database {}: {e}", paths.db().display()),
                "move agents.db aside and restore a backup; without one, agents starts a new database (run output stays in runs/)",
            ),
            Err(e) => report.bad(format!("database: {e}"), "check the file's permissions"),
        }
    } else {
        report.ok("database not created yet".to_string());
    }
}

/// The config file, its keys, and the user's own screen rules.
fn config(report: &mut Report, paths: &Paths) {
    // As the daemon reads it: with the last valid revision it kept.
    let config = crate::config::ConfigWatch::reading(paths);
    match (&config.problem, config.path()) {
        (Some(problem), _) => report.bad(
            problem.clone(),
            "fix the file; the last valid config stays in use meanwhile",
        ),
        (None, Some(p)) if p.exists() => report.ok(format!("config {}", p.display())),
        (None, _) => report.ok("no config file (built-in defaults)".to_string()),
    }
    if let Ok(keymap) = crate::tui::keymap::Keymap::from_config(&config.current.keys)
        && !keymap.shadowed.is_empty()
    {
        report.bad(
            format!("config [keys]: a key with two actions: {}", keymap.shadowed.join("; ")),
            "give each key one action in [keys] (an action's keys replace its defaults)",
        );
    }

    let (rules, faults) = user_screen_rules(paths);
    if let Some(rules) = rules {
        report.ok(rules);
    }
    for fault in faults {
        report.bad(
            format!("screen rules {fault}"),
            "fix the file (its format: src/harness/screens/README.md); runs read the others meanwhile",
        );
    }
}

/// The shell, git, and each agent CLI: where, which version, and the
/// credentials a run of it would see.
fn binaries(report: &mut Report) {
    let path = std::env::var("PATH").ok();
    let shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
    let tools = [
        (
            "shell harness",
            shell.clone(),
            "set SHELL to an installed shell".to_string(),
        ),
        ("git (for --worktree)", "git".into(), "install git".into()),
    ];
    // Every agent family built in, with how to install it.
    let agents = crate::harness::KNOWN.iter().filter_map(|family| {
        let d = crate::harness::adapter_for(family)?.description();
        (!d.install.is_empty()).then(|| {
            (
                d.family,
                d.program.to_string(),
                format!("{} to run {family} agents", d.install),
            )
        })
    });
    for (what, bin, fix) in tools.into_iter().chain(agents) {
        let (bin, fix) = (bin.as_str(), fix.as_str());
        let agent = crate::harness::adapter_for(what).is_some();
        match crate::harness::find_binary(bin, path.as_deref()) {
            Some(p) if agent => {
                let version = crate::harness::version::version_of(&p).unwrap_or_else(|| "version unknown".into());
                report.ok(format!("{what} {version}: {}", p.display()));
                say!("info     {what}: {}", credentials(what));
                if let Some(verified) = crate::harness::version::newer_than_verified(what, &version) {
                    say!(
                        "info     {what} {version} is newer than {verified}, the newest agents was verified with: \
                         its status may misread a new wording until its screen rules are updated \
                         (~/.config/agents/screens/{what}.toml overrides them)"
                    );
                }
            }
            Some(p) => report.ok(format!("{what}: {}", p.display())),
            None if agent => say!("info     {what}: not installed ({fix})"),
            None => report.bad(format!("{what}: {bin} not found"), fix),
        }
    }
}

/// Each family `[harnesses.NAME]` declares: its program found, its
/// screen rules, where its sessions are read from, and whether it may be
/// boxed.
fn declared_families(report: &mut Report) {
    let path = std::env::var("PATH").ok();
    let screens = Paths::screen_rules_dir();
    for name in crate::harness::user::installed_names() {
        let Some(family) = crate::harness::user::installed(&name) else {
            continue;
        };
        let def = family.declared();
        match crate::harness::find_binary(&def.binary, path.as_deref()) {
            Some(p) => {
                let version = match crate::harness::Adapter::has_version(family) {
                    true => crate::harness::version::version_of(&p).unwrap_or_else(|| "version unknown".into()),
                    false => "(version = false: not asked)".into(),
                };
                report.ok(format!("{name} (declared in config.toml) {version}: {}", p.display()));
            }
            None => report.bad(
                format!("{name} (declared in config.toml): {} not found", def.binary),
                &format!("install it, or set [harnesses.{name}] binary to its path"),
            ),
        }
        let rules = screens.as_ref().map(|d| d.join(format!("{name}.toml")));
        match rules.filter(|r| r.is_file()) {
            Some(file) => say!("info     {name}: screen rules {}", file.display()),
            None => say!(
                "info     {name}: no screen rules: its questions are not seen (add screens/{name}.toml, the format of the built-in ones)"
            ),
        }
        let sessions = match (&def.sessions, &def.transcript) {
            (Some(at), Some(format)) => format!("sessions {at}, read as {format}'s"),
            (Some(at), None) => format!("sessions {at}, linked and resumed, not read"),
            (None, _) => "keeps no sessions agents can see".into(),
        };
        let boxed = if def.sandbox_ready {
            "may be boxed"
        } else {
            "not sandbox-ready: --sandbox refused"
        };
        say!("info     {name}: {sessions}; {boxed}");
    }
}

/// The user's own screen rules: a line naming the files that read (none
/// without any), and one per file that does not.
fn user_screen_rules(paths: &Paths) -> (Option<String>, Vec<String>) {
    let Some(dir) = Paths::screen_rules_dir() else {
        return (None, Vec::new());
    };
    let kept = crate::harness::screen_rules::Kept {
        dir: &paths.kept_screen_rules(),
        keeps: false,
    };
    let (files, faults) = crate::harness::screen_rules::read_user_files_kept(&dir, kept);
    // The files that read as they are now: a kept revision is its fault's.
    let faulted = |family: &str| faults.iter().any(|f| f.family.as_deref() == Some(family));
    let names: Vec<&str> = files
        .iter()
        .map(|(family, _)| family.as_str())
        .filter(|f| !faulted(f))
        .collect();
    let line = (!names.is_empty()).then(|| format!("screen rules in {}: {}", dir.display(), names.join(", ")));
    (line, faults.into_iter().map(|f| f.says).collect())
}

/// What a run of `family` started from this shell would log in with: the
/// credential variables of the harness's set here (names only, values
/// never shown), else its own login file, else a plain word that its runs
/// will not be logged in. Its other variables are counted.
fn credentials(family: &str) -> String {
    let env: Vec<(String, String)> = std::env::vars().collect();
    let cwd = std::env::current_dir().unwrap_or_default();
    let names = crate::harness::harness_env_names(family, &Default::default(), &env, &cwd);
    let (keys, others): (Vec<&String>, Vec<&String>) = names
        .iter()
        .partition(|n| crate::harness::credentials::is_credential(n));
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
    };
    let config_home = crate::harness::adapter_for(family)
        .and_then(|a| a.config_home_var())
        .and_then(var);
    let login = crate::harness::credentials::login_file(family, config_home.as_deref(), var("HOME").as_deref());
    let shown = |f: &std::path::Path| super::print::home_relative(&f.to_string_lossy());
    let mut said = match (&login, keys.is_empty()) {
        (_, false) => format!(
            "runs get {} from this environment",
            keys.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
        ),
        (Some(file), true) if file.exists() => format!("runs use its own login in {}", shown(file)),
        (Some(file), true) => format!(
            "no key variable set and no {}: its runs will say they are not logged in",
            shown(file)
        ),
        (None, true) => format!(
            "no key variable set ({}): its runs need one, or a key in its own config",
            key_names(family)
        ),
    };
    if !others.is_empty() {
        let others: Vec<&str> = others.iter().map(|n| n.as_str()).collect();
        said.push_str(&format!(" (runs also get {} from this environment)", others.join(", ")));
    }
    let gap = crate::harness::credentials::setup_gap(family, config_home.as_deref(), var("HOME").as_deref());
    if let Some(gap) = gap {
        said.push_str(&format!("; {gap}"));
    }
    said
}

/// The key variables `family` reads, the first few by name: what to set.
fn key_names(family: &str) -> String {
    const SHOWN: usize = 4;
    let Some(env) = crate::harness::adapter_for(family).map(|a| a.description().env) else {
        return "it reads none".into();
    };
    let named = env.shared.iter().chain(env.names).copied();
    let keys: Vec<String> = named
        .filter(|n| crate::harness::credentials::is_credential(n))
        .map(str::to_string)
        .chain(env.prefixes.iter().map(|p| format!("{p}*")))
        .collect();
    match keys.len() {
        0 => "it reads none".into(),
        n if n > SHOWN => format!("it reads {}, …", keys[..SHOWN].join(", ")),
        _ => format!("it reads {}", keys.join(", ")),
    }
}

/// Whether a file can be created in `dir` (a read-only mount, a full disk,
/// another owner's directory say no).
/// The disk the state directory uses and what `[retention]` would prune
/// now (a daemon of a build before retention says nothing).
async fn retention(client: &Client) {
    let Ok(r) = client.call::<method::RetentionPlan>(crate::api::NoParams).await else {
        return;
    };
    let size = crate::cli::print::size;
    say!(
        "info     the state directory uses {}, runs' output logs {}",
        size(r.home_bytes),
        size(r.logs_bytes)
    );
    let limits = [
        (r.keep_days > 0).then(|| format!("keep_days = {}", r.keep_days)),
        r.max_log_bytes.map(|b| format!("max_log_bytes = {b}")),
        r.max_total_bytes.map(|b| format!("max_total_bytes = {b}")),
    ];
    let limits: Vec<String> = limits.into_iter().flatten().collect();
    let policy = match limits.is_empty() {
        true => "keeps every log".to_string(),
        false => limits.join(", "),
    };
    match r.would_prune.len() {
        0 => say!("info     retention ({policy}) would prune nothing now"),
        n => {
            let bytes: u64 = r.would_prune.iter().map(|p| p.bytes).sum();
            say!("info     retention ({policy}) would prune {n} log(s), {}:", size(bytes));
            for p in &r.would_prune {
                say!("           {} ({}): {}", p.name, size(p.bytes), p.reason);
            }
        }
    }
}

fn writable(dir: &std::path::Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// SQLite's word for a file that is not one of its databases (malformed,
/// truncated, overwritten).
fn is_not_a_database(e: &impl std::fmt::Display) -> bool {
    let text = e.to_string();
    text.contains("not a database") || text.contains("malformed")
}
