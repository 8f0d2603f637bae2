-- A user message's blocks without its attachments' data (their media
-- type and sizes kept), NULL for a message without attachments. A turn
-- re-sends only a session's newest attachments; it reads this instead of
-- content_json for older messages, not megabytes of photos it sends as a
-- note. content_json stays the message, whole.
ALTER TABLE messages ADD COLUMN content_lite TEXT;
-- Which are a session's newest messages with attachments, without
-- reading them.
CREATE INDEX messages_with_attachments ON messages (session_id, seq) WHERE content_lite IS NOT NULL;
