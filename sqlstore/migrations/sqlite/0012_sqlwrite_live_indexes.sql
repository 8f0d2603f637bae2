-- Indexes over live rows only, so that a turn's writes touch fewer pages
-- and its checks read no table rows. The live-note cap (noteRoom) counts
-- from notes_live instead of visiting every note of the user.
CREATE INDEX notes_live ON notes (user_id) WHERE deleted_at IS NULL;
-- Active reservations (the holds of turns in flight, a handful) in one
-- small index that serves the reservation's stale-hold check, the
-- sweeper and the ledger check; a settled reservation leaves it. The
-- user's index no longer holds state: a settlement does not move it.
DROP INDEX reservations_active;
DROP INDEX reservations_user;
CREATE INDEX reservations_live ON reservations (user_id, expires_at) WHERE state = 'active';
CREATE INDEX reservations_owner ON reservations (user_id);
-- The event log's rows are small and always read and written in key
-- order: kept in their primary key's b-tree alone (WITHOUT ROWID), an
-- append writes each row once instead of into a table and its key index.
CREATE TABLE turn_events_by_key (
	session_id TEXT NOT NULL,
	turn       INTEGER NOT NULL,
	seq        INTEGER NOT NULL,
	data       TEXT NOT NULL,
	PRIMARY KEY (session_id, turn, seq),
	FOREIGN KEY (session_id, turn) REFERENCES turns (session_id, turn) ON DELETE CASCADE
) WITHOUT ROWID;
-- An event whose turn is gone (only a file once written with foreign keys
-- off could hold one) is left behind rather than failing the upgrade.
INSERT INTO turn_events_by_key (session_id, turn, seq, data) SELECT e.session_id, e.turn, e.seq, e.data FROM turn_events e
	WHERE EXISTS (SELECT 1 FROM turns t WHERE t.session_id = e.session_id AND t.turn = e.turn);
DROP TABLE turn_events;
ALTER TABLE turn_events_by_key RENAME TO turn_events;
