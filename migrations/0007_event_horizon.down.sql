DROP FUNCTION event_horizon();
