-- A row's columns lie one after another in its record, and reading a
-- column that comes after a large one walks all of that one's overflow
-- pages: content_lite (and metadata, usage_json, partial, created_at),
-- after content_json, read every page of a message's photos. The table is
-- rebuilt with content_json last; a column added later goes after it, so a
-- turn's read should not need one.
CREATE TABLE messages_new (
	id           TEXT PRIMARY KEY,
	session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	role         TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
	partial      INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	metadata     TEXT,
	usage_json   TEXT,
	content_lite TEXT,
	content      TEXT NOT NULL DEFAULT '',
	content_json TEXT,
	UNIQUE (session_id, seq)
);
INSERT INTO messages_new (id, session_id, seq, role, partial, created_at, metadata, usage_json, content_lite, content, content_json)
	SELECT id, session_id, seq, role, partial, created_at, metadata, usage_json, content_lite, content, content_json FROM messages;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_with_attachments ON messages (session_id, seq) WHERE content_lite IS NOT NULL;
