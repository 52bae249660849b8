-- 0005: reserved for a colleague's migration (issue 14's branch holds this
-- placeholder so that its 0006 has no gap). When the branches merge, THIS
-- FILE IS DELETED in favour of the real 0005; it changes nothing.
SELECT 1;
