//! Each verb: connect to the daemon, call the tool table, print.

use anyhow::{Context, Result, bail};

use super::{Cli, Command, DaemonCommand, RunArgs, RunsCommand, SessionsCommand, attach, print};
use crate::api::{
    DaemonStatus, RunDetail, RunRecord, RunRef, RunSpec, RunState, SendParams, SendResult, StartParams, WaitParams,
    method,
};
use crate::client::Client;
use crate::paths::Paths;

pub fn dispatch(cli: Cli) -> Result<i32> {
    // Before anything that could fail: a hook always exits 0.
    if let Some(Command::Hook { words }) = &cli.command {
        return Ok(super::hook::main(words));
    }
    let paths = Paths::from_env()?;
    let Some(command) = cli.command else {
        return runtime()?.block_on(crate::tui::main(paths));
    };
    match command {
        Command::Supervise => {
            // stderr is the run's supervise.log.
            init_daemon_logging();
            crate::supervise::main(paths)
        }
        Command::DemoAgent(args) => crate::harness::demo::run(&args),
        Command::Daemon {
            command: Some(DaemonCommand::Run { ready }),
        } => {
            let ready = ready.then(|| {
                use std::os::fd::AsFd;
                std::io::stdout()
                    .as_fd()
                    .try_clone_to_owned()
                    .map(std::fs::File::from)
                    .ok()
            });
            init_daemon_logging();
            crate::daemon::main(paths, ready.flatten())
        }
        other => runtime()?.block_on(client_command(paths, other)),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the client runtime")
}

fn init_daemon_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("AGENTS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        // A log line that cannot be written (full disk) must never take the
        // daemon or a supervisor down with it.
        .log_internal_errors(false)
        .try_init();
}

async fn client_command(paths: Paths, command: Command) -> Result<i32> {
    match command {
        Command::Run(args) => run(&paths, args).await,
        Command::Ls(args)
        | Command::Runs {
            command: RunsCommand::List(args),
        } => ls(&paths, args).await,
        Command::Explain { run, json } => explain(&paths, run, json).await,
        Command::Show { run, json, tree: true } => super::lineage::tree(&paths, run, json).await,
        Command::Show { run, json, .. } => show(&paths, run, json).await,
        Command::Attach { run } => attach::attach(&paths, &run, attach::Kept::LastScreen).await,
        Command::Send { run, text, id, json } => send(&paths, run, text, id, json).await,
        Command::Sessions { command } => sessions(&paths, command).await,
        Command::Answer {
            run,
            answer,
            request,
            json,
        } => answer_run(&paths, run, answer, request, json).await,
        Command::Cancel(args) => super::cancel::cancel(&paths, args).await,
        Command::Rename { run, name } => rename(&paths, run, name).await,
        Command::Wait {
            run,
            json,
            timeout,
            children,
        } => wait(&paths, run, json, timeout, children).await,
        Command::Diff { run, stat, json } => super::worktree::diff(&paths, run, stat, json).await,
        Command::Merge { run, squash } => super::worktree::merge(&paths, run, squash).await,
        Command::Mail { command } => super::mail::mail(&paths, command).await,
        Command::Prompts { command } => super::prompts::prompts(&paths, command).await,
        Command::Rm(args) => super::removal::rm(&paths, args).await,
        Command::Routines { command } => super::routines::routines(&paths, command).await,
        Command::Team { command } => super::teams::team(&paths, command).await,
        Command::Worktree { command } => super::worktree::worktree(&paths, command).await,
        Command::Logs { run, follow, raw } => attach::logs(&paths, &run, follow, raw).await,
        Command::Export { run, cast } => attach::export_cast(&paths, &run, &cast).await,
        Command::Daemon { command } => daemon_command(&paths, command).await,
        Command::Doctor => super::attach::doctor(&paths).await,
        Command::Hosts { command } => super::hosts::hosts(&paths, command).await,
        Command::Serve(args) => super::hosts::serve(&paths, args).await,
        Command::Transcript { id, follow, json } => super::transcript::transcript(&paths, id, follow, json).await,
        Command::Search {
            words,
            within,
            raw,
            json,
        } => super::transcript::search(&paths, words, within, raw, json).await,
        Command::Demo => demo(&paths).await,
        Command::Mcp => crate::mcp::serve(&paths).await,
        Command::Web(args) => super::web::web(&paths, args).await,
        Command::Supervise | Command::DemoAgent(_) | Command::Hook { .. } => {
            unreachable!("handled before the runtime starts")
        }
    }
}

/// `agents ls`: every run (live ones unless `--all`), as a table or JSON.
async fn ls(paths: &Paths, args: super::ListArgs) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let picked = args.state.is_some() || args.host.is_some();
    let asked = crate::api::ListParams {
        all: args.all,
        brief: !args.json,
        state: args.state,
        host: args.host,
        ..Default::default()
    };
    if args.json {
        let runs: Vec<crate::api::ListedRun> = client.list_picked(asked).await?;
        crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&runs)?));
        return Ok(0);
    }
    let runs: Vec<crate::api::BriefRun> = client.list_picked(asked).await?;
    if runs.is_empty() {
        match (picked, args.all) {
            (true, _) => say!("no runs match"),
            (false, all) => say!(
                "no {}runs; start one with: agents run demo",
                if all { "" } else { "live " }
            ),
        }
    } else {
        crate::cli::print::out(&crate::text::inert(&print::table(&runs)));
    }
    if !picked
        && !args.all
        && let Some(line) = ended_lately(&client).await
    {
        say!("{}", crate::text::inert(&line));
    }
    Ok(0)
}

