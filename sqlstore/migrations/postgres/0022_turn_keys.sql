-- A chat request sent with an Idempotency-Key names the turn it was
-- admitted as, so that the same request sent again (its client lost the
-- answer) follows that turn's events instead of running a second turn.
-- Unique per user; a key lasts as long as the log keeps its turn.
CREATE TABLE turn_keys (
	user_id      TEXT NOT NULL,
	idem_key     TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	session_id   TEXT NOT NULL,
	turn         BIGINT NOT NULL,
	PRIMARY KEY (user_id, idem_key),
	FOREIGN KEY (session_id, turn) REFERENCES turns (session_id, turn) ON DELETE CASCADE
);
CREATE INDEX turn_keys_turn ON turn_keys (session_id, turn);
