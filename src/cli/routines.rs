//! `agents routines`: the `[routines.NAME]` of the config, their next fire
//! and last outcome; a fire now; pause and resume (docs/design.md §13).

use clap::Subcommand;

use crate::api::method::{self, Method};
use crate::api::{RoutineFired, RoutineRecord, RoutineRef};
use crate::client::Client;
use crate::paths::Paths;

#[derive(Subcommand, Debug)]
pub enum RoutinesCommand {
    /// Every routine: its schedule, next fire and last outcome.
    Ls {
        /// One JSON array of routines.
        #[arg(long)]
        json: bool,
    },
    /// Fire a routine now (its overlap rule applies): print the run's id,
    /// or why it was queued or skipped.
    Run {
        /// The routine's name (`[routines.NAME]`).
        name: String,
        /// What the fire did, as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop a routine's fires until `resume` (kept across daemon restarts).
    Pause {
        /// The routine's name (`[routines.NAME]`).
        name: String,
    },
    /// Fire a paused routine again from its next scheduled time; what it
    /// would have fired while paused is not recorded as missed.
    Resume {
        /// The routine's name (`[routines.NAME]`).
        name: String,
    },
}

pub async fn routines(paths: &Paths, command: RoutinesCommand) -> anyhow::Result<i32> {
    let client = Client::connect(paths, false).await?;
    match command {
        RoutinesCommand::Ls { json } => {
            let list: Vec<RoutineRecord> = client.call::<method::RoutinesList>(crate::api::NoParams).await?;
            match json {
                true => crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&list)?)),
                false if list.is_empty() => say!("no routines: add [routines.NAME] to config.toml"),
                false => crate::cli::print::out(&table(&list)),
            }
            Ok(0)
        }
        RoutinesCommand::Run { name, json } => {
            let fired: RoutineFired = client.call::<method::RoutinesRun>(RoutineRef { name }).await?;
            if json {
                crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&fired)?));
                return Ok(0);
            }
            match (&fired.outcome[..], &fired.run) {
                ("started", Some(run)) if run.state == crate::api::RunState::Blocked => {
                    say!("{}", run.id);
                    anyhow::bail!(
                        "run {} ({}) blocked: {}",
                        run.id,
                        run.name,
                        run.reason.as_deref().unwrap_or("no reason recorded")
                    );
                }
                ("started", Some(run)) => say!("{}", run.id),
                ("queued", _) => say!("{}: queued behind its previous run", fired.routine),
                (_, Some(run)) => {
                    say_err!(
                        "agents: {} {}: {}",
                        fired.routine,
                        run.state.as_str(),
                        run.reason.as_deref().unwrap_or("-")
                    );
                    return Ok(1);
                }
                (outcome, None) => say!("{}: {outcome}", fired.routine),
            }
            Ok(0)
        }
        RoutinesCommand::Pause { name } => pause::<method::RoutinesPause>(&client, name).await,
        RoutinesCommand::Resume { name } => pause::<method::RoutinesResume>(&client, name).await,
    }
}

async fn pause<M>(client: &Client, name: String) -> anyhow::Result<i32>
where
    M: Method<Params = RoutineRef, Reply = RoutineRecord>,
{
    let r = client.call::<M>(RoutineRef { name }).await?;
    match &r.next_fire {
        Some(next) => say!("{}: next fire {next}", r.name),
        None if r.paused => say!("{}: paused", r.name),
        None => say!("{}: disabled in config.toml", r.name),
    }
    Ok(0)
}

/// One line per routine: name, schedule, next fire, last outcome.
fn table(list: &[RoutineRecord]) -> String {
    let mut rows = vec![[
        "NAME".to_string(),
        "SCHEDULE".into(),
        "HARNESS".into(),
        "HOST".into(),
        "NEXT".into(),
        "LAST".into(),
    ]];
    for r in list {
        let next = match (&r.next_fire, r.paused, r.enabled) {
            (Some(next), ..) => next.clone(),
            (None, true, _) => "paused".into(),
            (None, _, false) => "disabled".into(),
            (None, ..) => "-".into(),
        };
        let last = r.last.as_ref().map_or_else(
            || "-".to_string(),
            |run| {
                let at = run.scheduled_at.as_deref().unwrap_or(&run.created_at);
                format!("{} {} ({at})", run.name, run.state.as_str())
            },
        );
        let schedule = match r.timezone.as_str() {
            "local" => r.schedule.clone(),
            zone => format!("{} {zone}", r.schedule),
        };
        rows.push([r.name.clone(), schedule, r.harness.clone(), r.host.clone(), next, last]);
    }
    for row in rows.iter_mut() {
        for cell in row.iter_mut() {
            *cell = crate::text::inert_line(cell).into_owned();
        }
    }
    let mut widths = [0usize; 6];
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
    out
}