/// Under the live runs: those of the newest hundred started that ended in
/// the last ten minutes, the last to end named (a run that failed at once
/// is no longer live, and would otherwise go unseen).
async fn ended_lately(client: &Client) -> Option<String> {
    const LATELY: std::time::Duration = std::time::Duration::from_secs(600);
    const COUNTED: usize = 100;
    let asked = crate::api::ListParams {
        state: Some("ended".into()),
        brief: true,
        ..Default::default()
    };
    let ended: Vec<crate::api::BriefRun> = client.newest(asked, COUNTED).await.ok()?;
    let age = |r: &crate::api::BriefRun| {
        let at = humantime::parse_rfc3339_weak(r.ended_at.as_deref()?).ok()?;
        std::time::SystemTime::now().duration_since(at).ok()
    };
    let mut lately: Vec<_> = ended
        .iter()
        .filter_map(|r| Some((r, age(r)?)))
        .filter(|(_, a)| *a < LATELY)
        .collect();
    lately.sort_by_key(|(_, a)| *a);
    let (last, ago) = lately.first()?;
    let said = format!(
        "{} {} {} ago",
        last.name,
        last.state.as_str().replace('_', " "),
        crate::api::ago(*ago)
    );
    Some(match lately.len() {
        1 => format!("ended lately: {said} (agents ls --all)"),
        n => format!("{n} ended in the last 10 min, the last {said} (agents ls --all)"),
    })
}

/// `agents show RUN`: its record and events.
async fn show(paths: &Paths, run: String, json: bool) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let detail: RunDetail = client.call::<method::RunsShow>(RunRef { run }).await?;
    if json {
        crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&detail)?));
    } else {
        crate::cli::print::out(&crate::text::inert(&print::detail(&detail)));
    }
    Ok(0)
}

/// `agents send RUN TEXT`: typed now, queued, or held, and why.
async fn send(paths: &Paths, run: String, text: String, id: Option<String>, json: bool) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let params = SendParams {
        run,
        text,
        prompt_id: id,
    };
    let sent: SendResult = client.call::<method::RunsSend>(params).await?;
    if json {
        crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&sent)?));
        return Ok(0);
    }
    match &sent.why {
        Some(why) => say!("{}: {why} (prompt {})", sent.state, sent.prompt_id),
        None => say!("{} (prompt {})", sent.state, sent.prompt_id),
    }
    Ok(0)
}

