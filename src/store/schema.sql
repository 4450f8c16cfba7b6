-- user_version 20
-- index events_lineage
CREATE INDEX events_lineage ON events(kind) WHERE kind IN ('RESUME_OF', 'FORK_OF', 'RERUN_OF');

-- index former_names_by_name
CREATE INDEX former_names_by_name ON former_names(name);

-- index mail_from
CREATE INDEX mail_from ON mail(from_run, at);

-- index mail_outbox_from
CREATE INDEX mail_outbox_from ON mail_outbox(from_run, at);

-- index mail_stored
CREATE INDEX mail_stored ON mail(state) WHERE state = 'stored';

-- index mail_to
CREATE INDEX mail_to ON mail(to_run, at);

-- index prompts_by_run
CREATE INDEX prompts_by_run ON prompts(run_id, state, created_at);

-- index prompts_queued
CREATE INDEX prompts_queued ON prompts(run_id, created_at) WHERE state = 'queued';

-- index runs_by_host
CREATE INDEX runs_by_host ON runs(host, state);

-- index runs_by_launch
CREATE INDEX runs_by_launch ON runs(launch_id);

-- index runs_by_live_name
CREATE UNIQUE INDEX runs_by_live_name ON runs(name) WHERE state IN ('pending', 'starting', 'running');

-- index runs_by_name
CREATE INDEX runs_by_name ON runs(name);

-- index runs_by_parent
CREATE INDEX runs_by_parent ON runs(parent_run_id);

-- index runs_by_routine
CREATE INDEX runs_by_routine ON runs(routine, scheduled_at) WHERE routine IS NOT NULL;

-- index runs_by_state
CREATE INDEX runs_by_state ON runs(state);

-- index runs_live
CREATE INDEX runs_live ON runs(id) WHERE state IN ('pending', 'starting', 'running');

-- index sessions_by_run
CREATE INDEX sessions_by_run ON sessions(run_id);

-- index team_members_run
CREATE INDEX team_members_run ON team_members(run_id);

-- index transcript_messages_by_session
CREATE UNIQUE INDEX transcript_messages_by_session ON transcript_messages(session_id, seq);

-- index transcript_messages_models
CREATE INDEX transcript_messages_models ON transcript_messages(session_id, source, model)
        WHERE model IS NOT NULL;

-- index transcript_sessions_by_run
CREATE INDEX transcript_sessions_by_run ON transcript_sessions(run_id);

-- index transcript_sources_by_run
CREATE INDEX transcript_sources_by_run ON transcript_sources(run_id);

-- index transcript_sources_by_session
CREATE INDEX transcript_sources_by_session ON transcript_sources(session_id);

-- index transcript_usage_by_run
CREATE INDEX transcript_usage_by_run ON transcript_usage(run_id);

-- table attempts
CREATE TABLE attempts (
        run_id      TEXT NOT NULL REFERENCES runs(id),
        n           INTEGER NOT NULL,
        harness     TEXT NOT NULL,
        version     TEXT,
        profile     TEXT,
        started_at  INTEGER NOT NULL,
        outcome     TEXT, ended_at INTEGER, reason TEXT,
        PRIMARY KEY (run_id, n)
    );

