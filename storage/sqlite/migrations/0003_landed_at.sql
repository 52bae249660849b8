-- 0003: when a fold landed in the harness's log (its compact_boundary line).
-- An imported fold lands when it is stored; a rewrite asked through the API
-- lands later, when its summary call has run — linking summary calls to
-- folds by time needs the landing, not the asking.
ALTER TABLE rewrites ADD COLUMN landed_at INTEGER;
