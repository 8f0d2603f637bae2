-- Sample data for the rideshare pack: the part of seed 001's database its
-- coach reads and writes. `go run ./examples/rideshare/data/mkdb` builds
-- examples/rideshare/data/rideshare.db from this file. Two drivers: demo
-- (the user `coachd serve --demo` creates) and maria; rows are scoped to
-- a driver by user_id, which holds the coachd user's name (user_key: name).

CREATE TABLE driver_profiles (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  first_name TEXT NOT NULL,
  home_city TEXT,
  platforms TEXT
);
CREATE TABLE driver_vehicles (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  make TEXT, model TEXT, year INTEGER, vehicle_type TEXT
);
CREATE TABLE snapshots (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  city TEXT, state TEXT, timezone TEXT,
  lat REAL, lng REAL,
  weather TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE strategies (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  snapshot_id TEXT NOT NULL REFERENCES snapshots(id),
  consolidated_strategy TEXT,
  immediate_strategy TEXT
);
CREATE TABLE briefings (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  snapshot_id TEXT NOT NULL REFERENCES snapshots(id),
  events TEXT, traffic TEXT, news TEXT, weather TEXT
);
CREATE TABLE ranking_candidates (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  snapshot_id TEXT NOT NULL REFERENCES snapshots(id),
  venue_name TEXT NOT NULL,
  rank INTEGER,
  features TEXT
);
CREATE TABLE discovered_events (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  title TEXT NOT NULL,
  venue_name TEXT,
  event_start_date TEXT,
  event_start_time TEXT,
  city TEXT,
  is_active INTEGER NOT NULL DEFAULT 1,
  deactivation_reason TEXT,
  deactivation_notes TEXT,
  deactivated_at TEXT,
  reactivation_notes TEXT
);
CREATE TABLE venue_catalog (
  venue_id TEXT PRIMARY KEY,
  venue_name TEXT NOT NULL,
  city TEXT, expense_rank INTEGER, opening_hours TEXT
);
CREATE TABLE market_intelligence (
  id TEXT PRIMARY KEY,
  market_slug TEXT NOT NULL,
  intel_type TEXT, title TEXT, content TEXT
);
CREATE TABLE zone_intelligence (
  id TEXT PRIMARY KEY,
  market_slug TEXT NOT NULL,
  zone_type TEXT NOT NULL,
  zone_name TEXT NOT NULL,
  reason TEXT,
  time_constraints TEXT,
  address_hint TEXT,
  lat REAL, lng REAL,
  reported_by TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE coach_system_notes (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  type TEXT NOT NULL,
  category TEXT NOT NULL,
  title TEXT NOT NULL,
  description TEXT NOT NULL,
  user_quote TEXT,
  priority INTEGER,
  created_at TEXT NOT NULL
);
CREATE TABLE news_deactivations (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  news_id TEXT,
  news_title TEXT,
  reason TEXT NOT NULL,
  notes TEXT,
  created_at TEXT NOT NULL
);

INSERT INTO driver_profiles VALUES
  ('0b6c1a52-6a43-4a8e-9d0e-000000000001', 'demo', 'Sam', 'Dallas', 'uber,lyft'),
  ('0b6c1a52-6a43-4a8e-9d0e-000000000002', 'maria', 'Maria', 'Dallas', 'uber');
INSERT INTO driver_vehicles VALUES
  ('5f0e2b4c-1d2e-4f5a-8b9c-000000000001', 'demo', 'Toyota', 'Camry Hybrid', 2022, 'sedan'),
  ('5f0e2b4c-1d2e-4f5a-8b9c-000000000002', 'maria', 'Honda', 'Odyssey', 2020, 'minivan');
INSERT INTO snapshots VALUES
  ('9a1d7c3e-0000-4000-8000-000000000001', 'demo', 'Dallas', 'TX', 'America/Chicago', 32.7767, -96.7970, 'clear, 24C', '2026-11-20T17:05:00Z'),
  ('9a1d7c3e-0000-4000-8000-000000000002', 'demo', 'Dallas', 'TX', 'America/Chicago', 32.7845, -96.7849, 'light rain, 18C', '2026-11-21T22:40:00Z'),
  ('9a1d7c3e-0000-4000-8000-000000000003', 'maria', 'Fort Worth', 'TX', 'America/Chicago', 32.7555, -97.3308, 'clear, 22C', '2026-11-21T23:10:00Z');
INSERT INTO strategies VALUES
  ('c4e8f1a2-0000-4000-8000-000000000001', 'demo', '9a1d7c3e-0000-4000-8000-000000000002',
   'Work Deep Ellum and Uptown until 2am; the rain lifts surge downtown.',
   'Stage near the American Airlines Center: the game lets out at 10:15pm.');
INSERT INTO briefings VALUES
  ('b3d5e7f9-0000-4000-8000-000000000001', 'demo', '9a1d7c3e-0000-4000-8000-000000000002',
   '[{"title":"Mavericks vs Lakers","ends":"22:15"}]',
   'I-35E southbound slow from Commerce St to the Trinity',
   '[{"id":"news-1","title":"I-35 closure: southbound lanes shut overnight near downtown"},{"id":"news-2","title":"DART adds late trains for the game"}]',
   'light rain until 23:00'),
  ('b3d5e7f9-0000-4000-8000-000000000002', 'maria', '9a1d7c3e-0000-4000-8000-000000000003',
   '[]', 'clear', '[{"id":"news-3","title":"Fort Worth Stockyards parade reroutes traffic"}]', 'clear');
INSERT INTO ranking_candidates VALUES
  ('r-1', 'demo', '9a1d7c3e-0000-4000-8000-000000000002', 'American Airlines Center', 1, '{"reason":"game lets out 22:15","surge":"likely"}'),
  ('r-2', 'demo', '9a1d7c3e-0000-4000-8000-000000000002', 'The Free Man', 2, '{"reason":"jazz night crowd","surge":"moderate"}'),
  ('r-3', 'maria', '9a1d7c3e-0000-4000-8000-000000000003', 'Billy Bob''s Texas', 1, '{"reason":"Saturday show"}');
INSERT INTO discovered_events VALUES
  ('e7a0b1c2-0000-4000-8000-000000000001', 'demo', 'Taylor Swift Concert', 'AT&T Stadium', '2026-11-21', '19:30', 'Arlington', 1, NULL, NULL, NULL, NULL),
  ('e7a0b1c2-0000-4000-8000-000000000002', 'demo', 'Mavericks vs Lakers', 'American Airlines Center', '2026-11-21', '19:00', 'Dallas', 1, NULL, NULL, NULL, NULL),
  ('e7a0b1c2-0000-4000-8000-000000000003', 'demo', 'Deep Ellum Jazz Night', 'The Free Man', '2026-11-21', '21:00', 'Dallas', 1, NULL, NULL, NULL, NULL),
  ('e7a0b1c2-0000-4000-8000-000000000004', 'demo', 'Dallas Jazz Festival', 'Klyde Warren Park', '2026-11-22', '12:00', 'Dallas', 1, NULL, NULL, NULL, NULL),
  ('e7a0b1c2-0000-4000-8000-000000000005', 'maria', 'Taylor Swift Concert', 'AT&T Stadium', '2026-11-21', '19:30', 'Arlington', 1, NULL, NULL, NULL, NULL);
INSERT INTO venue_catalog VALUES
  ('v-aac', 'American Airlines Center', 'Dallas', 3, 'event nights'),
  ('v-att', 'AT&T Stadium', 'Arlington', 4, 'event nights'),
  ('v-dfw', 'DFW Airport Terminal D', 'Dallas', 2, '24h');
INSERT INTO market_intelligence VALUES
  ('m-1', 'dallas-tx', 'airport', 'DFW staging lot', 'The TNC lot fills by 6am on weekdays; expect a 40 minute queue.'),
  ('m-2', 'dallas-tx', 'events', 'Stadium exits', 'Arlington pickups after concerts move to Lot 10; avoid Collins St.');
INSERT INTO zone_intelligence VALUES
  ('z-1', 'dallas-tx', 'dead_zone', 'Far North Plano office parks', 'Empty after 7pm', 'weekdays after 19:00', NULL, NULL, NULL, 'maria', '2026-11-01T10:00:00Z');
