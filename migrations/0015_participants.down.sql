ALTER TABLE artifacts DROP COLUMN participants;
