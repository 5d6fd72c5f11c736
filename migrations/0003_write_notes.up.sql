-- What a write said about itself (a supersede's reason), and a link's own data
-- (a citation's span and claim).
ALTER TABLE write_journal ADD COLUMN note text;
ALTER TABLE links ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
