-- The user's live (not deleted) notes counted on the user's row, kept by
-- every note write in its own transaction: the cap check (noteRoom) and
-- the count are one conditional UPDATE of that row instead of a count of
-- up to coachd.MaxNotesPerUser index entries on every save_note. The
-- index that served the count goes: nothing else reads it, and a note's
-- insert or delete writes one index fewer.
ALTER TABLE users ADD COLUMN live_notes INTEGER NOT NULL DEFAULT 0;
UPDATE users SET live_notes = (SELECT COUNT(*) FROM notes n WHERE n.user_id = users.id AND n.deleted_at IS NULL);
DROP INDEX notes_live;
