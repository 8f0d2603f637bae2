-- OpenAI-compatible clients resend the whole conversation each time: the
-- fingerprint of a conversation as the client holds it after a turn (its
-- user and assistant texts) names the session it continues.
CREATE TABLE chat_fingerprints (
	user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	fingerprint TEXT NOT NULL,
	session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	created_at  INTEGER NOT NULL,
	PRIMARY KEY (user_id, fingerprint)
);
