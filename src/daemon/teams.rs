//! Teams: `teams.start` starts a definition's leader, then its members as
//! the leader's children, each through the one start path (`runs.start`,
//! placed on its host) with its own record and launch id; a member that is
//! blocked is recorded as blocked and the others still start, unless the
//! team is all-or-nothing. `teams.list`, `teams.show`, `teams.cancel`.

use std::sync::Arc;

use serde_json::{Value, json};

use super::Daemon;
use super::dispatch::to_value;
use super::start::record;
use crate::api::{
    ApiError, ErrorCode, RunRecord, RunSpec, RunState, StartParams, TeamMember, TeamRecord, TeamRef, TeamSeat,
    TeamStartParams, bounds,
};
use crate::store::teams::{self, MemberRow, TeamRow};
use crate::team::{MemberDef, Seat, TeamDef};

pub async fn start(daemon: &Arc<Daemon>, p: TeamStartParams) -> Result<Value, ApiError> {
    let (definition, def) = definition(daemon, &p)?;
    if let Some(task) = &p.prompt {
        bounds::check("the prompt", task, bounds::PROMPT)?;
    }
    let id = ulid::Ulid::new().to_string();
    let (key, approvals) = (id.clone(), def.approvals.as_str());
    let team = daemon
        .store
        .call(move |c| teams::create(c, &key, &definition, approvals))
        .await
        .map_err(ApiError::internal)?;
    let agents = agents_command(&p.env);
    let seat = |member| Seat {
        team: &team.name,
        def: &def,
        member,
        agents: &agents,
    };
    let leader = start_member(daemon, &team, &seat(&def.leader), None, &p).await?;
    let mut problems: Vec<String> = Vec::new();
    let mut started = vec![leader.id.clone()];
    match blocked(&def.leader, &leader) {
        Some(why) => problems.push(format!("{why}; no member started")),
        None => {
            for member in &def.members {
                let why = match start_member(daemon, &team, &seat(member), Some(&leader.id), &p).await {
                    Ok(run) => {
                        started.push(run.id.clone());
                        blocked(member, &run)
                    }
                    Err(e) => Some(format!("member {} not started: {}", member.name, e.message)),
                };
                let Some(why) = why else { continue };
                problems.push(why);
                if def.all_or_nothing {
                    problems.push("the team is all or nothing: the others are cancelled".into());
                    for run in &started {
                        let _ = super::dispatch::cancel_tree(daemon, run, false).await;
                    }
                    break;
                }
            }
        }
    }
    if !problems.is_empty() {
        let (key, why) = (team.id.clone(), problems.join("; "));
        let _ = daemon.store.call(move |c| teams::set_problem(c, &key, &why)).await;
    }
    to_value(show_row(daemon, &team.id).await?)
}

/// The definition asked for: a file's text, or a team of `config.toml`.
fn definition(daemon: &Daemon, p: &TeamStartParams) -> Result<(String, TeamDef), ApiError> {
    let config = daemon.config();
    let Some(text) = &p.file else {
        return match config.teams.get(&p.team) {
            Some(def) => Ok((p.team.clone(), def.clone())),
            None => Err(ApiError::bad_request(format!(
                "no team '{}' in config.toml ({}) and no such file",
                crate::text::bounded(&p.team, 80),
                match config.teams.keys().map(String::as_str).collect::<Vec<_>>() {
                    known if known.is_empty() => "it defines none".to_string(),
                    known => format!("it defines {}", known.join(", ")),
                }
            ))),
        };
    };
    bounds::check("the team file", text, TeamStartParams::MAX_FILE)?;
    let (name, def) = TeamDef::from_file_text(text, &p.team).map_err(ApiError::bad_request)?;
    crate::team::check_harnesses(&name, &def, &config.profiles).map_err(ApiError::bad_request)?;
    Ok((name, def))
}

/// `member X blocked: why` when its run could not start.
fn blocked(member: &MemberDef, run: &RunRecord) -> Option<String> {
    (run.state == RunState::Blocked).then(|| {
        format!(
            "member {} blocked: {}",
            member.name,
            run.reason.as_deref().unwrap_or("no reason recorded")
        )
    })
}

/// Starts one member (placed on its host) and records it in the team.
async fn start_member(
    daemon: &Arc<Daemon>,
    team: &TeamRow,
    seat: &Seat<'_>,
    leader: Option<&str>,
    p: &TeamStartParams,
) -> Result<RunRecord, ApiError> {
    let member = seat.member;
    let base = format!("{}-{}", team.name, member.name);
    let name = daemon.store.names().unique(&base).await.map_err(ApiError::internal)?;
    let config = daemon.config();
    let family = config
        .profiles
        .get(&member.harness)
        .map_or(member.harness.as_str(), |profile| profile.family_for(&member.harness));
    // A shell or a command would run the words as a command line: it gets
    // its own prompt alone.
    let prompt = match family {
        "shell" | "cmd" => member.prompt.clone(),
        _ => Some(crate::team::first_prompt(seat, p.prompt.as_deref())),
    };
    let spec = member.spec();
    let params = StartParams {
        spec: RunSpec {
            name: Some(name),
            cwd: member_cwd(member, spec.host.is_some(), p),
            prompt,
            ..spec
        },
        parent: leader.map(str::to_string),
        env: p.env.clone(),
        team: Some(TeamSeat {
            team: team.name.clone(),
            member: member.name.clone(),
        }),
        ..StartParams::default()
    };
    let run = match params.spec.host.is_some() {
        true => crate::remote::start(&daemon.here(), params).await?,
        false => super::start::start(daemon, params).await?,
    };
    let row = MemberRow {
        team_id: team.id.clone(),
        member: member.name.clone(),
        run_id: run.id.clone(),
        role: member.role.clone(),
        leader: leader.is_none(),
    };
    daemon
        .store
        .call(move |c| teams::add_member(c, &row))
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    daemon.changed(&run.id);
    Ok(run)
}

