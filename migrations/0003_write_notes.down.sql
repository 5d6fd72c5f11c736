ALTER TABLE links DROP COLUMN metadata;
ALTER TABLE write_journal DROP COLUMN note;
