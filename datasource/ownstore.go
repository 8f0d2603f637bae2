package datasource

import (
	"context"
	"slices"
	"strings"
)

// ownTables are the tables coachd's own store creates (its migrations,
// sqlstore/migrations; TestOwnTablesListed keeps the list whole). A
// database holding coachd's store may also hold an app's tables (a
// shared database), but a data source never declares these: read as
// shared tables they showed every user's conversations, and actions
// wrote to them.
var ownTables = []string{
	"chat_fingerprints", "files", "idempotency_keys", "ledger", "ledger_rowid",
	"limit_windows", "limit_windows_by_key", "messages", "messages_new", "notes",
	"reservations", "reservations_by_id", "reviews", "schema_migrations", "sessions",
	"stream_tokens", "turn_events", "turn_events_by_key", "turn_events_by_turn",
	"turn_keys", "turns", "turns_by_key", "uploads", "users", "voice_sessions",
}

// ownStore reports whether the database holds coachd's own store: its
// schema_migrations beside its users and ledger, in the schema a data
// source's tables are read from.
func (s *Source) ownStore(ctx context.Context) bool {
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('schema_migrations', 'users', 'ledger')`
	if s.dialect == postgresDialect {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()
			AND table_name IN ('schema_migrations', 'users', 'ledger')`
	}
	var n int
	return s.ro.QueryRowContext(ctx, q).Scan(&n) == nil && n == 3
}

// appTables is the declared tables but coachd's own, when the database
// holds coachd's store: each of those is a problem on its line.
func (s *Source) appTables(ctx context.Context, probs *problems) []*tableSpec {
	if !s.ownStore(ctx) {
		return s.spec.tables
	}
	var app []*tableSpec
	for _, ts := range s.spec.tables {
		if slices.Contains(ownTables, strings.ToLower(ts.name)) {
			probs.add(ts.line, "table %s is coachd's own (this database holds coachd's store): a data source declares only the app's tables", ts.name)
			continue
		}
		app = append(app, ts)
	}
	return app
}
