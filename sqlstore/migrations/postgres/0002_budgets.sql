-- Budgets: reservations, the ledger, limit windows, idempotency keys.
-- users.tokens_used is a cache of SUM(ledger.used_delta) for the user's
-- current period (period_start); users.tokens_reserved of
-- SUM(ledger.reserved_delta). coachd doctor checks both.
ALTER TABLE users ADD COLUMN tokens_reserved BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN period_start TIMESTAMPTZ NOT NULL DEFAULT '1970-01-01T00:00:00Z';
ALTER TABLE users ADD COLUMN rate_limit TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN monthly_messages BIGINT;

-- Usage charged before budgets existed becomes the ledger's first row.
CREATE TABLE ledger (
	id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	reservation_id TEXT NOT NULL DEFAULT '',
	used_delta     BIGINT NOT NULL,
	reserved_delta BIGINT NOT NULL,
	reason         TEXT NOT NULL,
	period_start   TIMESTAMPTZ NOT NULL,
	created_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX ledger_user ON ledger (user_id, period_start);
INSERT INTO ledger (user_id, used_delta, reserved_delta, reason, period_start, created_at)
	SELECT id, tokens_used, 0, 'opening', TIMESTAMPTZ '1970-01-01T00:00:00Z', updated_at FROM users WHERE tokens_used <> 0;

CREATE TABLE reservations (
	id           TEXT PRIMARY KEY,
	user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	session_id   TEXT NOT NULL DEFAULT '',
	agent        TEXT NOT NULL DEFAULT '',
	estimate     BIGINT NOT NULL CHECK (estimate >= 0),
	held         BIGINT NOT NULL CHECK (held >= 0),
	charged      BIGINT NOT NULL DEFAULT 0 CHECK (charged >= 0),
	state        TEXT NOT NULL CHECK (state IN ('active', 'finalized', 'aborted', 'expired')),
	free_preview BOOLEAN NOT NULL DEFAULT FALSE,
	period_start TIMESTAMPTZ NOT NULL,
	created_at   TIMESTAMPTZ NOT NULL,
	expires_at   TIMESTAMPTZ NOT NULL,
	updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX reservations_active ON reservations (state, expires_at);
CREATE INDEX reservations_user ON reservations (user_id, state);

CREATE TABLE limit_windows (
	user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	limit_key    TEXT NOT NULL,
	window_start TIMESTAMPTZ NOT NULL,
	hits         BIGINT NOT NULL,
	PRIMARY KEY (user_id, limit_key, window_start)
);

CREATE TABLE idempotency_keys (
	user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	idem_key     TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	response     TEXT NOT NULL,
	created_at   TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (user_id, idem_key)
);
