//! Team definitions (docs/design.md §13): a leader and members,
//! each a run to start — harness or profile, role, cwd or a worktree, host,
//! first prompt, detached — read from `[teams.NAME]` in `config.toml` or
//! from a TOML file of its own, and checked whole before anything starts.
//! What a member is told first (who it is, who the others are, how to mail
//! them) is written here too, so every member hears the same.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

pub use crate::api::Approvals;

/// The most members a team may have besides its leader: a team, not a
/// fleet; each member is a live agent.
pub const MAX_MEMBERS: usize = 16;

/// Bounds on the words a definition carries into a first prompt.
const MAX_ROLE: usize = 4 * 1024;
const MAX_PROMPT: usize = 16 * 1024;

/// The names mail gives a meaning of their own (`team` is every member).
const RESERVED: &[&str] = &["team", "user", "leader"];

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TeamDef {
    /// In a team file: the team's name (else the file's stem). In
    /// `config.toml` the table's key names it.
    #[serde(default)]
    pub name: Option<String>,
    pub leader: MemberDef,
    #[serde(default)]
    pub members: Vec<MemberDef>,
    /// Start no member unless every member can start: one blocked member
    /// cancels those already started.
    #[serde(default)]
    pub all_or_nothing: bool,
    /// `leader`: a member waiting at a permission prompt is asked about
    /// in mail to the leader, who answers by the request's id.
    #[serde(default)]
    pub approvals: Approvals,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MemberDef {
    /// Its name in the team: what the others mail it by.
    pub name: String,
    /// A harness family or a profile of `config.toml`.
    pub harness: String,
    /// Extra arguments for the harness.
    #[serde(default)]
    pub args: Vec<String>,
    /// What this member is for, told to it in its first prompt.
    #[serde(default)]
    pub role: Option<String>,
    /// Where it runs: absolute, `~/…`, or relative to where the team is
    /// started. On a host: a path there (its home when absent).
    #[serde(default)]
    pub cwd: Option<String>,
    /// A worktree of its own, on a branch named after its run.
    #[serde(default)]
    pub worktree: bool,
    /// A host of `agents hosts`; absent or `local` is here.
    #[serde(default)]
    pub host: Option<String>,
    /// Its first task.
    #[serde(default)]
    pub prompt: Option<String>,
    /// Survives the leader's cancellation (cancelled on its own, or with
    /// `agents team cancel`).
    #[serde(default)]
    pub detached: bool,
    /// Seconds, or a duration such as `10m`.
    #[serde(default)]
    pub timeout: Option<crate::config::routines::Timeout>,
    /// Environment variables to pass by name (values from where the team
    /// is started, never stored).
    #[serde(default)]
    pub env: Vec<String>,
    /// Boxed (`true`, `"offline"`), as `--sandbox` asks.
    #[serde(default)]
    pub sandbox: Option<crate::values::sandbox::Setting>,
}

impl MemberDef {
    /// The run this member is asked to be, as written: its cwd unmapped,
    /// its host unless `local`, its own prompt. The team's start names it,
    /// maps its cwd and may give it the team's first prompt.
    pub fn spec(&self) -> crate::api::RunSpec {
        crate::api::RunSpec {
            harness: self.harness.clone(),
            args: self.args.clone(),
            name: None,
            cwd: self.cwd.clone().unwrap_or_default(),
            prompt: self.prompt.clone(),
            worktree: self.worktree,
            host: self.host.clone().filter(|h| !h.is_empty() && h != "local"),
            detached: self.detached,
            // Checked when the definition was read.
            timeout_secs: self.timeout.as_ref().and_then(|t| t.secs().ok()),
            pass_env: self.env.clone(),
            model: None,
            sandbox: self.sandbox.and_then(|s| s.mode()),
        }
    }
}

impl TeamDef {
    /// A team file: the team at its top level.
    pub fn from_file_text(text: &str, stem: &str) -> Result<(String, TeamDef), String> {
        let def: TeamDef = toml::from_str(text).map_err(|e| e.to_string().trim().replace('\n', " "))?;
        let name = def.name.clone().unwrap_or_else(|| stem.to_string());
        def.validate(&name)?;
        Ok((name, def))
    }

    /// The leader first, then the members in their order.
    pub fn everyone(&self) -> impl Iterator<Item = &MemberDef> {
        std::iter::once(&self.leader).chain(&self.members)
    }

    /// Checks the definition whole: names (unique, usable in a run's
    /// name and as a mail address), bounds, a timeout of at least a second
    /// and variable names. Harnesses are checked against the profiles by
    /// [`validate`].
    pub fn validate(&self, team: &str) -> Result<(), String> {
        check_name("team", team)?;
        if let Some(named) = &self.name
            && named != team
        {
            return Err(format!("teams.{team}: its name says '{named}'"));
        }
        if self.members.len() > MAX_MEMBERS {
            return Err(format!(
                "teams.{team}: {} members; at most {MAX_MEMBERS}",
                self.members.len()
            ));
        }
        let mut seen = BTreeSet::new();
        for member in self.everyone() {
            let at = format!("teams.{team}.{}", member.name);
            check_name("member", &member.name).map_err(|e| format!("teams.{team}: {e}"))?;
            if RESERVED.contains(&member.name.as_str()) {
                return Err(format!("{at}: '{}' is a word mail keeps for itself", member.name));
            }
            if !seen.insert(member.name.as_str()) {
                return Err(format!("teams.{team}: two members are named '{}'", member.name));
            }
            if member.harness.trim().is_empty() {
                return Err(format!("{at}: no harness"));
            }
            if member.role.as_ref().is_some_and(|r| r.len() > MAX_ROLE) {
                return Err(format!("{at}: the role is longer than {MAX_ROLE} bytes"));
            }
            if member.prompt.as_ref().is_some_and(|p| p.len() > MAX_PROMPT) {
                return Err(format!("{at}: the prompt is longer than {MAX_PROMPT} bytes"));
            }
            if let Some(Err(e)) = member.timeout.as_ref().map(|t| t.secs()) {
                return Err(format!("{at}: {e}"));
            }
            if let Some(bad) = member.env.iter().find(|n| !crate::harness::is_env_name(n)) {
                return Err(format!("{at}: '{bad}' is not a variable name"));
            }
        }
        Ok(())
    }
}

/// A team's or a member's name: what a run's name is made of, lower-case
/// enough never to read as a run id.
fn check_name(what: &str, name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 24
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_'));
    match ok {
        true => Ok(()),
        false => Err(format!(
            "bad {what} name '{}': up to 24 lower-case letters, digits, '-' or '_', starting with a letter",
            crate::text::bounded(name, 40)
        )),
    }
}

/// Every team of `config.toml`, each member's harness a family or a profile.
pub fn validate(
    teams: &BTreeMap<String, TeamDef>,
    profiles: &BTreeMap<String, crate::harness::Profile>,
    families: &crate::harness::user::Families,
) -> Result<(), String> {
    for (name, team) in teams {
        team.validate(name)?;
        check_harnesses(name, team, profiles, families)?;
    }
    Ok(())
}

/// Each member's harness is a known family or a profile.
pub fn check_harnesses(
    team: &str,
    def: &TeamDef,
    profiles: &BTreeMap<String, crate::harness::Profile>,
    families: &crate::harness::user::Families,
) -> Result<(), String> {
    for member in def.everyone() {
        let h = member.harness.as_str();
        if !profiles.contains_key(h) && families.adapter(h).is_none() {
            return Err(format!(
                "teams.{team}.{}: unknown harness or profile '{h}' (known: {})",
                member.name,
                families.known().join(", ")
            ));
        }
    }
    Ok(())
}

/// Who a member is among the others, for its first prompt.
pub struct Seat<'a> {
    pub team: &'a str,
    pub def: &'a TeamDef,
    pub member: &'a MemberDef,
    /// How the member calls `agents` (a name in PATH, or a path).
    pub agents: &'a str,
}