/// `agents answer RUN ANSWER`.
async fn answer_run(paths: &Paths, run: String, answer: String, request: Option<String>, json: bool) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let params = crate::api::AnswerParams {
        run,
        answer,
        answer_id: None,
        request,
    };
    let answered: serde_json::Value = client.call::<method::RunsAnswer>(params).await?;
    match json {
        true => crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&answered)?)),
        false => say!("answered"),
    }
    Ok(0)
}

/// `agents cancel RUN`: asked by the run in whose environment it runs, if
/// any; waits for the end unless `--no-wait`.
/// `agents rename RUN NAME`.
async fn rename(paths: &Paths, run: String, name: String) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    // Its name before, to say what changed (its former names may hold one
    // from an earlier rename).
    let before: RunDetail = client.call::<method::RunsShow>(RunRef { run }).await?;
    let record: RunRecord = client
        .call::<method::RunsRename>(crate::api::RenameParams {
            run: before.run.id.clone(),
            name,
        })
        .await?;
    match before.run.name != record.name {
        true => say!("renamed {} → {} ({})", before.run.name, record.name, record.id),
        false => say!("{} is named {} already", record.id, record.name),
    }
    Ok(0)
}

fn size_arg(size: Option<&str>) -> Result<(Option<u16>, Option<u16>)> {
    match size {
        None => Ok((None, None)),
        Some(s) => {
            let (c, r) = s
                .split_once(['x', 'X'])
                .with_context(|| format!("--size '{s}' is not COLSxROWS"))?;
            let cols = c
                .trim()
                .parse()
                .with_context(|| format!("--size '{s}': bad column count"))?;
            let rows = r
                .trim()
                .parse()
                .with_context(|| format!("--size '{s}': bad row count"))?;
            Ok((Some(rows), Some(cols)))
        }
    }
}

/// `agents explain`: the status, the rule and evidence behind it, and what
/// the clock alone would change it to.
async fn explain(paths: &Paths, run: String, json: bool) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let e: crate::api::StatusExplanation = client.call::<method::RunsExplain>(RunRef { run }).await?;
    if json {
        crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&e)?));
        return Ok(0);
    }
    let ago = |ms: Option<u64>| match ms {
        Some(ms) => format!("  {} ago", crate::cli::print::short_duration(ms)),
        None => String::new(),
    };
    say!("{}: {} — {}", e.name, e.status.as_str(), e.why);
    say!("decided by  {} ({})", e.rule, e.rule_words);
    for seen in &e.evidence {
        say!("{:<11} {}{}", seen.kind, seen.said, ago(seen.age_ms));
    }
    match (&e.next, e.recheck_ms) {
        (Some(next), Some(ms)) => say!(
            "next        in {}, with nothing new: {} ({}: {})",
            crate::cli::print::short_duration(ms),
            next.status.as_str(),
            next.rule,
            next.why
        ),
        _ => say!("next        it holds until new evidence comes"),
    }
    if let Some(prompts) = &e.prompts {
        say!("prompts     {prompts}");
    }
    if let Some(sandbox) = &e.sandbox {
        say!("box         {sandbox}");
    }
    say!("New evidence (a hook, a change on the screen, output) decides at once.");
    Ok(0)
}

/// `agents wait`: exit 0 when the run (or, with `--children`, every
/// child) succeeded, 1 when not, 124 when SECS passed first.
async fn wait(paths: &Paths, run: String, json: bool, timeout: Option<u64>, children: bool) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let reference = RunRef { run: run.clone() };
    let waiting = async {
        match children {
            true => client.call::<method::RunsWaitChildren>(reference).await,
            false => client
                .call::<method::RunsWait>(WaitParams::taking(run.clone()))
                .await
                .map(|run| crate::api::ChildrenOutcome {
                    run,
                    children: Vec::new(),
                }),
        }
    };
    let outcome = match timeout {
        None => waiting.await?,
        Some(secs) => match tokio::time::timeout(std::time::Duration::from_secs(secs), waiting).await {
            Ok(outcome) => outcome?,
            Err(_) => {
                match children {
                    true => say_err!("agents: the children of run {run} have not all ended after {secs}s"),
                    false => say_err!("agents: run {run} has not ended after {secs}s"),
                }
                return Ok(124);
            }
        },
    };
    let ended = match children {
        true => outcome.children.clone(),
        false => vec![outcome.run.clone()],
    };
    match (json, children) {
        (true, true) => crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&outcome)?)),
        (true, false) => crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&outcome.run)?)),
        (false, _) if ended.is_empty() => say!("{} has no children", outcome.run.name),
        (false, _) => {
            for r in &ended {
                say!("{} {}: {}", r.name, r.state.as_str(), r.reason.as_deref().unwrap_or(""));
            }
        }
    }
    Ok(if ended.iter().all(|r| r.state == RunState::Succeeded) {
        0
    } else {
        1
    })
}

