DROP INDEX IF EXISTS message_deliveries_completed;
DROP INDEX IF EXISTS artifacts_alias_skeleton;
