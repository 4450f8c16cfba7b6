//! Teams in the store: a team started from a definition, and its members,
//! each a run under the name the others mail it by.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{Store, StoreError, now_ms};

/// A team as stored, before its members' records are read.
#[derive(Debug, Clone, PartialEq)]
pub struct TeamRow {
    pub id: String,
    pub name: String,
    pub definition: String,
    pub approvals: String,
    pub leader_run: Option<String>,
    pub problem: Option<String>,
    pub created_at: i64,
}

/// One member: its name in the team and its run.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberRow {
    pub team_id: String,
    pub member: String,
    pub run_id: String,
    pub role: Option<String>,
    pub leader: bool,
}

const TEAM_COLUMNS: &str = "id, name, definition, approvals, leader_run, problem, created_at";
const MEMBER_COLUMNS: &str = "team_id, member, run_id, role, is_leader";

fn team_from(r: &Row) -> rusqlite::Result<TeamRow> {
    Ok(TeamRow {
        id: r.get(0)?,
        name: r.get(1)?,
        definition: r.get(2)?,
        approvals: r.get(3)?,
        leader_run: r.get(4)?,
        problem: r.get(5)?,
        created_at: r.get(6)?,
    })
}

fn member_from(r: &Row) -> rusqlite::Result<MemberRow> {
    Ok(MemberRow {
        team_id: r.get(0)?,
        member: r.get(1)?,
        run_id: r.get(2)?,
        role: r.get(3)?,
        leader: r.get(4)?,
    })
}

/// `store.teams()`: teams and their members, each on the owner thread.
pub struct Teams<'a>(&'a Store);

impl Store {
    pub fn teams(&self) -> Teams<'_> {
        Teams(self)
    }
}

impl Teams<'_> {
    /// See [`create`].
    pub async fn create(&self, id: &str, definition: &str, approvals: &str) -> Result<TeamRow, StoreError> {
        let (id, definition, approvals) = (id.to_string(), definition.to_string(), approvals.to_string());
        self.0.call(move |c| create(c, &id, &definition, &approvals)).await
    }

    /// See [`add_member`].
    pub async fn add_member(&self, member: MemberRow) -> Result<(), StoreError> {
        self.0.call(move |c| add_member(c, &member)).await
    }

    /// See [`set_problem`].
    pub async fn set_problem(&self, id: &str, problem: &str) -> Result<(), StoreError> {
        let (id, problem) = (id.to_string(), problem.to_string());
        self.0.call(move |c| set_problem(c, &id, &problem)).await
    }

    pub async fn get(&self, id: &str) -> Result<Option<TeamRow>, StoreError> {
        let id = id.to_string();
        self.0.call(move |c| get(c, &id)).await
    }

    /// See [`resolve`].
    pub async fn resolve(&self, reference: &str) -> Result<Result<Option<TeamRow>, Vec<String>>, StoreError> {
        let reference = reference.to_string();
        self.0.call(move |c| resolve(c, &reference)).await
    }

    /// See [`list`].
    pub async fn list(&self, limit: usize) -> Result<Vec<TeamRow>, StoreError> {
        self.0.call(move |c| list(c, limit)).await
    }

    /// See [`members`].
    pub async fn members(&self, team: &str) -> Result<Vec<MemberRow>, StoreError> {
        let team = team.to_string();
        self.0.call(move |c| members(c, &team)).await
    }

    /// A team's members and how many messages to them wait unread, read
    /// together.
    pub async fn members_and_unread(&self, team: &str) -> Result<(Vec<MemberRow>, usize), StoreError> {
        let team = team.to_string();
        self.0.call(move |c| Ok((members(c, &team)?, unread(c, &team)?))).await
    }
}

/// A new team named after `definition`, `-2`, `-3`… after the first.
pub fn create(conn: &Connection, id: &str, definition: &str, approvals: &str) -> Result<TeamRow, StoreError> {
    let mut name = definition.to_string();
    let mut n = 1;
    while conn
        .query_row("SELECT 1 FROM teams WHERE name = ?1", [&name], |_| Ok(()))
        .optional()?
        .is_some()
    {
        n += 1;
        name = format!("{definition}-{n}");
    }
    conn.execute(
        "INSERT INTO teams (id, name, definition, approvals, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id, name, definition, approvals, now_ms()],
    )?;
    get(conn, id)?.ok_or_else(|| StoreError::Corrupt(format!("team {id} vanished")))
}

