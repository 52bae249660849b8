-- 0004: reserved for a colleague's migration (issue 13's branch holds this
-- placeholder so that its 0005 has no gap). When the branches merge, THIS
-- FILE IS DELETED in favour of the real 0004; it changes nothing.
SELECT 1;
