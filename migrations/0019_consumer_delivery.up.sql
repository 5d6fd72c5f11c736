-- At-least-once delivery for durable consumers (issue 17, "Consumers that never
-- skip"), and dead letters (SPEC-001 §13.7).
--
-- A poll with autoAdvance no longer moves the stored cursor when it answers: the
-- page it hands out is recorded as pending, and the consumer's next poll commits
-- it (the consumer asking for more says it has the page). The pending page keeps
-- the process that answered it: a later poll commits it only if that process is
-- still connected to the database (internal/event, Consumers.Poll), so a page
-- whose answer died with a SIGKILLed server is handed out again, never skipped.
ALTER TABLE consumer_cursors
    -- The cursor of the last page answered and not yet committed; NULL: none.
    ADD COLUMN pending_xid      xid8,
    ADD COLUMN pending_id       bigint,
    -- The process that answered it (its advisory-lock key, see event.Consumers).
    ADD COLUMN pending_instance integer,
    -- The furthest event ever handed to the consumer: an event at or before it
    -- handed out again is a redelivery.
    ADD COLUMN answered_xid     xid8 NOT NULL DEFAULT '0',
    ADD COLUMN answered_id      bigint NOT NULL DEFAULT 0,
    -- The first event of the last page answered, and how many answers in a row
    -- began with it: a consumer that keeps failing on one event gets it again and
    -- again, until the bound parks it in consumer_dead_letters.
    ADD COLUMN head_xid         xid8,
    ADD COLUMN head_id          bigint,
    ADD COLUMN head_deliveries  integer NOT NULL DEFAULT 0,
    ADD COLUMN deliveries       bigint NOT NULL DEFAULT 0,
    ADD COLUMN redeliveries     bigint NOT NULL DEFAULT 0,
    ADD COLUMN dead_letters     bigint NOT NULL DEFAULT 0,
    -- Bumped by every change: a poll writes its answer only over the state it
    -- read (two polls of one consumer never both commit or skip a page).
    ADD COLUMN version          bigint NOT NULL DEFAULT 0;

-- The events a consumer was handed too many times without moving past them: no
-- longer delivered to it, listed by Query.consumer.
CREATE TABLE consumer_dead_letters (
    actor_id    text NOT NULL,
    consumer_id text NOT NULL,
    event_id    bigint NOT NULL,
    event_xid   xid8 NOT NULL,
    -- How many times it was handed out as the head of a page.
    deliveries  integer NOT NULL,
    parked_at   timestamptz NOT NULL,
    PRIMARY KEY (actor_id, consumer_id, event_id),
    FOREIGN KEY (actor_id, consumer_id) REFERENCES consumer_cursors (actor_id, consumer_id) ON DELETE CASCADE
);

-- Whether the server process whose key is instance is still connected: every
-- process holds the advisory lock (space, instance) on its event listener's
-- connection (a direct one, never through a pooler) for as long as it runs. A
-- SIGKILLed process's connection closes with it, and so its lock goes.
CREATE FUNCTION consumer_instance_alive(space integer, instance integer) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted
          AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
          AND l.classid = space::oid AND l.objid = instance::oid AND l.objsubid = 2)
$$;
