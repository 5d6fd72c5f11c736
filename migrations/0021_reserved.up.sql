-- PLACEHOLDER, to be deleted at merge: 0021 belongs to another branch. The
-- migrator wants versions 1..n without gaps, so this branch, whose migration
-- is 0022, carries an empty 0021 until the real one lands. Merging both makes
-- the migrator refuse to start ("migration 0021 has two names"): delete this
-- pair then.
SELECT 1;