async fn run(paths: &Paths, args: RunArgs) -> Result<i32> {
    // The daemon starts it by the last valid config: say so when the file
    // is not that one.
    if let Some(problem) = crate::config::ConfigWatch::reading(paths).problem {
        say_err!("agents: warning: {problem}");
    }
    let remote = args.host.clone().filter(|h| h != "local");
    let cwd = match (&remote, &args.cwd) {
        // A path on the remote host, mapped there (docs/design.md §4: explicit cwd mapping).
        (Some(_), cwd) => std::path::PathBuf::from(super::hosts::remote_cwd(cwd.as_deref())?),
        (None, Some(dir)) => std::path::absolute(dir)?,
        (None, None) => std::env::current_dir().context("reading the current directory")?,
    };
    let (rows, cols) = size_arg(args.size.as_deref())?;
    let params = StartParams {
        spec: RunSpec {
            harness: args.harness,
            args: args.args,
            name: args.name,
            cwd: crate::text::path_text(&cwd).map_err(anyhow::Error::msg)?.to_string(),
            detached: args.detached,
            timeout_secs: args.timeout,
            worktree: args.worktree,
            prompt: args.prompt,
            pass_env: args.pass_env,
            host: remote,
            model: args.model,
            sandbox: args.sandbox,
        },
        parent: args.parent,
        rows,
        cols,
        env: std::env::vars().collect(),
        launch_id: None,
        team: None,
        placed: false,
    };
    let client = Client::connect(paths, false).await?;
    let record: RunRecord = client.call::<method::RunsStart>(params).await?;
    let how = Attached {
        background: args.background,
        json: args.json,
    };
    if let Some(code) = handed_back(&record, &how)? {
        return Ok(code);
    }
    drop(client);
    attach::attach(paths, &record.id, attach::Kept::All).await
}

/// A new run handed back without attaching to it: its record as JSON, its
/// id (`background`), or — blocked — its reason as the command's failure.
/// None: attach to it.
fn handed_back(record: &RunRecord, how: &Attached) -> Result<Option<i32>> {
    if how.json {
        crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(record)?));
        return Ok(Some(if record.state == RunState::Blocked { 1 } else { 0 }));
    }
    if how.background {
        say!("{}", record.id);
    }
    if record.state == RunState::Blocked {
        bail!(
            "run {} ({}) blocked: {}",
            record.id,
            record.name,
            record.reason.as_deref().unwrap_or("no reason recorded")
        );
    }
    Ok(how.background.then_some(0))
}

