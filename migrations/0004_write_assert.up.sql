-- scidex_assert aborts the statement it is evaluated in when ok is false. A
-- write that is one statement (create, update) uses it to undo an idempotency
-- claim when the write it claimed for could not happen: no partial write commits.
CREATE FUNCTION scidex_assert(ok boolean, msg text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT ok THEN
        RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = msg;
    END IF;
    RETURN true;
END
$$;
