ALTER TABLE write_journal DROP COLUMN delegation, DROP COLUMN task_id;
