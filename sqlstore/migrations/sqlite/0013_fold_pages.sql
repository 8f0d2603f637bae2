-- The ledger's ids need not be AUTOINCREMENT: rows are only appended
-- (and deleted with their user), and every insert paid for AUTOINCREMENT
-- with a read and an update of sqlite_sequence, one more page in the
-- commit of every budget write (two or three a turn). Plain INTEGER
-- PRIMARY KEY ids still grow with every row; ids of a deleted user's
-- last rows may be given again, which nothing reads across users.
CREATE TABLE ledger_rowid (
	id             INTEGER PRIMARY KEY,
	user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	reservation_id TEXT NOT NULL DEFAULT '',
	used_delta     INTEGER NOT NULL,
	reserved_delta INTEGER NOT NULL,
	reason         TEXT NOT NULL,
	period_start   INTEGER NOT NULL,
	created_at     INTEGER NOT NULL,
	raw_tokens     INTEGER NOT NULL DEFAULT 0,
	unit           TEXT NOT NULL DEFAULT 'tokens'
);
INSERT INTO ledger_rowid (id, user_id, reservation_id, used_delta, reserved_delta, reason, period_start, created_at, raw_tokens, unit)
	SELECT id, user_id, reservation_id, used_delta, reserved_delta, reason, period_start, created_at, raw_tokens, unit FROM ledger;
DROP TABLE ledger;
ALTER TABLE ledger_rowid RENAME TO ledger;
CREATE INDEX ledger_user ON ledger (user_id, period_start);
DELETE FROM sqlite_sequence WHERE name = 'ledger';
-- Reservations are kept in their id's b-tree alone (WITHOUT ROWID): a
-- turn's reservation is written into a table and its id's index no
-- more, and its settlements find the row by its key directly. Its rows
-- are small, and ids grow with time: inserts append.
CREATE TABLE reservations_by_id (
	id           TEXT PRIMARY KEY,
	user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	session_id   TEXT NOT NULL DEFAULT '',
	agent        TEXT NOT NULL DEFAULT '',
	estimate     INTEGER NOT NULL CHECK (estimate >= 0),
	held         INTEGER NOT NULL CHECK (held >= 0),
	charged      INTEGER NOT NULL DEFAULT 0 CHECK (charged >= 0),
	state        TEXT NOT NULL CHECK (state IN ('active', 'finalized', 'aborted', 'expired')),
	free_preview BOOLEAN NOT NULL DEFAULT FALSE,
	period_start INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	raw_charged  INTEGER NOT NULL DEFAULT 0 CHECK (raw_charged >= 0)
) WITHOUT ROWID;
INSERT INTO reservations_by_id (id, user_id, session_id, agent, estimate, held, charged, state, free_preview,
		period_start, created_at, expires_at, updated_at, raw_charged)
	SELECT id, user_id, session_id, agent, estimate, held, charged, state, free_preview,
		period_start, created_at, expires_at, updated_at, raw_charged FROM reservations;
DROP TABLE reservations;
ALTER TABLE reservations_by_id RENAME TO reservations;
CREATE INDEX reservations_live ON reservations (user_id, expires_at) WHERE state = 'active';
CREATE INDEX reservations_owner ON reservations (user_id);
-- Limit windows (a turn's admission counts one or two) likewise: their
-- upsert writes one b-tree, not a table and its key's index.
CREATE TABLE limit_windows_by_key (
	user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	limit_key    TEXT NOT NULL,
	window_start INTEGER NOT NULL,
	hits         INTEGER NOT NULL,
	PRIMARY KEY (user_id, limit_key, window_start)
) WITHOUT ROWID;
INSERT INTO limit_windows_by_key (user_id, limit_key, window_start, hits)
	SELECT user_id, limit_key, window_start, hits FROM limit_windows;
DROP TABLE limit_windows;
ALTER TABLE limit_windows_by_key RENAME TO limit_windows;
