-- How many of the session's messages the conversation a fingerprint
-- names holds: a client that resends an earlier part of it (Regenerate,
-- an edited message) goes on from there, not after the messages it
-- discarded. NULL for a row saved before: not known.
ALTER TABLE chat_fingerprints ADD COLUMN message_count BIGINT;
