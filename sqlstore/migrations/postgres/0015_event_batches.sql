-- The event log keeps a row per batch of events the turn flushed, not per
-- event: the events on lines of their own, keyed by the batch's last seq.
-- A row written before holds one event and is a batch of one, so no row
-- changes; the column is renamed for what it now means, and a coachd that
-- reads one event per row refuses the database (a newer schema).
ALTER TABLE turn_events RENAME COLUMN seq TO last_seq;
