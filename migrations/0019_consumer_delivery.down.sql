DROP FUNCTION IF EXISTS consumer_instance_alive(integer, integer);
DROP TABLE IF EXISTS consumer_dead_letters;
ALTER TABLE consumer_cursors
    DROP COLUMN pending_xid, DROP COLUMN pending_id, DROP COLUMN pending_instance,
    DROP COLUMN answered_xid, DROP COLUMN answered_id,
    DROP COLUMN head_xid, DROP COLUMN head_id, DROP COLUMN head_deliveries,
    DROP COLUMN deliveries, DROP COLUMN redeliveries, DROP COLUMN dead_letters, DROP COLUMN version;
