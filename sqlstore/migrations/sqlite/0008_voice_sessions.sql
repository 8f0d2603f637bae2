-- Realtime voice secrets minted for users (POST /v1/realtime/session):
-- the coach, model and voice they spoke with, never the secret itself.
CREATE TABLE voice_sessions (
	id          TEXT PRIMARY KEY,
	user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	session_id  TEXT REFERENCES sessions (id) ON DELETE SET NULL,
	agent       TEXT NOT NULL,
	model       TEXT NOT NULL,
	voice       TEXT NOT NULL,
	expires_at  INTEGER NOT NULL,
	created_at  INTEGER NOT NULL
);
CREATE INDEX voice_sessions_user ON voice_sessions (user_id, created_at, id);
