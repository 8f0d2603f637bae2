-- Whether another session held the conversation a fingerprint names too
-- (two chats that opened alike, a Regenerate): its next message then
-- goes on in a copy, never after the other chat's messages.
ALTER TABLE chat_fingerprints ADD COLUMN shared BOOLEAN NOT NULL DEFAULT FALSE;
