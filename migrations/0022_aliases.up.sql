-- The handle registry (internal/alias): its entries are alias artifacts, one
-- per handle, whose id is the handle. A claim looks up the entries that look
-- like the one claimed by their skeleton (look-alike characters folded); the
-- claim takes a transaction lock first, so the lookup needs only an index.
CREATE INDEX artifacts_alias_skeleton ON artifacts ((content->>'skeleton')) WHERE type = 'alias';

-- Retention: a completed delivery is archived once it has been completed for
-- the retention period (scidex serve --message-retention). Archival is a
-- function of acked_at and the clock, so mailbox lists filter on acked_at.
CREATE INDEX message_deliveries_completed ON message_deliveries (recipient, acked_at) WHERE status = 'completed';
