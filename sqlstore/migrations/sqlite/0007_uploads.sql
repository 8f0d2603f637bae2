-- Files the user sent with POST /v1/uploads, to attach to a message by id.
-- media_type is the type sniffed from the bytes, never the declared one.
CREATE TABLE uploads (
	id          TEXT PRIMARY KEY,
	user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	name        TEXT NOT NULL,
	media_type  TEXT NOT NULL,
	bytes       INTEGER NOT NULL,
	data        BLOB NOT NULL,
	created_at  INTEGER NOT NULL
);
CREATE INDEX uploads_user_created ON uploads (user_id, created_at DESC, id DESC);
