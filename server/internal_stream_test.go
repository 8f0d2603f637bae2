package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestStreamInternalErrorIsGeneric: when the database went away in the
// middle of a turn (Postgres refusing connections: a failover, a
// restart), the stream's last event was {"type":"internal","message":
// "begin transaction"}: the store's wording, and nothing the user could
// quote to the operator, where every other internal error says "quote
// request id …". It is now a retryable unavailable error (the database
// is down, for now) in words of its own, and the log line with the cause
// names the session.
func TestStreamInternalErrorIsGeneric(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	e := mustChatEnvOn(t, dsn)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	t.Cleanup(func() { admin.Exec(`ALTER DATABASE ` + dbName + ` ALLOW_CONNECTIONS true`) })

	// Six chunks 300 ms apart: the database is cut at the first, the end
	// of the turn comes 1.5 s later.
	e.fake.Enqueue(anthropictest.Text("one two three four five six", 6).Paced(0, 300_000_000))
	var last client.Event
	cut := false
	sid, _ := e.alice.c.ChatStream(context.Background(), client.ChatRequest{Message: "hello"}, client.StreamOptions{},
		func(ev client.Event) error {
			if ev.Name == "content_delta" && !cut {
				cut = true
				if _, err := admin.Exec(`ALTER DATABASE ` + dbName + ` ALLOW_CONNECTIONS false`); err != nil {
					t.Fatal(err)
				}
				if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, dbName); err != nil {
					t.Fatal(err)
				}
			}
			last = ev
			return nil
		})
	var got struct {
		Type      string `json:"type"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	}
	json.Unmarshal(last.Data, &got)
	if last.Name != "error" || got.Type != "unavailable" || !got.Retryable {
		t.Fatalf("last event %s %s, want a retryable unavailable error", last.Name, last.Data)
	}
	if !strings.HasPrefix(got.Message, "the database is unavailable") || sid == "" {
		t.Errorf("error message %q (session %s): want the store's wording kept out", got.Message, sid)
	}
	if !strings.Contains(e.logs.String(), "session="+sid) {
		t.Errorf("no log line names the session:\n%s", e.logs)
	}
}
