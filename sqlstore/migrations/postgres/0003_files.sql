-- The user's documents written by save_file. One row per (user, type, name).
CREATE TABLE files (
	id          TEXT PRIMARY KEY,
	user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	session_id  TEXT REFERENCES sessions (id) ON DELETE SET NULL,
	file_type   TEXT NOT NULL,
	name        TEXT NOT NULL,
	content     TEXT NOT NULL DEFAULT '',
	attributes  TEXT NOT NULL DEFAULT '{}',
	bytes       INTEGER NOT NULL DEFAULT 0,
	created_at  TIMESTAMPTZ NOT NULL,
	updated_at  TIMESTAMPTZ NOT NULL,
	UNIQUE (user_id, file_type, name)
);
CREATE INDEX files_user_updated ON files (user_id, updated_at DESC, id DESC);
