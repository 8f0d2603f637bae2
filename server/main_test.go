package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	os.Exit(code)
}

const adminKey = "test-admin-key-0123456789"

// forEachBackend runs fn against a fresh SQLite file and, when the
// PostgreSQL binaries are installed, a fresh Postgres database.
func forEachBackend(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, filepath.Join(t.TempDir(), "coachd.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, pgtest.NewDatabase(t))
	})
}

// testUser is a user with its key and a client that uses it.
type testUser struct {
	*coachd.User
	key string
	c   *client.Client
}

// env is a running server over a real database, with two users.
type env struct {
	t          testing.TB
	db         *sqlstore.DB
	url        string
	logs       *syncbuf.Buffer
	admin      *client.Client
	alice, bob testUser
}

// MustEnv starts a server on dsn with two users, alice and bob.
func MustEnv(t *testing.T, dsn string) *env {
	t.Helper()
	db := mustDB(t, dsn, coachd.SystemClock{})
	logs := &syncbuf.Buffer{}
	srv := httptest.NewServer(server.New(server.Deps{
		Store:    db,
		Logger:   slog.New(slog.NewTextHandler(logs, nil)),
		AdminKey: adminKey,
		Ping:     db.SQL().PingContext,
	}))
	t.Cleanup(srv.Close)
	e := &env{t: t, db: db, url: srv.URL, logs: logs, admin: client.New(srv.URL, adminKey, srv.Client())}
	e.alice = e.MustUser("alice")
	e.bob = e.MustUser("bob")
	return e
}

// closeServer ends the turns still running on api, which may outlive
// their request (on_disconnect: continue), within 10 s, then closes srv.
func closeServer(api *server.Server, srv *httptest.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	api.Drain()
	api.WaitTurns(ctx)
	srv.Close()
}

// mustDB opens and migrates the database at dsn, closed when the test
// ends (after the servers registered later).
func mustDB(t testing.TB, dsn string, clock coachd.Clock) *sqlstore.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, dsn, clock)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// MustUser creates a user through the admin API.
func (e *env) MustUser(name string) testUser {
	e.t.Helper()
	budget := int64(100000)
	u, key, err := e.admin.CreateUser(context.Background(), name, &budget)
	if err != nil {
		e.t.Fatalf("create user %s: %v", name, err)
	}
	return testUser{User: u, key: key, c: client.New(e.url, key, nil)}
}

// MustSession creates a session for u holding a user message and an
// assistant round with a tool call and its result.
func (e *env) MustSession(u testUser) *coachd.Session {
	e.t.Helper()
	ctx := context.Background()
	s, err := u.c.CreateSession(ctx, "", "Friday plan")
	if err != nil {
		e.t.Fatalf("create session: %v", err)
	}
	msgs := []*coachd.Message{
		{Role: coachd.RoleUser, Content: "When should I drive?", Blocks: []coachd.Block{coachd.TextBlock("When should I drive?")}},
		{Role: coachd.RoleAssistant, Content: "Let me check.", Blocks: []coachd.Block{
			coachd.TextBlock("Let me check."),
			{Type: coachd.BlockToolUse, ID: "toolu_01", Name: "search_notes", Input: json.RawMessage(`{"query":"friday"}`)},
		}},
		{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.ToolResultBlock("toolu_01", "no notes", false)}},
	}
	if err := e.db.AppendMessages(ctx, u.ID, s.ID, msgs); err != nil {
		e.t.Fatalf("append messages: %v", err)
	}
	return s
}

// MustNote creates a note for u through the API.
func (e *env) MustNote(u testUser, title string) *coachd.Note {
	e.t.Helper()
	n, err := u.c.CreateNote(context.Background(), client.NoteInput{
		Type: "tip", Category: "timing", Title: title, Content: "Airport rush after 5pm", Importance: 70, MarketSlug: "dallas-tx",
	})
	if err != nil {
		e.t.Fatalf("create note: %v", err)
	}
	return n
}

// response is one raw HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// errorCode returns the code of an error body, or "": the JSON error
// body, or on the stream endpoint an SSE error event's type.
func (r response) errorCode() string {
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(r.body), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var ev struct {
					Type string `json:"type"`
				}
				_ = json.Unmarshal([]byte(data), &ev)
				return ev.Type
			}
		}
		return ""
	}
	var b struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.body, &b)
	return b.Error.Code
}

// request is one raw HTTP request; Header values override the defaults
// (Content-Type application/json when there is a body).
type request struct {
	method, path, key, body string
	header                  map[string]string
}

func (e *env) do(req request) response {
	e.t.Helper()
	var body io.Reader
	if req.body != "" {
		body = strings.NewReader(req.body)
	}
	r, err := http.NewRequest(req.method, e.url+req.path, body)
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	if req.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if req.key != "" {
		r.Header.Set("Authorization", "Bearer "+req.key)
	}
	for k, v := range req.header {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.method, req.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("read body: %v", err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// dump returns every row of every table, in a stable order: what "the
// database is unchanged" compares.
func (e *env) dump() map[string][]string {
	e.t.Helper()
	ctx := context.Background()
	q := `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	if e.db.Dialect() == "postgres" {
		q = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`
	}
	rows, err := e.db.SQL().QueryContext(ctx, q)
	if err != nil {
		e.t.Fatalf("list tables: %v", err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			e.t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := e.db.SQL().QueryContext(ctx, `SELECT * FROM `+table+` ORDER BY 1`)
		if err != nil {
			e.t.Fatalf("dump %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		out[table] = []string{}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				e.t.Fatalf("dump %s: %v", table, err)
			}
			line, _ := json.Marshal(vals)
			out[table] = append(out[table], string(line))
		}
		rows.Close()
	}
	return out
}
