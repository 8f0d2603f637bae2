-- SQLite's 0013 drops the ledger's AUTOINCREMENT and keeps reservations in
-- their key's b-tree (pages of its commits); Postgres's heap tables and
-- identity sequences have neither cost: nothing changes here.
SELECT 1;
