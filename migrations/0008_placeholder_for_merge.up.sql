-- Placeholder so that 0009 applies on this branch alone: another branch brings
-- the real 0008. Drop this file (and its .down.sql) when merging that one.
SELECT 1;
