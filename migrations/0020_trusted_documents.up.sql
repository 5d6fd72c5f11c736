-- Trusted documents (production mode): the GraphQL operations a server in
-- production runs for actors without the admin permission. A document is
-- known by the sha256 of its text as clients send it, byte for byte; a
-- client sends the text, or only the hash (the persistedQuery extension).
CREATE TABLE trusted_documents (
    hash          text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
    document      text NOT NULL CHECK (document <> ''),
    name          text NOT NULL DEFAULT '',   -- a label: the file it came from, an operation name
    source        text NOT NULL DEFAULT '',   -- who registered it: "push", or the server itself ("mcp", "live page")
    registered_at timestamptz NOT NULL DEFAULT now()
);