async fn daemon_command(paths: &Paths, command: Option<DaemonCommand>) -> Result<i32> {
    match command.unwrap_or(DaemonCommand::Start) {
        DaemonCommand::Start => {
            let client = Client::connect(paths, false).await?;
            let status: DaemonStatus = client.call::<method::DaemonStatus>(crate::api::NoParams).await?;
            say!("daemon running (pid {}) for {}", status.pid, status.home);
            Ok(0)
        }
        DaemonCommand::Status { json } => match Client::connect_existing(paths, false).await {
            Ok(client) => {
                let status: DaemonStatus = client.call::<method::DaemonStatus>(crate::api::NoParams).await?;
                if json {
                    crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&status)?));
                } else {
                    say!(
                        "daemon running (pid {}, version {}) for {}: {} live run(s), {} client(s)",
                        status.pid,
                        status.version,
                        status.home,
                        status.live_runs,
                        status.clients
                    );
                    if let Some(web) = &status.web {
                        say!("web view at {web} (open it with a device's token: agents web tokens add NAME)");
                    }
                }
                Ok(0)
            }
            Err(e) if e.code == crate::api::ErrorCode::DaemonNotAnswering => Err(e.into()),
            Err(_) => {
                say!("daemon not running for {}", paths.home.display());
                Ok(1)
            }
        },
        DaemonCommand::Stop => match Client::connect_existing(paths, false).await {
            Ok(client) => {
                let status: DaemonStatus = client.call::<method::DaemonStatus>(crate::api::NoParams).await?;
                client.call::<method::DaemonStop>(crate::api::NoParams).await?;
                wait_for_exit(status.pid as i32).await;
                say!(
                    "daemon stopped (pid {}); runs keep going under their supervisors",
                    status.pid
                );
                Ok(0)
            }
            // Running, but not answering (stopped, or stuck): not stopped.
            Err(e) if e.code == crate::api::ErrorCode::DaemonNotAnswering => Err(e.into()),
            Err(_) => {
                say!("daemon not running for {}", paths.home.display());
                Ok(0)
            }
        },
        DaemonCommand::Run { .. } => unreachable!("handled before the runtime starts"),
    }
}

/// Waits until a process is gone (bounded), polling `/proc`: we are not its
/// parent, so there is nothing to wait() on.
async fn wait_for_exit(pid: i32) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A handful of demo agents, one in each interesting state, then the TUI.
async fn demo(paths: &Paths) -> Result<i32> {
    // Demo runs nobody will see are not started.
    crate::tui::need_terminal()?;
    let client = Client::connect(paths, false).await?;
    let cwd = std::env::current_dir()?;
    let cwd = crate::text::path_text(&cwd).map_err(anyhow::Error::msg)?.to_string();
    let suffix = ulid::Ulid::new().to_string()[20..].to_lowercase();
    let start = |name: &str, args: &[&str], prompt: Option<&str>, parent: Option<&str>| StartParams {
        spec: RunSpec {
            harness: "demo".into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            name: Some(format!("{name}-{suffix}")),
            cwd: cwd.clone(),
            prompt: prompt.map(str::to_string),
            ..RunSpec::default()
        },
        env: std::env::vars().collect(),
        parent: parent.map(str::to_string),
        ..StartParams::default()
    };
    let plan: [(&str, &[&str], Option<&str>); 4] = [
        ("worker", &["--think-ms", "6000"], Some("refactor the parser")),
        ("asks", &["--ask"], None),
        ("done", &["--prompt", "say hi", "--exit-after-prompt"], None),
        ("broken", &["--crash"], None),
    ];
    for (name, args, prompt) in plan {
        let _: RunRecord = client
            .call::<method::RunsStart>(start(name, args, prompt, None))
            .await?;
    }
    demo_team(&client, paths, &suffix, &cwd).await?;
    drop(client);
    crate::tui::main(paths.clone()).await
}

/// The demo's team: a leader with two subagents and two members, who
/// have written to each other (the Mail tab).
async fn demo_team(client: &Client, paths: &Paths, suffix: &str, cwd: &str) -> Result<()> {
    let file = r#"
        leader = { name = "lead", harness = "demo", args = ["--subagents", "2", "--think-ms", "3000"], prompt = "split the work" }
        [[members]]
        name = "explore"
        harness = "demo"
        args = ["--think-ms", "2500"]
        prompt = "map the modules"
        [[members]]
        name = "review"
        harness = "demo"
        role = "review what explore finds"
        args = ["--think-ms", "2500"]
        prompt = "read the diff"
    "#;
    let params = crate::api::TeamStartParams {
        team: format!("demo-{suffix}"),
        file: Some(file.into()),
        prompt: None,
        cwd: cwd.into(),
        env: std::env::vars().collect(),
    };
    let team: crate::api::TeamRecord = client.call::<method::TeamsStart>(params).await?;
    let run = |member: &str| {
        team.members
            .iter()
            .find(|m| m.member == member)
            .map(|m| m.run.id.clone())
    };
    let said = [
        ("explore", "lead", "three modules: lexer, grammar, printer"),
        ("lead", "team", "review the lexer first; explore, the grammar next"),
    ];
    let proofs = crate::proof::Proofs::read(&paths.proof_key()).map_err(anyhow::Error::msg)?;
    for (from, to, body) in said {
        let to = match to {
            "team" => "team".to_string(),
            member => run(member).unwrap_or_default(),
        };
        // The demo writes its agents' first letters for them, as they
        // would: from inside their runs, with their proofs.
        let from = run(from);
        let mail = crate::api::MailSendParams {
            to,
            body: body.into(),
            proof: from.as_deref().map(|id| proofs.mint(id)),
            from,
            ..Default::default()
        };
        client.call::<method::MailSend>(mail).await?;
    }
    Ok(())
}

