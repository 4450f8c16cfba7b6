//! Teams: `teams.start` starts a definition's leader, then its members as
//! the leader's children, each through the one start path (`runs.start`,
//! placed on its host) with its own record and launch id; a member that is
//! blocked is recorded as blocked and the others still start, unless the
//! team is all-or-nothing. `teams.list`, `teams.show`, `teams.cancel`.

use super::Reach;
use crate::api::{
    ApiError, ErrorCode, RunRecord, RunSpec, RunState, StartParams, TeamCancelled, TeamMember, TeamRecord, TeamRef,
    TeamSeat, TeamStartParams, bounds,
};
use crate::config::teams::{MemberDef, Seat, TeamDef};
use crate::engine::start::record;
use crate::store::teams::{MemberRow, TeamRow};

pub async fn start(reach: &Reach, p: TeamStartParams) -> Result<TeamRecord, ApiError> {
    let (definition, def) = definition(reach, &p)?;
    if let Some(task) = &p.prompt {
        bounds::check("the prompt", task, bounds::PROMPT)?;
    }
    let id = ulid::Ulid::new().to_string();
    let (key, approvals) = (id.clone(), def.approvals.as_str());
    let team = reach
        .engine
        .store
        .teams()
        .create(&key, &definition, approvals)
        .await
        .map_err(ApiError::internal)?;
    let agents = agents_command(&p.env);
    let seat = |member| Seat {
        team: &team.name,
        def: &def,
        member,
        agents: &agents,
    };
    let leader = start_member(reach, &team, &seat(&def.leader), None, &p).await?;
    let mut problems: Vec<String> = Vec::new();
    let mut started = vec![leader.id.clone()];
    match blocked(&def.leader, &leader) {
        Some(why) => problems.push(format!("{why}; no member started")),
        None => {
            for member in &def.members {
                let why = match start_member(reach, &team, &seat(member), Some(&leader.id), &p).await {
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
                        let _ = crate::engine::cancel::cancel_tree(&reach.engine, run, false).await;
                    }
                    break;
                }
            }
        }
    }
    if !problems.is_empty() {
        let (key, why) = (team.id.clone(), problems.join("; "));
        let _ = reach.engine.store.teams().set_problem(&key, &why).await;
    }
    show_row(reach, &team.id).await
}

/// The definition asked for: a file's text, or a team of `config.toml`.
fn definition(reach: &Reach, p: &TeamStartParams) -> Result<(String, TeamDef), ApiError> {
    let config = reach.engine.config();
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
    let families = crate::harness::user::Families::in_force();
    crate::config::teams::check_harnesses(&name, &def, &config.profiles, &families).map_err(ApiError::bad_request)?;
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
    reach: &Reach,
    team: &TeamRow,
    seat: &Seat<'_>,
    leader: Option<&str>,
    p: &TeamStartParams,
) -> Result<RunRecord, ApiError> {
    let member = seat.member;
    let base = format!("{}-{}", team.name, member.name);
    let name = reach
        .engine
        .store
        .names()
        .unique(&base)
        .await
        .map_err(ApiError::internal)?;
    let config = reach.engine.config();
    let family = config
        .profiles
        .get(&member.harness)
        .map_or(member.harness.as_str(), |profile| profile.family_for(&member.harness));
    // A shell or a command would run the words as a command line: it gets
    // its own prompt alone.
    let prompt = match family {
        "shell" | "cmd" => member.prompt.clone(),
        _ => Some(crate::config::teams::first_prompt(seat, p.prompt.as_deref())),
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
        true => crate::remote::start(&reach.here, params).await?,
        false => crate::engine::start::start(&reach.engine, params).await?,
    };
    let row = MemberRow {
        team_id: team.id.clone(),
        member: member.name.clone(),
        run_id: run.id.clone(),
        role: member.role.clone(),
        leader: leader.is_none(),
    };
    reach
        .engine
        .store
        .teams()
        .add_member(row)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    reach.engine.changed(&run.id);
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

pub async fn list(reach: &Reach) -> Result<Vec<TeamRecord>, ApiError> {
    let rows = reach.engine.store.teams().list(200).await.map_err(ApiError::internal)?;
    let mut found = Vec::with_capacity(rows.len());
    for row in rows {
        found.push(with_members(reach, row).await?);
    }
    Ok(found)
}

pub async fn show(reach: &Reach, p: TeamRef) -> Result<TeamRecord, ApiError> {
    let team = resolve(reach, &p.team).await?;
    with_members(reach, team).await
}

/// Cancels every live member: the leader with the members it owns, then
/// each detached member (a team cancelled is cancelled whole).
pub async fn cancel(reach: &Reach, p: TeamRef) -> Result<TeamCancelled, ApiError> {
    let team = resolve(reach, &p.team).await?;
    let record = with_members(reach, team).await?;
    let mut asked: Vec<String> = Vec::new();
    for member in &record.members {
        if !member.run.state.is_live() || asked.contains(&member.run.id) {
            continue;
        }
        match crate::engine::cancel::cancel_tree(&reach.engine, &member.run.id, p.force).await {
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
    Ok(TeamCancelled {
        team: record.id,
        cancelled: asked,
    })
}

pub(super) async fn resolve(reach: &Reach, reference: &str) -> Result<TeamRow, ApiError> {
    let key = reference.to_string();
    let found = reach
        .engine
        .store
        .teams()
        .resolve(&key)
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

async fn show_row(reach: &Reach, id: &str) -> Result<TeamRecord, ApiError> {
    let key = id.to_string();
    let row = reach
        .engine
        .store
        .teams()
        .get(&key)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::internal(format!("team {id} vanished")))?;
    with_members(reach, row).await
}

/// The team with each member's current record.
async fn with_members(reach: &Reach, team: TeamRow) -> Result<TeamRecord, ApiError> {
    let key = team.id.clone();
    let (rows, unread) = reach
        .engine
        .store
        .teams()
        .members_and_unread(&key)
        .await
        .map_err(ApiError::internal)?;
    let mut members = Vec::with_capacity(rows.len());
    for m in rows {
        members.push(TeamMember {
            run: record(&reach.engine, &m.run_id).await?,
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
