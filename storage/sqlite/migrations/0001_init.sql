-- 0001: the first schema. Token counts, costs, hashes and metadata only:
-- tollgate never stores the text of prompts, tool results or summaries.

CREATE TABLE sessions (
    id               TEXT PRIMARY KEY,          -- chosen by the harness
    harness          TEXT NOT NULL DEFAULT '',
    profile          TEXT NOT NULL DEFAULT '',
    provider         TEXT NOT NULL DEFAULT '',
    model            TEXT NOT NULL DEFAULT '',
    title            TEXT NOT NULL DEFAULT '',
    context_window   INTEGER NOT NULL DEFAULT 0,
    threshold_tokens INTEGER NOT NULL DEFAULT 0,
    started_at       INTEGER NOT NULL,          -- unix milliseconds
    last_at          INTEGER NOT NULL,
    -- running totals, kept in step with requests so listing is one scan
    requests         INTEGER NOT NULL DEFAULT 0,
    input            INTEGER NOT NULL DEFAULT 0,
    cache_read       INTEGER NOT NULL DEFAULT 0,
    cache_write      INTEGER NOT NULL DEFAULT 0,
    cache_write_1h   INTEGER NOT NULL DEFAULT 0,
    output           INTEGER NOT NULL DEFAULT 0,
    cost_usd         REAL    NOT NULL DEFAULT 0,
    last_context     INTEGER NOT NULL DEFAULT 0, -- context tokens of the last conversation request
    priced_by_default INTEGER NOT NULL DEFAULT 0 -- some request fell back to the default profile
);
CREATE INDEX sessions_last_at ON sessions(last_at DESC, id);

CREATE TABLE requests (
    id             INTEGER PRIMARY KEY,
    -- deferred: a request row may precede its session's row within a transaction
    session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    request_id     TEXT NOT NULL,               -- the harness's id, for idempotent retries
    seq            INTEGER NOT NULL,            -- 1-based order within the session
    at             INTEGER NOT NULL,            -- unix milliseconds
    purpose        TEXT NOT NULL DEFAULT 'conversation',
    turn           TEXT NOT NULL DEFAULT '',
    engine         TEXT NOT NULL DEFAULT '',
    profile        TEXT NOT NULL DEFAULT '',
    provider       TEXT NOT NULL DEFAULT '',
    model          TEXT NOT NULL DEFAULT '',
    input          INTEGER NOT NULL DEFAULT 0,
    cache_read     INTEGER NOT NULL DEFAULT 0,
    cache_write    INTEGER NOT NULL DEFAULT 0,
    cache_write_1h INTEGER NOT NULL DEFAULT 0,
    output         INTEGER NOT NULL DEFAULT 0,
    context_tokens INTEGER NOT NULL DEFAULT 0,  -- input + cache_read + cache_write + cache_write_1h
    cost_input     REAL NOT NULL DEFAULT 0,
    cost_cache_read  REAL NOT NULL DEFAULT 0,
    cost_cache_write REAL NOT NULL DEFAULT 0,
    cost_output    REAL NOT NULL DEFAULT 0,
    cost_usd       REAL NOT NULL DEFAULT 0,
    prices         TEXT NOT NULL DEFAULT '{}',  -- JSON of the prices used, so history keeps its price
    priced_by      TEXT NOT NULL DEFAULT '',    -- profile | builtin | default
    off_peak       INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session_id, request_id)
);
CREATE INDEX requests_session_seq ON requests(session_id, seq);
CREATE INDEX requests_at ON requests(at);

CREATE TABLE rewrites (
    id               TEXT PRIMARY KEY,          -- r_…
    session_id       TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL DEFAULT 0, -- requests recorded before it
    at               INTEGER NOT NULL,
    engine           TEXT NOT NULL DEFAULT '',
    turn             TEXT NOT NULL DEFAULT '',
    trigger          TEXT NOT NULL DEFAULT '',
    kind             TEXT NOT NULL DEFAULT '',   -- summary | prune
    source           TEXT NOT NULL DEFAULT 'api', -- api | import
    mode             TEXT NOT NULL DEFAULT '',
    status           TEXT NOT NULL DEFAULT 'pending', -- pending | decided
    decision         TEXT NOT NULL DEFAULT '',   -- allow | decline
    reason           TEXT NOT NULL DEFAULT '',
    order_name       TEXT NOT NULL DEFAULT '',
    pre_tokens       INTEGER NOT NULL DEFAULT 0,
    predicted_cold   INTEGER,
    actual_cold      INTEGER,
    actual_seq       INTEGER,                    -- the request whose uncached part is actual_cold
    cost_usd         REAL NOT NULL DEFAULT 0,    -- break premium of the chosen order
    summary_input    INTEGER NOT NULL DEFAULT 0, -- the summary call, when known
    summary_cache_read  INTEGER NOT NULL DEFAULT 0,
    summary_cache_write INTEGER NOT NULL DEFAULT 0,
    summary_output   INTEGER NOT NULL DEFAULT 0,
    summary_cost_usd REAL NOT NULL DEFAULT 0,
    deadline_at      INTEGER NOT NULL DEFAULT 0,
    decided_at       INTEGER NOT NULL DEFAULT 0,
    applied          INTEGER,                    -- NULL until the harness reports
    outcome_error    TEXT NOT NULL DEFAULT '',
    plan             TEXT NOT NULL DEFAULT '{}', -- ids and token counts only
    quote            TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX rewrites_session ON rewrites(session_id, at);
-- rewrites still waiting for the actual cold tokens of the next request
CREATE INDEX rewrites_actual_seq ON rewrites(session_id, actual_seq) WHERE actual_seq IS NOT NULL;
CREATE INDEX rewrites_awaiting_actual ON rewrites(session_id) WHERE actual_cold IS NULL AND decision = 'allow';

CREATE TABLE session_modes (
    session_id TEXT PRIMARY KEY,
    mode       TEXT NOT NULL CHECK (mode IN ('ask', 'auto', 'off')),
    updated_at INTEGER NOT NULL
);

CREATE TABLE imports (
    path        TEXT PRIMARY KEY,
    harness     TEXT NOT NULL,
    session_id  TEXT NOT NULL DEFAULT '',
    size        INTEGER NOT NULL DEFAULT 0,
    offset      INTEGER NOT NULL DEFAULT 0,      -- bytes consumed, for incremental re-import
    head_hash   TEXT NOT NULL DEFAULT '',        -- hash of the first bytes: a rewritten file starts over
    state       TEXT NOT NULL DEFAULT '{}',      -- importer state carried across increments
    imported_at INTEGER NOT NULL
);
