-- 0002: imported rows remember the file that brought them (a 64-bit hash of
-- its imports.path), so a file that was rewritten — its first bytes changed —
-- can be imported again from its start without leaving the old version's
-- rows behind. NULL: recorded through the API.
ALTER TABLE requests ADD COLUMN import_key INTEGER;
ALTER TABLE rewrites ADD COLUMN import_key INTEGER;
