-- Durable event consumers and the mailbox.

-- A consumer's server-side cursor, per actor: poll and subscriptions that name a
-- consumerId resume from it. Untouched consumers expire after 30 days.
CREATE TABLE consumer_cursors (
    actor_id    text NOT NULL,
    consumer_id text NOT NULL,
    cursor_xid  xid8 NOT NULL,
    cursor_id   bigint NOT NULL,
    updated_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (actor_id, consumer_id)
);
CREATE INDEX consumer_cursors_expires_idx ON consumer_cursors (expires_at);

-- One row per recipient of a message: the message stays one artifact, each
-- recipient acknowledges it on their own.
CREATE TABLE message_deliveries (
    message_pk bigint NOT NULL REFERENCES artifacts (pk),
    recipient  text NOT NULL,
    status     text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'read', 'completed', 'rejected')),
    acked_at   timestamptz,
    response   text,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (message_pk, recipient)
);
CREATE INDEX message_deliveries_recipient_idx ON message_deliveries (recipient, status, message_pk);

CREATE INDEX events_ref_idx ON events (ref, id);
