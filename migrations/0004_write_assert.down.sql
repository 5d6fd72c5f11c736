DROP FUNCTION scidex_assert(boolean, text);
