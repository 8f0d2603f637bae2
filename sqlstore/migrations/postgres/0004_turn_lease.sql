-- One running turn per session across every replica sharing the database:
-- the turn's owner token and when its lease runs out.
ALTER TABLE sessions ADD COLUMN turn_owner TEXT;
ALTER TABLE sessions ADD COLUMN turn_until TIMESTAMPTZ;
