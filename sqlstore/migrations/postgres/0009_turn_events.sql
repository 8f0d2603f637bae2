-- The event log of turns (resumable streams): one row per turn of a
-- session, with the process running it and its last sign of life, and
-- the turn's events, so that a client can attach from any replica, after
-- a restart or after the turn ended.
CREATE TABLE turns (
	session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	turn           BIGINT NOT NULL,
	user_id        TEXT NOT NULL,
	owner          TEXT NOT NULL,
	started_at     TIMESTAMPTZ NOT NULL,
	alive_at       TIMESTAMPTZ NOT NULL,
	ended          BOOLEAN NOT NULL DEFAULT FALSE,
	stop_requested BOOLEAN NOT NULL DEFAULT FALSE,
	PRIMARY KEY (session_id, turn)
);
CREATE INDEX turns_started ON turns (started_at);
CREATE TABLE turn_events (
	session_id TEXT NOT NULL,
	turn       BIGINT NOT NULL,
	seq        BIGINT NOT NULL,
	data       TEXT NOT NULL,
	PRIMARY KEY (session_id, turn, seq),
	FOREIGN KEY (session_id, turn) REFERENCES turns (session_id, turn) ON DELETE CASCADE
);
-- Short-lived tokens for EventSource clients, which cannot send headers:
-- each lets its user follow one session's stream.
CREATE TABLE stream_tokens (
	token_hash TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX stream_tokens_expires ON stream_tokens (expires_at);
