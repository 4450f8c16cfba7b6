//! `agents mail`: messages between runs, and from the user (docs/design.md
//! §13). The sender is the run whose `AGENTS_RUN_ID` is set, else the user.

use clap::Subcommand;

use crate::api::{MailListParams, MailRecord, MailRef, MailSendParams, method};
use crate::client::Client;
use crate::paths::Paths;

#[derive(Subcommand, Debug)]
pub enum MailCommand {
    /// Send TEXT to a run: typed into its agent as a prompt marked as mail
    /// once it is idle, exactly once.
    Send {
        /// The run to send to: its id, an id prefix, or its name; from a
        /// team member, another member's name, `leader` or `team` (all the
        /// others); from anyone, TEAM/MEMBER, TEAM/leader or TEAM/team.
        to: String,
        /// The message.
        text: String,
        /// Your own id for the message; sending the same id again never
        /// delivers twice.
        #[arg(long)]
        id: Option<String>,
        /// The message this one answers (its thread is kept).
        #[arg(long = "reply-to", value_name = "ID")]
        reply_to: Option<String>,
        /// The message's record as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Messages to or from a run (every run's without one), newest first.
    Ls {
        /// A run: its id, an id prefix, or its name.
        run: Option<String>,
        /// Every message to or from a member of this team.
        #[arg(long, conflicts_with = "run")]
        team: Option<String>,
        /// One JSON array of messages.
        #[arg(long)]
        json: bool,
    },
    /// One message whole, with its envelope.
    Read {
        /// The message's id.
        id: String,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub async fn mail(paths: &Paths, command: MailCommand) -> anyhow::Result<i32> {
    let client = Client::connect(paths, false).await?;
    match command {
        MailCommand::Send {
            to,
            text,
            id,
            reply_to,
            json,
        } => {
            // A reply stays in its thread.
            let thread = match &reply_to {
                Some(reply) => Some(
                    client
                        .call::<method::MailRead>(MailRef { id: reply.clone() })
                        .await?
                        .thread,
                ),
                None => None,
            };
            let (from, proof) = crate::proof::claim();
            let params = MailSendParams {
                to,
                body: text,
                from,
                proof,
                id,
                thread,
                in_reply_to: reply_to,
                relayed_from: None,
            };
            // One record, or one a member when sent to a team.
            let answer = client.call::<method::MailSend>(params).await?;
            if json {
                print_json(&answer)?;
                return Ok(0);
            }
            let sent: Vec<MailRecord> = answer.records();
            for m in sent {
                say!("{} to {} ({})", m.id, m.to_name, m.state);
            }
        }
        MailCommand::Ls { run, team, json } => {
            let list: Vec<MailRecord> = client
                .call::<method::MailList>(MailListParams { run, team, limit: None })
                .await?;
            match json {
                true => print_json(&list)?,
                false => crate::cli::print::out(&table(&list)),
            }
        }
        MailCommand::Read { id, json } => {
            let m: MailRecord = client.call::<method::MailRead>(MailRef { id }).await?;
            match json {
                true => print_json(&m)?,
                false => {
                    say!(
                        "id       {}\nfrom     {}\nto       {}\nat       {}",
                        m.id,
                        m.from_name,
                        m.to_name,
                        m.at
                    );
                    say!("thread   {}\nstate    {}", m.thread, m.state);
                    if let Some(reply) = &m.in_reply_to {
                        say!("reply to {reply}");
                    }
                    say!("\n{}", m.body);
                }
            }
        }
    }
    Ok(0)
}

fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(value)?));
    Ok(())
}

/// One line per message: id, when, from → to, state, the body's start.
fn table(list: &[MailRecord]) -> String {
    if list.is_empty() {
        return "no mail\n".into();
    }
    let mut out = format!(
        "{:<26}  {:<19}  {:<30}  {:<11}  BODY\n",
        "ID", "AT", "FROM → TO", "STATE"
    );
    for m in list {
        let who = format!("{} → {}", m.from_name, m.to_name);
        let first: String = m.body.lines().next().unwrap_or_default().chars().take(50).collect();
        let at = m.at.get(..19).unwrap_or(&m.at).replace('T', " ");
        out.push_str(&format!(
            "{:<26}  {at:<19}  {:<30}  {:<11}  {}\n",
            m.id,
            crate::text::inert_line(&who),
            m.state,
            crate::text::inert_line(&first)
        ));
    }
    out
}
