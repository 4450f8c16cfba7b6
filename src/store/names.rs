//! A run's names: the one it wears, unique among live runs, and the ones it
//! wore before (`former_names`, migration 16), which keep finding it — a
//! user who saw `claude-1` before its first prompt renamed it can still
//! type `claude-1`. `runs::resolve` reads them; this file writes them.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use super::harness::{NAME_GIVEN, NAME_PLACEHOLDER};
use super::runs::append_event;
use super::{Store, StoreError, now_ms};
use crate::api::Relation;

/// Run states a name is exclusive in (the partial unique index of
/// migration 16 says the same).
const LIVE: &str = "state IN ('pending', 'starting', 'running')";

/// Names chosen for runs being started whose rows are not stored yet. A
/// start chooses its name in one store call and stores its row in a later
/// one (its harness is prepared between), so two starts at once took the
/// same free name and the second failed on the unique index. A name is
/// held from its choice (on the store's thread, so choices are one at a
/// time) until its row is stored or the start gives up. One set for the
/// process: a name another store holds is only passed over.
static HELD: std::sync::LazyLock<parking_lot::Mutex<std::collections::HashSet<String>>> =
    std::sync::LazyLock::new(Default::default);

/// The N of every `BASE-N` a run wears or wore, in one read of the names
/// index (asking name after name made 3,000 starts quadratic: 48 s).
fn numbers_taken(conn: &Connection, base: &str) -> Result<std::collections::HashSet<u64>, StoreError> {
    // Every name from `BASE-` up to `BASE.` ('.' follows '-'): those
    // starting `BASE-`.
    let (from, to) = (format!("{base}-"), format!("{base}."));
    let mut statement = conn.prepare_cached(
        "SELECT name FROM runs WHERE name >= ?1 AND name < ?2 \
         UNION SELECT name FROM former_names WHERE name >= ?1 AND name < ?2",
    )?;
    let names = statement.query_map([&from, &to], |r| r.get::<_, String>(0))?;
    let mut taken = std::collections::HashSet::new();
    for name in names {
        if let Some(n) = name?.strip_prefix(&from).and_then(|n| n.parse::<u64>().ok()) {
            taken.insert(n);
        }
    }
    Ok(taken)
}

/// Whether a start holds `name` (see [`HELD`]).
pub fn is_held(name: &str) -> bool {
    HELD.lock().contains(name)
}

/// A name held for a run being started; free again once dropped, by
/// which time its row, if stored, wears it.
#[derive(Debug)]
pub struct Held(String);

impl Held {
    fn new(name: String) -> Held {
        HELD.lock().insert(name.clone());
        Held(name)
    }

    pub fn name(&self) -> &str {
        &self.0
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.lock().remove(&self.0);
    }
}

/// `store.names()`: the names runs wear and the free ones to give.
pub struct Names<'a>(&'a Store);

impl Store {
    pub fn names(&self) -> Names<'_> {
        Names(self)
    }
}

impl Names<'_> {
    /// `BASE-1`, `BASE-2`…: the first no run wears or wore, held for a
    /// run about to be stored.
    pub async fn first_free(&self, base: &str) -> Result<Held, StoreError> {
        let base = base.to_string();
        self.0
            .call(move |c| {
                let taken = numbers_taken(c, &base)?;
                let free = (1..)
                    .find(|n| !taken.contains(n) && !is_held(&format!("{base}-{n}")))
                    .expect("the numbers are unbounded");
                Ok(Held::new(format!("{base}-{free}")))
            })
            .await
    }

    /// `base`, or `base-N` for the first free N (`harness::unique_name`),
    /// for a run started with it as its given name.
    pub async fn unique(&self, base: &str) -> Result<String, StoreError> {
        let base = base.to_string();
        self.0.call(move |c| super::harness::unique_name(c, &base)).await
    }

    /// As [`Names::unique`], held for a run about to be stored.
    pub async fn hold_unique(&self, base: &str) -> Result<Held, StoreError> {
        let base = base.to_string();
        self.0
            .call(move |c| super::harness::unique_name(c, &base).map(Held::new))
            .await
    }

    /// `name`, held for a run about to be stored; none when a live run
    /// wears it or another start holds it.
    pub async fn hold_given(&self, name: &str) -> Result<Option<Held>, StoreError> {
        let name = name.to_string();
        self.0
            .call(move |c| match live_holder(c, &name)?.is_some() || is_held(&name) {
                true => Ok(None),
                false => Ok(Some(Held::new(name))),
            })
            .await
    }

    /// The name a rerun or resume of `run` takes (see [`repeated`]).
    pub async fn repeated(&self, run: &str) -> Result<Option<String>, StoreError> {
        let run = run.to_string();
        self.0.call(move |c| repeated(c, &run)).await
    }

    /// The live run wearing `name`, if one does.
    pub async fn live_holder(&self, name: &str) -> Result<Option<String>, StoreError> {
        let name = name.to_string();
        self.0.call(move |c| live_holder(c, &name)).await
    }

    /// Renames `run` to `name` (see [`rename`]).
    pub async fn rename(&self, run: &str, name: &str) -> Result<Result<String, Refused>, StoreError> {
        let (run, name) = (run.to_string(), name.to_string());
        self.0.call(move |c| rename(c, &run, &name)).await
    }
}

