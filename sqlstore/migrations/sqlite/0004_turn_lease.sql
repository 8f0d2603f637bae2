-- One running turn per session across every process sharing the database:
-- the turn's owner token and when its lease runs out (unix microseconds).
ALTER TABLE sessions ADD COLUMN turn_owner TEXT;
ALTER TABLE sessions ADD COLUMN turn_until INTEGER;
