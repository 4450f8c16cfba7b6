//! `agents prompts`: a run's prompts not typed in yet — listed with why
//! each waits (held for the user's draft or typing, the agent's turn, a
//! question), rewritten, dropped, or sent now on purpose.

use clap::Subcommand;

use crate::api::{PromptParams, SendResult, WaitingPrompt, method};
use crate::client::Client;
use crate::paths::Paths;

#[derive(Subcommand, Debug)]
pub enum PromptsCommand {
    /// The run's waiting prompts, oldest first, with why each waits.
    Ls {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// One JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Rewrite a waiting prompt.
    Edit {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// The prompt's id (agents prompts ls RUN).
        prompt: String,
        /// Its new text.
        text: String,
    },
    /// Drop a waiting prompt: it is never typed in.
    Drop {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// The prompt's id (agents prompts ls RUN).
        prompt: String,
    },
    /// Type a waiting prompt in now, on purpose: after whatever the input
    /// holds, whatever the agent is doing (never into a question).
    Send {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// The prompt's id (agents prompts ls RUN).
        prompt: String,
    },
}

pub async fn prompts(paths: &Paths, command: PromptsCommand) -> anyhow::Result<i32> {
    let client = Client::connect(paths, false).await?;
    match command {
        PromptsCommand::Ls { run, json } => {
            let params = PromptParams {
                run,
                ..Default::default()
            };
            let waiting: Vec<WaitingPrompt> = client.call::<method::PromptsList>(params).await?;
            if json {
                crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&waiting)?));
            } else if waiting.is_empty() {
                say!("no prompt waits");
            } else {
                for w in &waiting {
                    say!("{}  {}  {}", w.id, super::print::short(&w.text, 50), w.why);
                }
            }
        }
        PromptsCommand::Edit { run, prompt, text } => {
            let params = PromptParams {
                run,
                prompt: Some(prompt.clone()),
                text: Some(text),
            };
            client.call::<method::PromptsEdit>(params).await?;
            say!("edited (prompt {prompt})");
        }
        PromptsCommand::Drop { run, prompt } => {
            let params = PromptParams {
                run,
                prompt: Some(prompt.clone()),
                text: None,
            };
            client.call::<method::PromptsDrop>(params).await?;
            say!("dropped (prompt {prompt})");
        }
        PromptsCommand::Send { run, prompt } => {
            let params = PromptParams {
                run,
                prompt: Some(prompt),
                text: None,
            };
            let sent: SendResult = client.call::<method::PromptsSend>(params).await?;
            say!("{} (prompt {})", sent.state, sent.prompt_id);
        }
    }
    Ok(0)
}
