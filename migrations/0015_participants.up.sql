-- Participants beyond an artifact's creator and the recipients of its
-- deliveries: the owner of the tool a participants-only tool_call ran, the
-- participants of the private inputs an artifact was derived from. A
-- participants-only artifact is readable by its creator, its recipients, these
-- actors and admins.
ALTER TABLE artifacts ADD COLUMN participants text[] NOT NULL DEFAULT '{}';
