-- SQLite's 0019 rebuilds messages with content_json last, so that reading
-- the columns before it skips its overflow pages. Postgres keeps a large
-- value out of line (TOAST) and reads it only when asked for: nothing to
-- change.
SELECT 1;
