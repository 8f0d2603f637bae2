-- Budgets: reservations, the ledger, limit windows, idempotency keys.
-- users.tokens_used is a cache of SUM(ledger.used_delta) for the user's
-- current period (period_start); users.tokens_reserved of
-- SUM(ledger.reserved_delta). coachd doctor checks both.
ALTER TABLE users ADD COLUMN tokens_reserved INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN period_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN rate_limit TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN monthly_messages INTEGER;

-- Usage charged before budgets existed becomes the ledger's first row.
CREATE TABLE ledger (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	reservation_id TEXT NOT NULL DEFAULT '',
	used_delta     INTEGER NOT NULL,
	reserved_delta INTEGER NOT NULL,
	reason         TEXT NOT NULL,
	period_start   INTEGER NOT NULL,
	created_at     INTEGER NOT NULL
);
CREATE INDEX ledger_user ON ledger (user_id, period_start);
INSERT INTO ledger (user_id, used_delta, reserved_delta, reason, period_start, created_at)
	SELECT id, tokens_used, 0, 'opening', 0, updated_at FROM users WHERE tokens_used <> 0;

CREATE TABLE reservations (
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
	updated_at   INTEGER NOT NULL
);
CREATE INDEX reservations_active ON reservations (state, expires_at);
CREATE INDEX reservations_user ON reservations (user_id, state);

CREATE TABLE limit_windows (
	user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	limit_key    TEXT NOT NULL,
	window_start INTEGER NOT NULL,
	hits         INTEGER NOT NULL,
	PRIMARY KEY (user_id, limit_key, window_start)
);

CREATE TABLE idempotency_keys (
	user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	idem_key     TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	response     TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (user_id, idem_key)
);
