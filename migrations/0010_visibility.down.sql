ALTER TABLE artifacts DROP COLUMN visibility;
