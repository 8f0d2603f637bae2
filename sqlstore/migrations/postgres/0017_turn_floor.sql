-- A session's next turn is numbered after its last in the event log, and
-- the log's pruning by age can delete all of a session's turns: the number
-- of its last turn then is kept on the session (turn_floor), and the next
-- turn is numbered after the higher of the two. A turn's number, and so an
-- event's id (turn:seq), is never given twice in a session: a client that
-- resumes from the last id it saw still gets every later event.
ALTER TABLE sessions ADD COLUMN turn_floor BIGINT NOT NULL DEFAULT 0;
