-- 0005: the cache-break ledger. Each request says which thread
-- it continues ('' = the main conversation), what started it, its profile's
-- ttlSeconds when it was priced, and how long its family's cache entries
-- live after it (cache_ttl, seconds; 0 = no cache activity yet) — the state
-- the next request of its thread and family is judged against. Each break
-- is one row of breaks, derived from requests and rewrites: it is rebuilt
-- whenever they change (re-import, re-price).
ALTER TABLE requests ADD COLUMN thread TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN started_by TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN ttl_seconds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN cache_ttl INTEGER NOT NULL DEFAULT 0;
-- Rows stored before knew no thread: subagents share one, each summary call
-- is its own (storage.ThreadOf). Their breaks are computed when the
-- database opens (Open rebuilds every ledger after this migration).
UPDATE requests SET thread = CASE purpose WHEN 'subagent' THEN 'subagent' WHEN 'compaction' THEN 'compaction:' || request_id ELSE '' END;
CREATE INDEX requests_thread ON requests(session_id, thread, seq);

CREATE TABLE breaks (
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    seq          INTEGER NOT NULL,           -- the breaking request
    at           INTEGER NOT NULL,           -- unix milliseconds
    thread       TEXT NOT NULL DEFAULT '',
    model        TEXT NOT NULL DEFAULT '',
    cause        TEXT NOT NULL CHECK (cause IN ('rewrite', 'idle', 'family', 'prefix')),
    started_by   TEXT NOT NULL DEFAULT '',
    rewrite      TEXT,                       -- rewrites.id when cause = 'rewrite'
    gap_ms       INTEGER NOT NULL,
    ttl_seconds  INTEGER NOT NULL,
    expected     INTEGER NOT NULL,
    cache_read   INTEGER NOT NULL,
    rebilled     INTEGER NOT NULL,
    premium_usd  REAL NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX breaks_at ON breaks(at);
