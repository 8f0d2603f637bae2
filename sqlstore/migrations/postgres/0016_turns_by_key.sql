-- SQLite's 0016 keeps the event log's turns in their key's b-tree (pages
-- of its commits); a Postgres heap table and its key's index are as
-- before: nothing changes here.
SELECT 1;
