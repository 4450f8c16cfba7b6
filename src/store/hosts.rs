//! Remote hosts (the `hosts` table, migration 6): where each lives and
//! which agents binary answers there. Their runs are mirrors in `runs`
//! (`store::mirrors`).

use rusqlite::{Connection, OptionalExtension, params};

use super::{Store, StoreError};

#[derive(Debug, Clone, PartialEq)]
pub struct HostRow {
    pub name: String,
    /// Where SSH reaches it; empty for a host reached by `command`.
    pub target: String,
    pub remote_bin: String,
    pub remote_home: Option<String>,
    pub created_at: i64,
    /// A host reached by running this command here (migration 20).
    pub command: Option<HostCommand>,
}

/// A command that yields a stdin/stdout on the host (`docker exec -i
/// devbox`): each remote command is one run of it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostCommand {
    pub words: Vec<String>,
    /// It takes the remote command as one line for a shell there, as
    /// `ssh` does; otherwise as words (`sh -c LINE`), as `docker exec`.
    pub shell_line: bool,
}

/// `store.hosts()`: the stored hosts, each call on the owner thread.
pub struct Hosts<'a>(&'a Store);

impl Store {
    pub fn hosts(&self) -> Hosts<'_> {
        Hosts(self)
    }
}

impl Hosts<'_> {
    /// Stores a new host; `false` when one of that name exists.
    pub async fn add(&self, host: HostRow) -> Result<bool, StoreError> {
        self.0.call(move |c| insert(c, &host)).await
    }

    pub async fn get(&self, name: &str) -> Result<Option<HostRow>, StoreError> {
        let name = name.to_string();
        self.0.call(move |c| get(c, &name)).await
    }

    /// Every host, by name.
    pub async fn list(&self) -> Result<Vec<HostRow>, StoreError> {
        self.0.call(|c| list(c)).await
    }

    /// Every host with the number of its runs that have not ended.
    pub async fn list_with_live_runs(&self) -> Result<Vec<(HostRow, usize)>, StoreError> {
        self.0
            .call(|c| {
                list(c)?
                    .into_iter()
                    .map(|h| {
                        let live = super::mirrors::live_on(c, &h.name)?.len();
                        Ok((h, live))
                    })
                    .collect()
            })
            .await
    }

    /// Points the host at another agents binary (`hosts install`).
    pub async fn set_remote_bin(&self, name: &str, remote_bin: &str) -> Result<bool, StoreError> {
        let (name, remote_bin) = (name.to_string(), remote_bin.to_string());
        self.0
            .call(move |c| Ok(c.execute("UPDATE hosts SET remote_bin = ?2 WHERE name = ?1", [name, remote_bin])? == 1))
            .await
    }

    pub async fn remove(&self, name: &str) -> Result<bool, StoreError> {
        let name = name.to_string();
        self.0
            .call(move |c| Ok(c.execute("DELETE FROM hosts WHERE name = ?1", [name])? == 1))
            .await
    }
}

fn insert(conn: &Connection, host: &HostRow) -> Result<bool, StoreError> {
    let words = host
        .command
        .as_ref()
        .map(|c| serde_json::to_string(&c.words).expect("words serialize"));
    let shell_line = host.command.as_ref().is_some_and(|c| c.shell_line);
    let changed = conn.execute(
        "INSERT OR IGNORE INTO hosts (name, target, remote_bin, remote_home, created_at, command, shell_line)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            host.name,
            host.target,
            host.remote_bin,
            host.remote_home,
            host.created_at,
            words,
            shell_line
        ],
    )?;
    Ok(changed == 1)
}

fn get(conn: &Connection, name: &str) -> Result<Option<HostRow>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT name, target, remote_bin, remote_home, created_at, command, shell_line FROM hosts WHERE name = ?1",
            [name],
            from_row,
        )
        .optional()?)
}

fn list(conn: &Connection) -> Result<Vec<HostRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT name, target, remote_bin, remote_home, created_at, command, shell_line FROM hosts ORDER BY name",
    )?;
    let rows = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
    Ok(rows)
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HostRow> {
    Ok(HostRow {
        name: r.get(0)?,
        target: r.get(1)?,
        remote_bin: r.get(2)?,
        remote_home: r.get(3)?,
        created_at: r.get(4)?,
        command: r.get::<_, Option<String>>(5)?.map(|words| HostCommand {
            // Written by `insert` only; a hand-edited row that does not
            // parse is a command of no words, refused when used.
            words: serde_json::from_str(&words).unwrap_or_default(),
            shell_line: r.get(6).unwrap_or(false),
        }),
    })
}