/// A member's first prompt: who it is, who the others are and how to
/// write to them, its role, then its task (and the leader's, the task the
/// team was started with).
pub fn first_prompt(seat: &Seat, task: Option<&str>) -> String {
    let Seat {
        team,
        def,
        member,
        agents,
    } = seat;
    let others: Vec<String> = def
        .everyone()
        .filter(|m| m.name != member.name)
        .map(|m| match m.name == def.leader.name {
            true => format!("{} (leader)", m.name),
            false => m.name.clone(),
        })
        .collect();
    let leads = member.name == def.leader.name;
    let task = task.filter(|_| leads);
    let mut text = format!("[team {team}] You are {} in team {team}", member.name);
    if leads {
        text.push_str(", its leader");
    }
    text.push('.');
    if !others.is_empty() {
        text.push_str(&format!(
            " The others: {}. Write to one with `{agents} mail send NAME \"TEXT\"` (NAME `team` writes to all); mail reaches you as [mail from NAME · ID].",
            others.join(", ")
        ));
    }
    if leads && !def.members.is_empty() {
        text.push_str(" When a member ends, you get its [task result].");
    }
    if let Some(role) = member.role.as_deref().filter(|r| !r.trim().is_empty()) {
        text.push_str(&format!("\nYour role: {}", role.trim()));
    }
    for said in [member.prompt.as_deref(), task].into_iter().flatten() {
        if !said.trim().is_empty() {
            text.push_str(&format!("\n{}", said.trim()));
        }
    }
    text
}