/// A member's directory: here, absolute, `~/…` in the client's home, or
/// relative to where the team was started; on a host, a path there (its
/// home when none is given).
fn member_cwd(member: &MemberDef, remote: bool, p: &TeamStartParams) -> String {
    let given = member.cwd.as_deref().filter(|c| !c.is_empty());
    if remote {
        return given.unwrap_or_default().to_string();
    }
    let home = p.env.iter().find(|(k, _)| k == "HOME").map(|(_, v)| v.as_str());
    match (given, home) {
        (None, _) => p.cwd.clone(),
        (Some("~"), Some(home)) => home.to_string(),
        (Some(dir), Some(home)) if dir.starts_with("~/") => std::path::Path::new(home)
            .join(&dir[2..])
            .to_string_lossy()
            .into_owned(),
        (Some(dir), _) => std::path::Path::new(&p.cwd).join(dir).to_string_lossy().into_owned(),
    }
}

/// How a member calls `agents`: by name when the client's PATH finds this
/// binary, else by its path.
fn agents_command(env: &[(String, String)]) -> String {
    let Ok(ours) = crate::harness::agents_binary() else {
        return "agents".into();
    };
    let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str());
    let found = crate::harness::find_binary("agents", path).and_then(|p| p.canonicalize().ok());
    match found == ours.canonicalize().ok() {
        true => "agents".into(),
        false => ours.to_string_lossy().into_owned(),
    }
}

pub async fn list(daemon: &Arc<Daemon>) -> Result<Value, ApiError> {
    let rows = daemon
        .store
        .call(|c| teams::list(c, 200))
        .await
        .map_err(ApiError::internal)?;
    let mut found = Vec::with_capacity(rows.len());
    for row in rows {
        found.push(with_members(daemon, row).await?);
    }
    to_value(found)
}

pub async fn show(daemon: &Arc<Daemon>, p: TeamRef) -> Result<Value, ApiError> {
    let team = resolve(daemon, &p.team).await?;
    to_value(with_members(daemon, team).await?)
}

/// Cancels every live member: the leader with the members it owns, then
/// each detached member (a team cancelled is cancelled whole).
pub async fn cancel(daemon: &Arc<Daemon>, p: TeamRef) -> Result<Value, ApiError> {
    let team = resolve(daemon, &p.team).await?;
    let record = with_members(daemon, team).await?;
    let mut asked: Vec<String> = Vec::new();
    for member in &record.members {
        if !member.run.state.is_live() || asked.contains(&member.run.id) {
            continue;
        }
        match super::dispatch::cancel_tree(daemon, &member.run.id, p.force).await {
            Ok(ids) => asked.extend(ids),
            Err(e) => tracing::warn!(
                "team {}: member {} not cancelled: {}",
                record.name,
                member.member,
                e.message
            ),
        }
    }
    if asked.is_empty() && record.state != "live" {
        return Err(ApiError::new(
            ErrorCode::NotRunning,
            format!("team {} has ended: nothing to cancel", record.name),
        ));
    }
    Ok(json!({ "team": record.id, "cancelled": asked }))
}

pub(super) async fn resolve(daemon: &Arc<Daemon>, reference: &str) -> Result<TeamRow, ApiError> {
    let key = reference.to_string();
    let found = daemon
        .store
        .call(move |c| teams::resolve(c, &key))
        .await
        .map_err(ApiError::internal)?;
    match found {
        Ok(Some(team)) => Ok(team),
        Ok(None) => Err(ApiError::bad_request(format!(
            "no team matches '{}'",
            crate::text::bounded(reference, 80)
        ))),
        Err(names) => Err(ApiError::bad_request(format!(
            "'{}' matches several teams: {}",
            crate::text::bounded(reference, 80),
            names.join(", ")
        ))),
    }
}

async fn show_row(daemon: &Arc<Daemon>, id: &str) -> Result<TeamRecord, ApiError> {
    let key = id.to_string();
    let row = daemon
        .store
        .call(move |c| teams::get(c, &key))
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::internal(format!("team {id} vanished")))?;
    with_members(daemon, row).await
}

/// The team with each member's current record.
async fn with_members(daemon: &Arc<Daemon>, team: TeamRow) -> Result<TeamRecord, ApiError> {
    let key = team.id.clone();
    let (rows, unread) = daemon
        .store
        .call(move |c| Ok((teams::members(c, &key)?, teams::unread(c, &key)?)))
        .await
        .map_err(ApiError::internal)?;
    let mut members = Vec::with_capacity(rows.len());
    for m in rows {
        members.push(TeamMember {
            run: record(daemon, &m.run_id).await?,
            member: m.member,
            leader: m.leader,
            role: m.role,
        });
    }
    let live = members.iter().any(|m| m.run.state.is_live());
    Ok(TeamRecord {
        id: team.id,
        name: team.name,
        definition: team.definition,
        approvals: team.approvals,
        state: if live { "live" } else { "ended" }.into(),
        created_at: crate::store::format_ms(team.created_at),
        problem: team.problem,
        members,
        unread,
    })
}