/// Adds a started member (its run recorded, blocked or not).
pub fn add_member(conn: &Connection, member: &MemberRow) -> Result<(), StoreError> {
    let position: i64 = conn.query_row(
        "SELECT COUNT(*) FROM team_members WHERE team_id = ?1",
        [&member.team_id],
        |r| r.get(0),
    )?;
    conn.execute(
        "INSERT INTO team_members (team_id, member, run_id, role, is_leader, position) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            member.team_id,
            member.member,
            member.run_id,
            member.role,
            member.leader,
            position
        ],
    )?;
    if member.leader {
        conn.execute(
            "UPDATE teams SET leader_run = ?2 WHERE id = ?1",
            params![member.team_id, member.run_id],
        )?;
    }
    Ok(())
}

/// Why the team did not start whole.
pub fn set_problem(conn: &Connection, id: &str, problem: &str) -> Result<(), StoreError> {
    conn.execute("UPDATE teams SET problem = ?2 WHERE id = ?1", params![id, problem])?;
    Ok(())
}

pub fn get(conn: &Connection, id: &str) -> Result<Option<TeamRow>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {TEAM_COLUMNS} FROM teams WHERE id = ?1"),
            [id],
            team_from,
        )
        .optional()?)
}

/// A team by name, id or id prefix (an exact name first); `Err` names the
/// teams a prefix matches when it matches more than one.
pub fn resolve(conn: &Connection, reference: &str) -> Result<Result<Option<TeamRow>, Vec<String>>, StoreError> {
    let named = conn
        .query_row(
            &format!("SELECT {TEAM_COLUMNS} FROM teams WHERE name = ?1 OR id = ?1"),
            [reference],
            team_from,
        )
        .optional()?;
    if named.is_some() {
        return Ok(Ok(named));
    }
    let escaped = reference.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    let mut stmt = conn.prepare(&format!(
        "SELECT {TEAM_COLUMNS} FROM teams WHERE id LIKE ?1 || '%' ESCAPE '\\' LIMIT 6"
    ))?;
    let mut found: Vec<TeamRow> = stmt.query_map([escaped], team_from)?.collect::<Result<_, _>>()?;
    Ok(match found.len() {
        0 | 1 => Ok(found.pop()),
        _ => Err(found.into_iter().map(|t| t.name).collect()),
    })
}

/// The newest teams first.
pub fn list(conn: &Connection, limit: usize) -> Result<Vec<TeamRow>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut stmt = conn.prepare(&format!(
        "SELECT {TEAM_COLUMNS} FROM teams ORDER BY created_at DESC, id DESC LIMIT ?1"
    ))?;
    let rows = stmt.query_map([limit], team_from)?.collect::<Result<_, _>>()?;
    Ok(rows)
}

/// A team's members, the leader first, then in the order they started.
pub fn members(conn: &Connection, team: &str) -> Result<Vec<MemberRow>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {MEMBER_COLUMNS} FROM team_members WHERE team_id = ?1 ORDER BY is_leader DESC, position"
    ))?;
    let rows = stmt.query_map([team], member_from)?.collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Messages to a team's members not yet typed into them.
pub fn unread(conn: &Connection, team: &str) -> Result<usize, StoreError> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM mail m JOIN team_members t ON t.run_id = m.to_run AND t.team_id = ?1
         LEFT JOIN prompts p ON p.id = m.id
         WHERE m.state = 'stored' OR p.state = 'queued'",
        [team],
        |r| r.get(0),
    )?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// The team seat of a run, when it is a member of one.
pub fn seat_of(conn: &Connection, run: &str) -> Result<Option<MemberRow>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {MEMBER_COLUMNS} FROM team_members WHERE run_id = ?1"),
            [run],
            member_from,
        )
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        conn
    }

    #[test]
    fn a_second_team_of_a_definition_gets_a_name_of_its_own() {
        let c = conn();
        assert_eq!(create(&c, "01A", "review", "user").unwrap().name, "review");
        assert_eq!(create(&c, "01B", "review", "user").unwrap().name, "review-2");
        assert_eq!(resolve(&c, "review-2").unwrap().unwrap().unwrap().id, "01B");
        assert_eq!(resolve(&c, "01").unwrap().unwrap_err(), vec!["review", "review-2"]);
        assert_eq!(resolve(&c, "nosuch").unwrap().unwrap(), None);
        assert_eq!(list(&c, 10).unwrap().len(), 2);
    }
}
