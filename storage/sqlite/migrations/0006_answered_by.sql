-- 0006: who answered a question — the owner's door it came through:
-- window, browser, tray or owner-token ('' for a decision nobody made:
-- auto, off, timeout, a limit).
ALTER TABLE rewrites ADD COLUMN answered_by TEXT NOT NULL DEFAULT '';
