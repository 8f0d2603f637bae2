-- The event log's turns are kept in their key's b-tree alone (WITHOUT
-- ROWID), like their events (0012): a turn's row is written into one
-- b-tree instead of a table and its key's index, and the event log's
-- every write finds it by its key directly. Its rows are small.
-- The events are moved with it: dropping the old table would delete them
-- (ON DELETE CASCADE), and their key's reference follows the new table
-- when it is renamed.
CREATE TABLE turns_by_key (
	session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	turn           INTEGER NOT NULL,
	user_id        TEXT NOT NULL,
	owner          TEXT NOT NULL,
	started_at     INTEGER NOT NULL,
	alive_at       INTEGER NOT NULL,
	ended          INTEGER NOT NULL DEFAULT 0,
	stop_requested INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (session_id, turn)
) WITHOUT ROWID;
-- A turn whose session is gone (only a file once written with foreign
-- keys off could hold one) is left behind rather than failing the
-- upgrade, and so are events whose turn is.
INSERT INTO turns_by_key (session_id, turn, user_id, owner, started_at, alive_at, ended, stop_requested)
	SELECT t.session_id, t.turn, t.user_id, t.owner, t.started_at, t.alive_at, t.ended, t.stop_requested FROM turns t
	WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = t.session_id);
CREATE TABLE turn_events_by_turn (
	session_id TEXT NOT NULL,
	turn       INTEGER NOT NULL,
	last_seq   INTEGER NOT NULL,
	data       TEXT NOT NULL,
	PRIMARY KEY (session_id, turn, last_seq),
	FOREIGN KEY (session_id, turn) REFERENCES turns_by_key (session_id, turn) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO turn_events_by_turn (session_id, turn, last_seq, data) SELECT e.session_id, e.turn, e.last_seq, e.data FROM turn_events e
	WHERE EXISTS (SELECT 1 FROM turns_by_key t WHERE t.session_id = e.session_id AND t.turn = e.turn);
DROP TABLE turn_events;
DROP TABLE turns;
ALTER TABLE turns_by_key RENAME TO turns;
ALTER TABLE turn_events_by_turn RENAME TO turn_events;
CREATE INDEX turns_started ON turns (started_at);
