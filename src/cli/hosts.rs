//! `agents hosts …` and `agents serve --stdio`: clap definitions and the
//! verbs, each a client of the tool table.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;

use crate::api::{
    HostAddParams, HostCheck, HostInstallResult, HostRecord, HostRef, HostTrustParams, HostTrustResult, method,
};
use crate::client::Client;
use crate::paths::Paths;

#[derive(Subcommand, Debug)]
pub enum HostsCommand {
    /// Name a machine reached over SSH (user@host[:port] or an ~/.ssh/config alias).
    Add {
        /// What to call the host here (`agents run --host NAME`).
        name: String,
        /// Where ssh reaches it: user@host[:port] or an ~/.ssh/config alias.
        #[arg(
            value_name = "SSH-TARGET",
            required_unless_present = "command",
            conflicts_with = "command"
        )]
        target: Option<String>,
        /// Reach it by running CMD here instead of SSH, words split as a shell
        /// would: each command there runs as `CMD sh -c LINE`
        /// (--command 'docker exec -i devbox').
        #[arg(long, value_name = "CMD")]
        command: Option<String>,
        /// CMD takes the command for the host as one line for a shell there,
        /// as ssh does (--command 'gcloud compute ssh vm-1 --').
        #[arg(long, requires = "command")]
        shell_line: bool,
        /// The agents binary on the host (default: agents in the remote PATH).
        #[arg(long, value_name = "PATH")]
        remote_bin: Option<String>,
        /// AGENTS_HOME on the host.
        #[arg(long, value_name = "DIR")]
        remote_home: Option<String>,
    },
    /// List hosts with their link state and latency.
    Ls {
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Forget a host (refused while it has live runs).
    Rm {
        /// The host's name, as `agents hosts add` gave it.
        name: String,
    },
    /// Connect, run the remote `agents --version`, reach the remote daemon; say what is missing.
    Check {
        /// The host's name, as `agents hosts add` gave it.
        name: String,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Copy this agents binary to the host (same OS and architecture), verify it, and use it there.
    Install {
        /// The host's name, as `agents hosts add` gave it.
        name: String,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Accept the key the host offers now into ~/.ssh/known_hosts (never replaces a changed key).
    Trust {
        /// The host's name, as `agents hosts add` gave it.
        name: String,
        /// Refuse unless the offered key has this fingerprint (SHA256:…).
        #[arg(long)]
        fingerprint: Option<String>,
    },
    /// What `hosts install` runs on the host with the binary it just
    /// verified: point BASE/current at the complete directory BASE/LEAF
    /// with one rename(2) (portable; `mv -T` is GNU only).
    #[command(hide = true)]
    SwitchCurrent { base: PathBuf, leaf: String },
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Bridge the protocol on stdin/stdout to this host's daemon.
    #[arg(long, required = true)]
    pub stdio: bool,
    /// The state directory (default: AGENTS_HOME or the usual one).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
}

/// `agents serve --stdio`.
pub async fn serve(paths: &Paths, args: ServeArgs) -> Result<i32> {
    let paths = match args.home {
        Some(home) => Paths::at(home),
        None => paths.clone(),
    };
    crate::remote::serve::main(&paths).await
}

pub async fn hosts(paths: &Paths, command: HostsCommand) -> Result<i32> {
    if let HostsCommand::SwitchCurrent { base, leaf } = &command {
        // Runs on the host, with no daemon of its own to ask.
        let exe = crate::remote::install::switch_current(base, leaf)?;
        say!("{}{}", crate::remote::install::EXE_TAG, exe.display());
        return Ok(0);
    }
    let client = Client::connect(paths, false).await?;
    match command {
        HostsCommand::Add {
            name,
            target,
            command,
            shell_line,
            remote_bin,
            remote_home,
        } => {
            let command = command
                .map(|c| shell_words::split(&c).map_err(|e| anyhow::anyhow!("--command: {e}")))
                .transpose()?;
            let host: HostRecord = client
                .call::<method::HostsAdd>(HostAddParams {
                    name,
                    target: target.unwrap_or_default(),
                    command,
                    shell_line,
                    remote_bin,
                    remote_home,
                })
                .await?;
            say!(
                "added host {} ({}); check it with: agents hosts check {}",
                host.name,
                reached_by(&host),
                host.name
            );
            Ok(0)
        }
        HostsCommand::Ls { json } => {
            let hosts: Vec<HostRecord> = client.call::<method::HostsList>(crate::api::NoParams).await?;
            if json {
                super::print::out(&format!("{}\n", serde_json::to_string_pretty(&hosts)?));
            } else if hosts.is_empty() {
                say!("no hosts; add one with: agents hosts add NAME user@host");
            } else {
                super::print::out(&crate::text::inert(&table(&hosts)));
            }
            Ok(0)
        }
        HostsCommand::Rm { name } => {
            client.call::<method::HostsRm>(HostRef { name: name.clone() }).await?;
            say!("removed host {name}");
            Ok(0)
        }
        HostsCommand::Check { name, json } => {
            let check: HostCheck = client.call::<method::HostsCheck>(HostRef { name }).await?;
            if json {
                super::print::out(&format!("{}\n", serde_json::to_string_pretty(&check)?));
            } else {
                super::print::out(&crate::text::inert(&check_report(&check)));
            }
            Ok(if check.ok { 0 } else { 1 })
        }
        HostsCommand::Install { name, json } => {
            let done: HostInstallResult = client.call::<method::HostsInstall>(HostRef { name }).await?;
            if json {
                super::print::out(&format!("{}\n", serde_json::to_string_pretty(&done)?));
            } else {
                say_installed(&done);
            }
            Ok(0)
        }
        HostsCommand::SwitchCurrent { .. } => unreachable!("handled before connecting"),
        HostsCommand::Trust { name, fingerprint } => {
            let trusted: HostTrustResult = client
                .call::<method::HostsTrust>(HostTrustParams { name, fingerprint })
                .await?;
            say_trusted(&trusted);
            Ok(0)
        }
    }
}

/// What `hosts install` did, in words.
fn say_installed(done: &HostInstallResult) {
    let sha = &done.sha256[..done.sha256.len().min(12)];
    if done.installed {
        say!(
            "installed {} (sha256 {sha}…, {} MiB) on {} at {}",
            done.version,
            done.bytes.div_ceil(1 << 20),
            done.name,
            done.path
        );
    } else {
        say!(
            "{} (sha256 {sha}…) is already installed on {} at {}; nothing copied",
            done.version,
            done.name,
            done.path
        );
    }
    if done.remote_bin_changed {
        say!("host {} now runs {}", done.name, done.remote_bin);
    } else if done.remote_bin != done.current {
        say!(
            "host {} keeps its --remote-bin {}; to run this copy, add the host again with --remote-bin {}",
            done.name,
            done.remote_bin,
            done.current
        );
    }
    if let (true, Some(old), Some(new)) = (done.daemon_restarted, done.previous_daemon_pid, done.daemon_pid) {
        say!(
            "restarted the daemon on {} on this build (pid {old} → {new}); its {} live run(s) carry on",
            done.name,
            done.daemon_live_runs.unwrap_or(0)
        );
    }
    if let Some(problem) = &done.daemon_problem {
        say!("the daemon on {}: {problem}", done.name);
    }
}

/// What `hosts trust` did, in words.
fn say_trusted(trusted: &HostTrustResult) {
    if trusted.added {
        say!(
            "trusted {} for host {}: added {} to {}",
            trusted.host_key,
            trusted.name,
            trusted.entry,
            trusted.known_hosts
        );
    } else {
        say!(
            "{} of host {} is already known ({})",
            trusted.host_key,
            trusted.name,
            trusted.known_hosts
        );
    }
}

/// The SSH target, or `$ CMD` for a host reached by a command.
fn reached_by(host: &HostRecord) -> String {
    match &host.command {
        Some(words) => format!("$ {}", shell_words::join(words)),
        None => host.target.clone(),
    }
}

fn table(hosts: &[HostRecord]) -> String {
    let mut rows = vec![[
        "NAME".to_string(),
        "TARGET".into(),
        "LINK".into(),
        "SINCE".into(),
        "LATENCY".into(),
        "RUNS".into(),
        "VERSION".into(),
    ]];
    for h in hosts {
        rows.push([
            h.name.clone(),
            reached_by(h),
            h.link.clone(),
            h.since.as_deref().map(ago).unwrap_or_else(|| "-".into()),
            h.latency_ms.map(|ms| format!("{ms}ms")).unwrap_or_else(|| "-".into()),
            h.live_runs.to_string(),
            h.remote_version.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    let mut widths = [0usize; 7];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let line: Vec<String> = row.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    for h in hosts {
        if let Some(error) = &h.error {
            let flat = error.split_whitespace().collect::<Vec<_>>().join(" ");
            out.push_str(&format!("{}: {}\n", h.name, crate::text::bounded(&flat, 400)));
        }
    }
    out
}

/// "12s ago", "4m ago": how long a link has been in its state.
fn ago(rfc3339: &str) -> String {
    let Ok(at) = humantime::parse_rfc3339(rfc3339) else {
        return "-".into();
    };
    let secs = std::time::SystemTime::now()
        .duration_since(at)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    match secs {
        s if s < 120 => format!("{s}s ago"),
        s if s < 7200 => format!("{}m ago", s / 60),
        s => format!("{}h ago", s / 3600),
    }
}

fn check_report(c: &HostCheck) -> String {
    let mut out = String::new();
    out.push_str(&format!("host      {} ({})\n", c.name, c.address));
    out.push_str(&format!("host key  {}\n", c.host_key));
    out.push_str(&format!(
        "agents    {} → {}\n",
        c.remote_bin,
        c.remote_version.as_deref().unwrap_or("missing")
    ));
    match &c.remote_daemon {
        Some(d) => out.push_str(&format!(
            "daemon    pid {} version {} home {} ({} live runs){}\n",
            d.pid,
            d.version,
            d.home,
            d.live_runs,
            c.latency_ms
                .map(|ms| format!(", {ms}ms round trip"))
                .unwrap_or_default()
        )),
        None => out.push_str("daemon    not reached\n"),
    }
    for p in &c.problems {
        out.push_str(&format!("problem   {p}\n"));
    }
    out.push_str(if c.ok {
        "ok: runs can be placed on this host\n"
    } else {
        "not ready: runs placed on this host would be blocked\n"
    });
    out
}

/// `--cwd` of `agents run --host`: a path on the host, sent as given (not
/// made absolute here, where it means nothing); the daemon maps it.
pub fn remote_cwd(cwd: Option<&std::path::Path>) -> Result<String> {
    match cwd {
        None => Ok(String::new()),
        Some(p) => match p.to_str() {
            Some(s) => Ok(s.to_string()),
            None => Err(crate::cli::refused("--cwd for a remote host must be valid UTF-8")),
        },
    }
}
