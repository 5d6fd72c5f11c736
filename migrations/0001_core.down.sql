DROP TABLE events;
DROP TABLE idempotency_keys;
DROP TABLE write_journal;
DROP TABLE artifact_versions;
DROP TABLE artifacts;
DROP TABLE schemas;
DROP TABLE actors;
