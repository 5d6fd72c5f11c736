-- PLACEHOLDER (see 0021_reserved.up.sql).
SELECT 1;
