//! Numbered schema migrations, tracked in `PRAGMA user_version`. Append only:
//! a released migration never changes.

use rusqlite::Connection;

use super::StoreError;

const MIGRATIONS: &[&str] = &[
    // 1: runs, attempts, sessions, events.
    r#"
    CREATE TABLE runs (
        id              TEXT PRIMARY KEY,
        name            TEXT NOT NULL,
        harness         TEXT NOT NULL,
        host            TEXT NOT NULL DEFAULT 'local',
        cwd             TEXT NOT NULL,
        command         TEXT NOT NULL,          -- JSON array of argv
        state           TEXT NOT NULL,
        status          TEXT NOT NULL DEFAULT 'unknown',
        parent_run_id   TEXT REFERENCES runs(id),
        root_run_id     TEXT NOT NULL,
        detached        INTEGER NOT NULL DEFAULT 0,
        session_id      TEXT,
        launch_id       TEXT NOT NULL,
        pid             INTEGER,
        pgid            INTEGER,
        proc_start      INTEGER,                -- /proc/<pid>/stat starttime, clock ticks
        boot_id         TEXT,
        supervisor_pid  INTEGER,
        supervisor_start INTEGER,
        exit_code       INTEGER,
        signal          TEXT,
        reason          TEXT,
        created_at      INTEGER NOT NULL,       -- ms since the epoch
        started_at      INTEGER,
        ended_at        INTEGER,
        rows            INTEGER NOT NULL,
        cols            INTEGER NOT NULL,
        timeout_secs    INTEGER,
        worktree        TEXT,
        output_bytes    INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX runs_by_parent ON runs(parent_run_id);
    CREATE INDEX runs_by_state ON runs(state);
    CREATE UNIQUE INDEX runs_by_name ON runs(name);

    CREATE TABLE attempts (
        run_id      TEXT NOT NULL REFERENCES runs(id),
        n           INTEGER NOT NULL,
        harness     TEXT NOT NULL,
        version     TEXT,
        profile     TEXT,
        started_at  INTEGER NOT NULL,
        outcome     TEXT,
        PRIMARY KEY (run_id, n)
    );

    CREATE TABLE sessions (
        id              TEXT PRIMARY KEY,
        harness         TEXT NOT NULL,
        run_id          TEXT REFERENCES runs(id),
        transcript_path TEXT,
        created_at      INTEGER NOT NULL
    );

    CREATE TABLE events (
        run_id  TEXT NOT NULL REFERENCES runs(id),
        seq     INTEGER NOT NULL,
        kind    TEXT NOT NULL,
        at      INTEGER NOT NULL,
        data    TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID;
    "#,
    // 2: the prompt queue, so prompts sent to a busy agent survive a daemon restart.
    r#"
    CREATE TABLE prompts (
        id           TEXT PRIMARY KEY,          -- minted by the client
        run_id       TEXT NOT NULL REFERENCES runs(id),
        text         TEXT NOT NULL,
        state        TEXT NOT NULL,             -- queued | delivered | dropped
        created_at   INTEGER NOT NULL,
        delivered_at INTEGER
    );
    CREATE INDEX prompts_by_run ON prompts(run_id, state, created_at);
    "#,
    // 3: the harness arguments as given, so a run can be started again.
    r#"
    ALTER TABLE runs ADD COLUMN args TEXT NOT NULL DEFAULT '[]';
    "#,
    // 4: harness transcripts, normalized and indexed for search (docs/design.md §7).
    // run_id and session_id are plain text, not foreign keys: a transcript
    // may be indexed before its run or session row exists, or without one.
    r#"
    CREATE TABLE transcript_sources (
        path            TEXT PRIMARY KEY,
        session_id      TEXT NOT NULL,
        run_id          TEXT,
        format          TEXT NOT NULL,          -- claude | codex | gemini | aider
        agent_id        TEXT,                   -- a subagent's file: its agent id
        offset          INTEGER NOT NULL DEFAULT 0,  -- bytes read (Gemini: records)
        file_id         TEXT,                   -- dev:inode the offset belongs to
        seen            TEXT,                   -- size and mtime when last read
        state           TEXT,                   -- the reader's own state, JSON
        provisional_seq INTEGER,                -- messages from here on are read again
        lines           INTEGER NOT NULL DEFAULT 0,
        malformed       INTEGER NOT NULL DEFAULT 0,
        unknown         INTEGER NOT NULL DEFAULT 0,
        indexed_at      INTEGER,
        -- this file's share of its session's tokens (forgotten if it is replaced)
        input_tokens        INTEGER NOT NULL DEFAULT 0,
        output_tokens       INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens   INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens  INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX transcript_sources_by_session ON transcript_sources(session_id);

    CREATE TABLE transcript_sessions (
        session_id          TEXT PRIMARY KEY,
        run_id              TEXT,
        format              TEXT NOT NULL,
        model               TEXT,
        next_seq            INTEGER NOT NULL DEFAULT 0,
        messages            INTEGER NOT NULL DEFAULT 0,
        input_tokens        INTEGER NOT NULL DEFAULT 0,
        output_tokens       INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens   INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens  INTEGER NOT NULL DEFAULT 0,
        first_at            INTEGER,
        last_at             INTEGER
    );
    CREATE INDEX transcript_sessions_by_run ON transcript_sessions(run_id);

    CREATE TABLE transcript_messages (
        id                  INTEGER PRIMARY KEY,
        session_id          TEXT NOT NULL,
        run_id              TEXT,
        seq                 INTEGER NOT NULL,   -- dense per session, in reading order
        role                TEXT NOT NULL,      -- user | assistant | system | tool
        text                TEXT NOT NULL,
        tool_names          TEXT,               -- space-separated names of the tools called
        parts               TEXT,               -- JSON: tool calls and the tool result
        input_tokens        INTEGER,
        output_tokens       INTEGER,
        cache_read_tokens   INTEGER,
        cache_write_tokens  INTEGER,
        model               TEXT,
        at                  INTEGER,            -- ms since the epoch
        uuid                TEXT,
        parent_uuid         TEXT,
        agent_id            TEXT,
        sidechain           INTEGER NOT NULL DEFAULT 0,
        parent_tool_use_id  TEXT,
        source              TEXT NOT NULL,
        offset              INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX transcript_messages_by_session ON transcript_messages(session_id, seq);

    -- Full-text search over message text, without a second copy of it.
    CREATE VIRTUAL TABLE transcript_fts USING fts5(
        text, content = 'transcript_messages', content_rowid = 'id'
    );
    -- Fewer, larger segments: the pending terms of a whole indexing step
    -- (4 MiB of transcript) are flushed once, and merged 16 at a time
    -- instead of 4. Measured on benches/transcript_index.rs: 3.7 s → 2.6 s
    -- of CPU for 100 MB, searches no slower.
    INSERT INTO transcript_fts(transcript_fts, rank) VALUES ('automerge', 16);
    INSERT INTO transcript_fts(transcript_fts, rank) VALUES ('hashsize', 16777216);
    CREATE TRIGGER transcript_fts_insert AFTER INSERT ON transcript_messages BEGIN
        INSERT INTO transcript_fts(rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER transcript_fts_delete AFTER DELETE ON transcript_messages BEGIN
        INSERT INTO transcript_fts(transcript_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;
    "#,
    // 5: what harness hooks teach: a run's subagents (Claude `Task`/`Agent`
    // sidechains, docs/design.md §7 lineage), and whether a run's name may still
    // follow its first prompt ('given' by the user, 'harness' while it is the
    // placeholder, 'prompt' once taken from one).
    r#"
    CREATE TABLE subagents (
        run_id          TEXT NOT NULL REFERENCES runs(id),
        agent_id        TEXT NOT NULL,
        session_id      TEXT,
        agent_type      TEXT,
        transcript_path TEXT,
        started_at      INTEGER NOT NULL,
        ended_at        INTEGER,
        PRIMARY KEY (run_id, agent_id)
    );
    ALTER TABLE runs ADD COLUMN name_source TEXT NOT NULL DEFAULT 'given';
    CREATE INDEX sessions_by_run ON sessions(run_id);
    "#,
    // 6: remote hosts reached over SSH (docs/design.md §8); their runs are mirrored
    // in `runs` with `host` set to the host's name.
    r#"
    CREATE TABLE hosts (
        name        TEXT PRIMARY KEY,
        target      TEXT NOT NULL,              -- user@host[:port] or an ~/.ssh/config alias
        remote_bin  TEXT NOT NULL,              -- the agents binary on the host
        remote_home TEXT,                       -- AGENTS_HOME on the host
        created_at  INTEGER NOT NULL
    );
    CREATE INDEX runs_by_host ON runs(host, state);
    "#,
    // 7: lineage and recovery (docs/design.md §7): a subagent's task description;
    // when each attempt of a run ended and why (account fallback); resume
    // and fork edges found without scanning every event.
    r#"
    ALTER TABLE subagents ADD COLUMN description TEXT;
    ALTER TABLE attempts ADD COLUMN ended_at INTEGER;
    ALTER TABLE attempts ADD COLUMN reason TEXT;
    CREATE INDEX events_lineage ON events(kind) WHERE kind IN ('RESUME_OF', 'FORK_OF');
    "#,
    // 8: a repeated `runs.start` finds the run its launch id made without
    // scanning every run (engine/once.rs). Not unique: a database may
    // already hold a launch id twice, and the lookup takes the first.
    r#"
    CREATE INDEX runs_by_launch ON runs(launch_id);
    "#,
    // 9: `runs.list` totals the tokens of a page of runs in one query
    // (store/usage.rs): their files by run, and the models each file's
    // messages name from this index alone, never the messages' rows (a page
    // of 1000 runs with 60 000 messages: 190 ms → 17 ms).
    r#"
    CREATE INDEX transcript_sources_by_run ON transcript_sources(run_id);
    CREATE INDEX transcript_messages_models ON transcript_messages(session_id, source, model)
        WHERE model IS NOT NULL;
    "#,
    // 10: tokens per session and file, not per file: aider writes every
    // chat of a repository to one history file, which a later run's session
    // takes over (`hand_over_source`); the earlier run keeps its chat's
    // tokens in its own row. `run_id` is the run that read the file for the
    // session (kept when the file changes hands).
    r#"
    CREATE TABLE transcript_usage (
        session_id          TEXT NOT NULL,
        source              TEXT NOT NULL,
        run_id              TEXT,
        agent_id            TEXT,
        input_tokens        INTEGER NOT NULL DEFAULT 0,
        output_tokens       INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens   INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens  INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, source)
    ) WITHOUT ROWID;
    CREATE INDEX transcript_usage_by_run ON transcript_usage(run_id);
    INSERT INTO transcript_usage (session_id, source, run_id, agent_id, input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens)
    SELECT session_id, path, run_id, agent_id, input_tokens, output_tokens, cache_read_tokens,
        cache_write_tokens
    FROM transcript_sources;
    ALTER TABLE transcript_sources DROP COLUMN input_tokens;
    ALTER TABLE transcript_sources DROP COLUMN output_tokens;
    ALTER TABLE transcript_sources DROP COLUMN cache_read_tokens;
    ALTER TABLE transcript_sources DROP COLUMN cache_write_tokens;
    "#,
    // 11: a rerun names the run it repeats (`RERUN_OF`), found as resume and
    // fork edges are.
    r#"
    DROP INDEX events_lineage;
    CREATE INDEX events_lineage ON events(kind) WHERE kind IN ('RESUME_OF', 'FORK_OF', 'RERUN_OF');
    "#,
    // 12: the mailbox. A message is stored before it is handed to its run
    // (as a prompt with the message's id), so one stored but not handed
    // over when the daemon died is handed over at the next start, once.
    r#"
    CREATE TABLE mail (
        id           TEXT PRIMARY KEY,          -- minted by the sender
        version      INTEGER NOT NULL,
        from_run     TEXT,                      -- NULL: the user
        from_name    TEXT NOT NULL,
        to_run       TEXT NOT NULL REFERENCES runs(id),
        thread       TEXT NOT NULL,
        in_reply_to  TEXT,
        at           INTEGER NOT NULL,
        body         TEXT NOT NULL,
        state        TEXT NOT NULL              -- stored | handed
    );
    CREATE INDEX mail_to ON mail(to_run, at);
    CREATE INDEX mail_from ON mail(from_run, at);
    CREATE INDEX mail_stored ON mail(state) WHERE state = 'stored';
    "#,
    // 13: teams. A team started from a definition, and each of its members:
    // a run, under the name the others mail it by.
    r#"
    CREATE TABLE teams (
        id           TEXT PRIMARY KEY,
        name         TEXT NOT NULL UNIQUE,      -- this team: the definition's name, or name-2...
        definition   TEXT NOT NULL,             -- the definition it was started from
        approvals    TEXT NOT NULL,             -- user | leader
        leader_run   TEXT REFERENCES runs(id),
        problem      TEXT,                      -- why it did not start whole
        created_at   INTEGER NOT NULL
    );
    CREATE TABLE team_members (
        team_id      TEXT NOT NULL REFERENCES teams(id),
        member       TEXT NOT NULL,
        run_id       TEXT NOT NULL REFERENCES runs(id),
        role         TEXT,
        is_leader    INTEGER NOT NULL,
        position     INTEGER NOT NULL,
        PRIMARY KEY (team_id, member)
    );
    CREATE INDEX team_members_run ON team_members(run_id);
    "#,
    // 14: routines (docs/design.md §13). A run a routine started, or a fire
    // that could not happen (state 'skipped', no session), names its
    // routine and the time it was scheduled for; each routine's pause, the
    // time up to which its fires were handled (so a restarted daemon
    // records the ones it missed) and the fires queued behind a run. And
    // retention: when an ended run's output log was pruned (its record
    // stays).
    r#"
    ALTER TABLE runs ADD COLUMN log_pruned_at INTEGER;
    ALTER TABLE runs ADD COLUMN routine TEXT;
    ALTER TABLE runs ADD COLUMN scheduled_at INTEGER;
    CREATE INDEX runs_by_routine ON runs(routine, scheduled_at) WHERE routine IS NOT NULL;
    CREATE TABLE routines (
        name        TEXT PRIMARY KEY,
        paused      INTEGER NOT NULL DEFAULT 0,
        checked_to  INTEGER,                    -- ms, the scheduler's clock
        queued      TEXT NOT NULL DEFAULT '[]'  -- JSON array of scheduled times (ms)
    );
    "#,
    // 15: the outbox of a host. Mail a run placed here by another daemon
    // sent to an address only that daemon knows, held until it has taken
    // the message (`pulled_by`: the epoch of the connection that took it
    // last) and said it is delivered.
    r#"
    CREATE TABLE mail_outbox (
        id           TEXT PRIMARY KEY,          -- minted by the sender
        version      INTEGER NOT NULL,
        from_run     TEXT NOT NULL REFERENCES runs(id),
        to_addr      TEXT NOT NULL,             -- as the sender wrote it
        thread       TEXT NOT NULL,
        in_reply_to  TEXT,
        at           INTEGER NOT NULL,
        body         TEXT NOT NULL,
        pulled_by    TEXT
    );
    CREATE INDEX mail_outbox_from ON mail_outbox(from_run, at);
    "#,
    // 16: every name a run has worn keeps finding it (`former_names`,
    // recorded at each rename; the renames before this migration read back
    // from their `RENAMED` events). A name is unique among live runs only:
    // a resumed or rerun run may wear the name of the ended run it repeats,
    // and a reference finds the newest run wearing it.
    r#"
    CREATE TABLE former_names (
        run_id  TEXT NOT NULL REFERENCES runs(id),
        name    TEXT NOT NULL,
        until   INTEGER NOT NULL,              -- ms: when the run stopped wearing it
        PRIMARY KEY (run_id, name)
    );
    CREATE INDEX former_names_by_name ON former_names(name);
    INSERT OR IGNORE INTO former_names (run_id, name, until)
        SELECT run_id, json_extract(data, '$.from'), at FROM events
        WHERE kind = 'RENAMED' AND json_extract(data, '$.from') IS NOT NULL
          AND run_id IN (SELECT id FROM runs);
    DROP INDEX runs_by_name;
    CREATE INDEX runs_by_name ON runs(name);
    CREATE UNIQUE INDEX runs_by_live_name ON runs(name) WHERE state IN ('pending', 'starting', 'running');
    "#,
    // 17: a list of thousands of live runs read in id order without a
    // sort, and their waiting prompts in one read, not a probe a run.
    r#"
    CREATE INDEX runs_live ON runs(id) WHERE state IN ('pending', 'starting', 'running');
    CREATE INDEX prompts_queued ON prompts(run_id, created_at) WHERE state = 'queued';
    "#,
    // 18: a prompt still queued when its run ends is `undelivered`, saying
    // why; those left queued by runs that ended before are, too.
    r#"
    ALTER TABLE prompts ADD COLUMN reason TEXT;
    UPDATE prompts SET state = 'undelivered', reason = 'the run ended',
           delivered_at = (SELECT ended_at FROM runs WHERE runs.id = prompts.run_id)
     WHERE state = 'queued'
       AND run_id IN (SELECT id FROM runs WHERE state NOT IN ('pending', 'starting', 'running'));
    INSERT INTO prompts (id, run_id, text, state, created_at, reason, delivered_at)
    SELECT m.id, m.to_run, m.body, 'undelivered', m.at, 'the run ended', r.ended_at
      FROM mail m JOIN runs r ON r.id = m.to_run
     WHERE m.state = 'stored' AND r.state NOT IN ('pending', 'starting', 'running')
    ON CONFLICT(id) DO NOTHING;
    UPDATE mail SET state = 'handed'
     WHERE state = 'stored'
       AND to_run IN (SELECT id FROM runs WHERE state NOT IN ('pending', 'starting', 'running'));
    "#,
    // 19: how a run is boxed (`--sandbox`): `on`, `offline`, or none.
    r#"
    ALTER TABLE runs ADD COLUMN sandbox TEXT;
    "#,
    // 20: a host reached by a command instead of SSH: its words (JSON),
    // and whether it takes the remote command as one shell line.
    r#"
    ALTER TABLE hosts ADD COLUMN command TEXT;
    ALTER TABLE hosts ADD COLUMN shell_line INTEGER NOT NULL DEFAULT 0;
    "#,
];

pub const LATEST_VERSION: i64 = MIGRATIONS.len() as i64;

pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    migrate_to(conn, LATEST_VERSION)
}

/// Applies migrations up to `target`. Public to the crate so tests can build
/// a database at every older version.
pub(crate) fn migrate_to(conn: &mut Connection, target: i64) -> Result<(), StoreError> {
    let found = refuse_newer(conn)?;
    for version in found..target {
        let tx = conn.transaction()?;
        tx.execute_batch(MIGRATIONS[version as usize])?;
        tx.pragma_update(None, "user_version", version + 1)?;
        tx.commit()?;
    }
    Ok(())
}

/// The schema version, unless it is newer than this build understands.
pub(crate) fn refuse_newer(conn: &Connection) -> Result<i64, StoreError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > LATEST_VERSION {
        return Err(StoreError::TooNew {
            found,
            latest: LATEST_VERSION,
        });
    }
    Ok(found)
}

#[cfg(test)]
#[path = "migrations_tests.rs"]
mod tests;