/// What `agents team start TEAM` (and MCP `team_start`) asks: a path (it
/// names a file, or reads as one) is a team file, read here; anything else
/// a team of `config.toml`. Relative member paths start here.
pub fn start_request(team: &str, prompt: Option<String>) -> Result<crate::api::TeamStartParams, String> {
    let path = std::path::Path::new(team);
    let file = match path.is_file() || team.ends_with(".toml") || team.contains('/') {
        true => Some(std::fs::read_to_string(path).map_err(|e| format!("reading the team file {team}: {e}"))?),
        false => None,
    };
    let name = match &file {
        Some(_) => path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        None => team.to_string(),
    };
    let cwd = std::env::current_dir().map_err(|e| format!("reading the current directory: {e}"))?;
    Ok(crate::api::TeamStartParams {
        team: name,
        file,
        prompt,
        cwd: cwd.to_string_lossy().into_owned(),
        env: std::env::vars().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team(text: &str) -> Result<(String, TeamDef), String> {
        TeamDef::from_file_text(text, "review")
    }

    #[test]
    fn a_team_file_names_its_members_and_reads_durations() {
        let (name, def) = team(
            "leader = { name = \"lead\", harness = \"claude\", prompt = \"split the work\" }\n\
             [[members]]\nname = \"critic\"\nharness = \"codex\"\nworktree = true\ntimeout = \"10m\"\n",
        )
        .unwrap();
        assert_eq!(name, "review");
        assert_eq!(def.members[0].timeout.as_ref().map(|t| t.secs()), Some(Ok(600)));
        assert!(def.members[0].worktree);
        assert_eq!(
            def.everyone().map(|m| m.name.as_str()).collect::<Vec<_>>(),
            ["lead", "critic"]
        );
    }

    #[test]
    fn bad_definitions_say_what_is_wrong() {
        let twice =
            team("leader = { name = \"a\", harness = \"demo\" }\n[[members]]\nname = \"a\"\nharness = \"demo\"\n");
        assert!(twice.unwrap_err().contains("two members are named 'a'"));
        let reserved = team("leader = { name = \"team\", harness = \"demo\" }\n");
        assert!(reserved.unwrap_err().contains("keeps for itself"));
        let upper = team("leader = { name = \"Lead\", harness = \"demo\" }\n");
        assert!(upper.unwrap_err().contains("bad member name 'Lead'"));
        let unknown = team("leader = { name = \"a\", harness = \"demo\", colour = 1 }\n");
        assert!(unknown.unwrap_err().contains("unknown field"));
        let env = team("leader = { name = \"a\", harness = \"demo\", env = [\"A=1\"] }\n");
        assert!(env.unwrap_err().contains("not a variable name"));
    }

    #[test]
    fn a_first_prompt_names_the_member_the_others_and_the_task() {
        let (name, def) = team(
            "leader = { name = \"lead\", harness = \"demo\", prompt = \"split it\" }\n\
             [[members]]\nname = \"critic\"\nharness = \"demo\"\nrole = \"review each change\"\n",
        )
        .unwrap();
        let seat = |member| Seat {
            team: &name,
            def: &def,
            member,
            agents: "agents",
        };
        let lead = first_prompt(&seat(&def.leader), Some("fix the parser"));
        assert!(lead.starts_with("[team review] You are lead in team review, its leader."));
        assert!(lead.contains("The others: critic."));
        assert!(lead.ends_with("\nsplit it\nfix the parser"));
        let critic = first_prompt(&seat(&def.members[0]), Some("fix the parser"));
        assert!(critic.contains("The others: lead (leader)."));
        assert!(critic.contains("\nYour role: review each change"));
        assert!(!critic.contains("fix the parser"), "the task is the leader's: {critic}");
    }
}