/// Records that `run` no longer wears `name`; a name worn again and left
/// again counts from the later time.
pub fn record_former(conn: &Connection, run: &str, name: &str) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO former_names (run_id, name, until) VALUES (?1, ?2, ?3)
         ON CONFLICT(run_id, name) DO UPDATE SET until = excluded.until",
        params![run, name, now_ms()],
    )?;
    Ok(())
}

/// The live run wearing `name`, if one does.
pub fn live_holder(conn: &Connection, name: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT id FROM runs WHERE name = ?1 AND {LIVE} LIMIT 1"),
            [name],
            |r| r.get(0),
        )
        .optional()?)
}

/// The name a run that repeats one named `base` keeps (a rerun, a resume):
/// `base` itself unless a live run wears it, else `base-2`, `base-3`… —
/// the first no live run wears. An ended run may wear the same name: a
/// reference finds the newest.
pub fn kept(conn: &Connection, base: &str) -> Result<String, StoreError> {
    if live_holder(conn, base)?.is_none() {
        return Ok(base.to_string());
    }
    // Room for `-NNNNN` within the 64 characters a name may have.
    let cut: String = base.chars().take(58).collect();
    for n in 2.. {
        let candidate = format!("{cut}-{n}");
        if live_holder(conn, &candidate)?.is_none() {
            return Ok(candidate);
        }
    }
    unreachable!("the loop above is unbounded")
}

