DROP INDEX events_ref_idx;
DROP TABLE message_deliveries;
DROP TABLE consumer_cursors;
