//! `agents team`: start a team (a leader and members, each a run), list
//! teams, show one, cancel one whole.

use anyhow::bail;
use clap::Subcommand;

use crate::api::{RunState, TeamRecord, TeamRef, method};
use crate::client::Client;
use crate::paths::Paths;

#[derive(Subcommand, Debug)]
pub enum TeamCommand {
    /// Start a team: `[teams.NAME]` of config.toml, or a TOML file. Attaches
    /// to its leader unless -d.
    Start {
        /// A team of config.toml, or a team file's path.
        team: String,
        /// The task, told to the leader after its own prompt.
        #[arg(long)]
        prompt: Option<String>,
        /// Don't attach: print the leader's run id alone.
        #[arg(short = 'd', long = "background")]
        background: bool,
        /// The team's record as JSON instead of attaching.
        #[arg(long)]
        json: bool,
    },
    /// Teams, newest first, with their members' states.
    Ls {
        /// One JSON array of teams.
        #[arg(long)]
        json: bool,
    },
    /// One team: each member's name, run, state and role.
    Show {
        /// A team: its name, id or id prefix.
        team: String,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Cancel every live member of a team, detached ones included.
    Cancel {
        /// A team: its name, id or id prefix.
        team: String,
        /// SIGKILL at once instead of SIGINT, then SIGTERM, then SIGKILL.
        #[arg(long)]
        force: bool,
    },
}

pub async fn team(paths: &Paths, command: TeamCommand) -> anyhow::Result<i32> {
    let client = Client::connect(paths, false).await?;
    match command {
        TeamCommand::Start {
            team,
            prompt,
            background,
            json,
        } => {
            let params = crate::config::teams::start_request(&team, prompt).map_err(anyhow::Error::msg)?;
            let record: TeamRecord = client.call::<method::TeamsStart>(params).await?;
            let Some(leader) = record.members.first() else {
                bail!("team {} started no leader", record.name);
            };
            if json {
                print_json(&record)?;
            } else if background {
                say!("{}", leader.run.id);
            }
            // A team that did not start whole says why, and fails.
            if let Some(problem) = &record.problem {
                say_err!("team {}: {problem}", record.name);
                return Ok(1);
            }
            if json || background {
                return Ok(0);
            }
            let id = leader.run.id.clone();
            drop(client);
            crate::cli::attach::attach(paths, &id, crate::cli::attach::Kept::All).await
        }
        TeamCommand::Ls { json } => {
            let teams: Vec<TeamRecord> = client.call::<method::TeamsList>(crate::api::NoParams).await?;
            match json {
                true => print_json(&teams)?,
                false => crate::cli::print::out(&list(&teams)),
            }
            Ok(0)
        }
        TeamCommand::Show { team, json } => {
            let record: TeamRecord = client.call::<method::TeamsShow>(TeamRef { team, force: false }).await?;
            match json {
                true => print_json(&record)?,
                false => crate::cli::print::out(&show(&record)),
            }
            Ok(0)
        }
        TeamCommand::Cancel { team, force } => {
            let answer = client.call::<method::TeamsCancel>(TeamRef { team, force }).await?;
            let asked = answer.cancelled.len();
            say!("asked {asked} run(s) to end");
            Ok(0)
        }
    }
}

fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(value)?));
    Ok(())
}

/// One line a team: name, state, members by state, when.
fn list(teams: &[TeamRecord]) -> String {
    if teams.is_empty() {
        return "no teams\n".into();
    }
    let mut out = format!("{:<20}  {:<6}  {:<19}  MEMBERS\n", "TEAM", "STATE", "STARTED");
    for t in teams {
        let members: Vec<String> = t
            .members
            .iter()
            .map(|m| format!("{} {}", m.member, m.run.state.as_str()))
            .collect();
        out.push_str(&format!(
            "{:<20}  {:<6}  {:<19}  {}\n",
            crate::text::inert_line(&t.name),
            t.state,
            t.created_at.get(..19).unwrap_or(&t.created_at).replace('T', " "),
            members.join(", ")
        ));
    }
    out
}

/// A team whole: its record, then a line per member.
fn show(t: &TeamRecord) -> String {
    let mut out = format!(
        "team        {}\nid          {}\ndefinition  {}\nstate       {}\nstarted     {}\napprovals   {}\n",
        t.name, t.id, t.definition, t.state, t.created_at, t.approvals
    );
    if let Some(problem) = &t.problem {
        out.push_str(&format!("problem     {problem}\n"));
    }
    if t.unread > 0 {
        out.push_str(&format!(
            "mail        {} not yet typed in (agents mail ls --team {})\n",
            t.unread, t.name
        ));
    }
    out.push_str(&format!(
        "\n{:<16}  {:<26}  {:<24}  {:<10}  {:<8}  ROLE\n",
        "MEMBER", "RUN", "NAME", "STATE", "HOST"
    ));
    for m in &t.members {
        let member = match (m.leader, m.run.detached) {
            (true, _) => format!("{} (leader)", m.member),
            (false, true) => format!("{} (detached)", m.member),
            (false, false) => m.member.clone(),
        };
        let role: String = m
            .role
            .as_deref()
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(60)
            .collect();
        out.push_str(&format!(
            "{member:<16}  {:<26}  {:<24}  {:<10}  {:<8}  {role}\n",
            m.run.id,
            m.run.name,
            m.run.state.as_str(),
            m.run.host
        ));
        if let Some(reason) = m.run.reason.as_deref().filter(|_| m.run.state == RunState::Blocked) {
            out.push_str(&format!("{:<16}  blocked: {reason}\n", ""));
        }
    }
    crate::text::inert(&out).into_owned()
}
