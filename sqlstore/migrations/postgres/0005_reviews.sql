-- Validator runs (POST /v1/reviews, coachd review, coachd autobuild): the
-- decision recorded and the trace that led to it, per user and task.
CREATE TABLE reviews (
	id          TEXT PRIMARY KEY,
	user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	task_id     TEXT NOT NULL,
	session_id  TEXT REFERENCES sessions (id) ON DELETE SET NULL,
	agent       TEXT NOT NULL,
	approved    BOOLEAN NOT NULL DEFAULT FALSE,
	decision    TEXT,
	trace       TEXT NOT NULL DEFAULT '{}',
	created_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX reviews_user_task ON reviews (user_id, task_id, created_at, id);
