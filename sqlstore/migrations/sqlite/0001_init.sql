-- Timestamps are INTEGER unix microseconds, UTC. Booleans are 0/1.
CREATE TABLE users (
	id           TEXT PRIMARY KEY,
	name         TEXT NOT NULL DEFAULT '',
	api_key_hash TEXT NOT NULL UNIQUE,
	token_budget INTEGER NOT NULL DEFAULT 0,
	tokens_used  INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL
);

CREATE TABLE sessions (
	id            TEXT PRIMARY KEY,
	user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	agent         TEXT NOT NULL DEFAULT '',
	title         TEXT NOT NULL DEFAULT '',
	mode          TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'expired')),
	pending_json  TEXT,
	message_count INTEGER NOT NULL DEFAULT 0,
	next_seq      INTEGER NOT NULL DEFAULT 1,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
);
CREATE INDEX sessions_user_created ON sessions (user_id, created_at DESC, id DESC);

CREATE TABLE messages (
	id           TEXT PRIMARY KEY,
	session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	role         TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
	content      TEXT NOT NULL DEFAULT '',
	content_json TEXT,
	metadata     TEXT,
	usage_json   TEXT,
	partial      INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	UNIQUE (session_id, seq)
);

CREATE TABLE notes (
	id          TEXT PRIMARY KEY,
	user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	session_id  TEXT REFERENCES sessions (id) ON DELETE SET NULL,
	note_type   TEXT NOT NULL,
	category    TEXT NOT NULL DEFAULT '',
	title       TEXT NOT NULL,
	content     TEXT NOT NULL,
	importance  INTEGER NOT NULL DEFAULT 50 CHECK (importance BETWEEN 1 AND 100),
	market_slug TEXT NOT NULL DEFAULT '',
	pinned      INTEGER NOT NULL DEFAULT 0,
	deleted_at  INTEGER,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
);
CREATE INDEX notes_user_order ON notes (user_id, pinned DESC, importance DESC, created_at DESC, id DESC);
CREATE INDEX notes_session ON notes (session_id);