/// The name a run repeating `run` wears (a rerun, a resume of its
/// session): the name `run` wears when the user or its first prompt gave
/// it, [`kept`] — less the number `run` took only because the run it
/// repeats was live then (`worker-2`, a rerun of `worker`, is repeated as
/// `worker`). `None` for the engine's placeholder (`claude-7`): the new
/// run gets one of its own, and its first prompt may still name it.
pub fn repeated(conn: &Connection, run: &str) -> Result<Option<String>, StoreError> {
    let current: Option<(String, String)> = conn
        .query_row("SELECT name, name_source FROM runs WHERE id = ?1", [run], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let Some((name, source)) = current else { return Ok(None) };
    if source == NAME_PLACEHOLDER {
        return Ok(None);
    }
    let before = match super::lineage::edge_of(conn, run)? {
        Some(edge) if edge.relation != Relation::ForkOf => match edge.from_run {
            Some(from) => conn
                .query_row("SELECT name FROM runs WHERE id = ?1", [from], |r| r.get::<_, String>(0))
                .optional()?,
            None => None,
        },
        _ => None,
    };
    let base = match before {
        Some(before)
            if name
                .strip_prefix(before.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
        {
            before
        }
        _ => name,
    };
    Ok(Some(kept(conn, &base)?))
}

/// Why a rename was not made.
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// The run is not in the store.
    NoRun,
    /// A live run (this id) wears the name.
    Taken(String),
}

/// Renames `run` to `name` (checked by the caller) as the user's own name,
/// so no prompt renames it again and a rerun or resume keeps it. The old
/// name becomes a former one; `RENAMED` says both. Returns the old name
/// (the same as `name` when there was nothing to do).
pub fn rename(conn: &mut Connection, run: &str, name: &str) -> Result<Result<String, Refused>, StoreError> {
    let tx = conn.transaction()?;
    let old: Option<String> = tx
        .query_row("SELECT name FROM runs WHERE id = ?1", [run], |r| r.get(0))
        .optional()?;
    let Some(old) = old else { return Ok(Err(Refused::NoRun)) };
    if old == name {
        return Ok(Ok(old));
    }
    if let Some(holder) = live_holder(&tx, name)?.filter(|h| h != run) {
        return Ok(Err(Refused::Taken(holder)));
    }
    tx.execute(
        "UPDATE runs SET name = ?2, name_source = ?3 WHERE id = ?1",
        params![run, name, NAME_GIVEN],
    )?;
    record_former(&tx, run, &old)?;
    // Worn again: it is the current name, not a former one.
    tx.execute(
        "DELETE FROM former_names WHERE run_id = ?1 AND name = ?2",
        params![run, name],
    )?;
    append_event(&tx, run, "RENAMED", &json!({ "from": old, "to": name, "by": "user" }))?;
    tx.commit()?;
    Ok(Ok(old))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::RunState;
    use crate::store::runs::{self, NewRun, Resolved, RunRow};

    fn store() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open_migrated(&dir.path().join("agents.db")).unwrap();
        (dir, conn)
    }

    fn add(conn: &Connection, id: &str, name: &str, state: RunState) {
        let row = RunRow::new(NewRun {
            id: id.into(),
            name: name.into(),
            harness: "cmd".into(),
            host: "local".into(),
            cwd: "/".into(),
            command: vec!["true".into()],
            args: Vec::new(),
        });
        runs::insert_run(conn, &RunRow { state, ..row }).unwrap();
    }

    fn found(conn: &Connection, reference: &str) -> Resolved {
        runs::resolve(conn, reference).unwrap()
    }

    #[test]
    fn the_numbers_taken_are_those_of_names_worn_or_once_worn_and_only_those() {
        let (_dir, mut conn) = store();
        add(&conn, "01A", "cmd-1", RunState::Running);
        add(&conn, "01B", "cmd-3", RunState::Succeeded);
        add(&conn, "01C", "cmd-4", RunState::Running);
        rename(&mut conn, "01C", "renamed").unwrap().unwrap();
        add(&conn, "01D", "cmd-x", RunState::Running);
        add(&conn, "01E", "cmdline-7", RunState::Running);
        add(&conn, "01F", "cmd", RunState::Running);
        let taken = numbers_taken(&conn, "cmd").unwrap();
        assert_eq!(taken, [1, 3, 4].into_iter().collect());
    }

    #[test]
    fn a_held_name_is_not_made_up_again_and_is_free_once_let_go() {
        let (_dir, conn) = store();
        let held = Held::new("held-test".into());
        assert_eq!(
            super::super::harness::unique_name(&conn, "held-test").unwrap(),
            "held-test-2"
        );
        drop(held);
        assert_eq!(
            super::super::harness::unique_name(&conn, "held-test").unwrap(),
            "held-test"
        );
    }

    #[test]
    fn a_former_name_finds_its_run_until_a_run_wears_it() {
        let (_dir, mut conn) = store();
        add(&conn, "01A", "claude-1", RunState::Running);
        assert_eq!(rename(&mut conn, "01A", "askperm-x").unwrap(), Ok("claude-1".into()));
        assert_eq!(found(&conn, "claude-1"), Resolved::One("01A".into()));
        assert_eq!(found(&conn, "askperm-x"), Resolved::One("01A".into()));
        assert_eq!(runs::get_run(&conn, "01A").unwrap().unwrap().former_names, ["claude-1"]);
        // A newer run wearing it wins; the run keeps its id and new name.
        add(&conn, "01B", "claude-1", RunState::Running);
        assert_eq!(found(&conn, "claude-1"), Resolved::One("01B".into()));
        // Among runs that wore it, the newest.
        assert_eq!(rename(&mut conn, "01B", "other").unwrap(), Ok("claude-1".into()));
        assert_eq!(found(&conn, "claude-1"), Resolved::One("01B".into()));
    }

    #[test]
    fn a_name_a_live_run_wears_is_refused_and_an_ended_ones_is_shared() {
        let (_dir, mut conn) = store();
        add(&conn, "01A", "worker", RunState::Running);
        add(&conn, "01B", "helper", RunState::Running);
        assert_eq!(
            rename(&mut conn, "01B", "worker").unwrap(),
            Err(Refused::Taken("01A".into()))
        );
        assert_eq!(rename(&mut conn, "01C", "x").unwrap(), Err(Refused::NoRun));
        assert_eq!(kept(&conn, "worker").unwrap(), "worker-2");
        add(&conn, "01D", "worker-2", RunState::Pending);
        assert_eq!(kept(&conn, "worker").unwrap(), "worker-3");
        // Ended, its name may be worn again; the newest wearer is found.
        conn.execute("UPDATE runs SET state = 'succeeded' WHERE id = '01A'", [])
            .unwrap();
        assert_eq!(kept(&conn, "worker").unwrap(), "worker");
        add(&conn, "01E", "worker", RunState::Running);
        assert_eq!(found(&conn, "worker"), Resolved::One("01E".into()));
        // Renaming back to a former name takes it off the former list.
        assert_eq!(rename(&mut conn, "01B", "helper-2").unwrap(), Ok("helper".into()));
        assert_eq!(rename(&mut conn, "01B", "helper").unwrap(), Ok("helper-2".into()));
        assert_eq!(runs::get_run(&conn, "01B").unwrap().unwrap().former_names, ["helper-2"]);
    }
}
