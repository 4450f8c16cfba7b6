//! Remote hosts (the `hosts` table, migration 6): where each lives and
//! which agents binary answers there. Their runs are mirrors in `runs`
//! (`store::mirrors`).

use rusqlite::{Connection, OptionalExtension, params};

use super::{Store, StoreError};

#[derive(Debug, Clone, PartialEq)]
pub struct HostRow {
    pub name: String,
    pub target: String,
    pub remote_bin: String,
    pub remote_home: Option<String>,
    pub created_at: i64,
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
    let changed = conn.execute(
        "INSERT OR IGNORE INTO hosts (name, target, remote_bin, remote_home, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            host.name,
            host.target,
            host.remote_bin,
            host.remote_home,
            host.created_at
        ],
    )?;
    Ok(changed == 1)
}

fn get(conn: &Connection, name: &str) -> Result<Option<HostRow>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT name, target, remote_bin, remote_home, created_at FROM hosts WHERE name = ?1",
            [name],
            from_row,
        )
        .optional()?)
}

fn list(conn: &Connection) -> Result<Vec<HostRow>, StoreError> {
    let mut stmt = conn.prepare("SELECT name, target, remote_bin, remote_home, created_at FROM hosts ORDER BY name")?;
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
    })
}