-- table events
CREATE TABLE events (
        run_id  TEXT NOT NULL REFERENCES runs(id),
        seq     INTEGER NOT NULL,
        kind    TEXT NOT NULL,
        at      INTEGER NOT NULL,
        data    TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID;

-- table former_names
CREATE TABLE former_names (
        run_id  TEXT NOT NULL REFERENCES runs(id),
        name    TEXT NOT NULL,
        until   INTEGER NOT NULL,              -- ms: when the run stopped wearing it
        PRIMARY KEY (run_id, name)
    );

-- table hosts
CREATE TABLE hosts (
        name        TEXT PRIMARY KEY,
        target      TEXT NOT NULL,              -- user@host[:port] or an ~/.ssh/config alias
        remote_bin  TEXT NOT NULL,              -- the agents binary on the host
        remote_home TEXT,                       -- AGENTS_HOME on the host
        created_at  INTEGER NOT NULL
    , command TEXT, shell_line INTEGER NOT NULL DEFAULT 0);

-- table mail
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

-- table mail_outbox
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

-- table prompts
CREATE TABLE prompts (
        id           TEXT PRIMARY KEY,          -- minted by the client
        run_id       TEXT NOT NULL REFERENCES runs(id),
        text         TEXT NOT NULL,
        state        TEXT NOT NULL,             -- queued | delivered | dropped
        created_at   INTEGER NOT NULL,
        delivered_at INTEGER
    , reason TEXT);

-- table routines
CREATE TABLE routines (
        name        TEXT PRIMARY KEY,
        paused      INTEGER NOT NULL DEFAULT 0,
        checked_to  INTEGER,                    -- ms, the scheduler's clock
        queued      TEXT NOT NULL DEFAULT '[]'  -- JSON array of scheduled times (ms)
    );

-- table runs
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
    , args TEXT NOT NULL DEFAULT '[]', name_source TEXT NOT NULL DEFAULT 'given', log_pruned_at INTEGER, routine TEXT, scheduled_at INTEGER, sandbox TEXT);

-- table sessions
CREATE TABLE sessions (
        id              TEXT PRIMARY KEY,
        harness         TEXT NOT NULL,
        run_id          TEXT REFERENCES runs(id),
        transcript_path TEXT,
        created_at      INTEGER NOT NULL
    );

-- table subagents
CREATE TABLE subagents (
        run_id          TEXT NOT NULL REFERENCES runs(id),
        agent_id        TEXT NOT NULL,
        session_id      TEXT,
        agent_type      TEXT,
        transcript_path TEXT,
        started_at      INTEGER NOT NULL,
        ended_at        INTEGER, description TEXT,
        PRIMARY KEY (run_id, agent_id)
    );

-- table team_members
CREATE TABLE team_members (
        team_id      TEXT NOT NULL REFERENCES teams(id),
        member       TEXT NOT NULL,
        run_id       TEXT NOT NULL REFERENCES runs(id),
        role         TEXT,
        is_leader    INTEGER NOT NULL,
        position     INTEGER NOT NULL,
        PRIMARY KEY (team_id, member)
    );

-- table teams
CREATE TABLE teams (
        id           TEXT PRIMARY KEY,
        name         TEXT NOT NULL UNIQUE,      -- this team: the definition's name, or name-2...
        definition   TEXT NOT NULL,             -- the definition it was started from
        approvals    TEXT NOT NULL,             -- user | leader
        leader_run   TEXT REFERENCES runs(id),
        problem      TEXT,                      -- why it did not start whole
        created_at   INTEGER NOT NULL
    );

-- table transcript_fts
CREATE VIRTUAL TABLE transcript_fts USING fts5(
        text, content = 'transcript_messages', content_rowid = 'id'
    );

-- table transcript_fts_config
CREATE TABLE 'transcript_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;

-- table transcript_fts_data
CREATE TABLE 'transcript_fts_data'(id INTEGER PRIMARY KEY, block BLOB);

-- table transcript_fts_docsize
CREATE TABLE 'transcript_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);

-- table transcript_fts_idx
CREATE TABLE 'transcript_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

-- table transcript_messages
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

-- table transcript_sessions
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

-- table transcript_sources
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
        indexed_at      INTEGER);

-- table transcript_usage
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

-- trigger transcript_fts_delete
CREATE TRIGGER transcript_fts_delete AFTER DELETE ON transcript_messages BEGIN
        INSERT INTO transcript_fts(transcript_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;

-- trigger transcript_fts_insert
CREATE TRIGGER transcript_fts_insert AFTER INSERT ON transcript_messages BEGIN
        INSERT INTO transcript_fts(rowid, text) VALUES (new.id, new.text);
    END;
