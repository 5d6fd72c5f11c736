-- Who may read an artifact, stamped by the write path from its type's policy
-- (docs/policy.md): public, or participants (its creator, the recipients it was
-- delivered to, admins). Registering a schema version that changes a type's
-- policy.read restamps the type's artifacts in the same transaction. A column
-- rather than a lookup of the type's schema at read time: a list filters on it
-- in the same statement, and a type registered on another replica a moment ago
-- is private from its first artifact.
ALTER TABLE artifacts ADD COLUMN visibility text NOT NULL DEFAULT 'public'
    CHECK (visibility IN ('public', 'participants'));