async fn sessions(paths: &Paths, command: SessionsCommand) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    match command {
        SessionsCommand::Show { session, json } => super::lineage::session(&client, session, json).await,
        SessionsCommand::Rm {
            session,
            purge_transcripts,
            json,
        } => super::removal::session_rm(&client, session, purge_transcripts, json).await,
        SessionsCommand::List { json, all } => {
            let list: crate::api::SessionList = client
                .call::<method::SessionsList>(crate::api::SessionsListParams {
                    all,
                    ..Default::default()
                })
                .await?;
            if json {
                crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&list)?));
                return Ok(0);
            }
            if list.sessions.is_empty() && !list.partial {
                say!("no sessions yet: agent harnesses (claude, codex, …) record theirs");
            }
            if !list.sessions.is_empty() {
                let header = ["SESSION", "HARNESS", "RUN", "STATE", "MSGS", "HOST", "CWD"].map(String::from);
                let rows = std::iter::once(header).chain(list.sessions.iter().map(|s| {
                    [
                        s.id.clone(),
                        s.harness.clone(),
                        s.run_name.clone().unwrap_or_else(|| "-".into()),
                        s.run_state.map_or("-", |st| st.as_str()).into(),
                        s.messages.map_or_else(|| "-".into(), |n| n.to_string()),
                        s.host.clone(),
                        s.cwd.clone().unwrap_or_else(|| "-".into()),
                    ]
                }));
                crate::cli::print::out(&crate::cli::print::columns(rows.collect()));
            }
            super::print::unreachable_hosts(&list.hosts_unreachable, "sessions");
            Ok(0)
        }
        SessionsCommand::Resume {
            session,
            background,
            queue,
            json,
            args,
        } => {
            let how = Attached { background, json };
            resume(paths, client, (session, args), how, queue, false).await
        }
        SessionsCommand::Fork {
            session,
            background,
            json,
            args,
        } => {
            let how = Attached { background, json };
            resume(paths, client, (session, args), how, false, true).await
        }
    }
}

/// How a new run is handed back: attached, its id (`background`), or its
/// record as JSON.
struct Attached {
    background: bool,
    json: bool,
}

/// `agents sessions resume|fork SESSION [-- ARGS]`: the new run, attached
/// unless `background`; a resume queued behind the session's live run
/// says so.
async fn resume(
    paths: &Paths,
    client: Client,
    (session, args): (String, Vec<String>),
    how: Attached,
    queue: bool,
    fork: bool,
) -> Result<i32> {
    let params = crate::api::ResumeParams {
        session,
        args,
        env: std::env::vars().collect(),
        launch_id: None,
        placed: false,
        queue,
    };
    let record = match fork {
        true => client.call::<method::SessionsFork>(params).await?,
        false => client.call::<method::SessionsResume>(params).await?,
    };
    if !fork
        && !how.json
        && let Some(line) = super::lineage::reconstructed_notice(&client, &record).await
    {
        say!("{line}");
    }
    if let Some(code) = handed_back(&record, &how)? {
        return Ok(code);
    }
    if record.state == RunState::Pending && queue {
        say!(
            "queued: run {} ({}) resumes the session once the run still in it ends (then: agents attach {})",
            record.name,
            record.id,
            record.name
        );
        return Ok(0);
    }
    drop(client);
    attach::attach(paths, &record.id, attach::Kept::LastScreen).await
}
