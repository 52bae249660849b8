-- 0004: reserved for a colleague's migration (the issue-16 branch holds
-- this placeholder so that its 0007 has no gap). When the branches merge,
-- THIS FILE IS DELETED in favour of the real 0004; it changes nothing.
SELECT 1;
