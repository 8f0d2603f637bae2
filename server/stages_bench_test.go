package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
	"github.com/coachd/coachd/tools"
)

// The stages of a plain turn before its first text, in order but for
// the client's headers, which go out once the admission's commit (done
// beside the model request) is, before or after the upstream's: each is
// stamped once per turn at the moment it is reached.
const (
	stServer    = iota // the API handler has the request
	stAuth             // FindUserByKeyHash returned
	stLimit            // the rate-limit window (HitLimit) returned
	stRead             // ReadTurn returned
	stAdmit            // AdmitTurn returned
	stSent             // the model request is handed to the HTTP transport
	stHeaders          // the client has the response headers (the admission committed)
	stUpHeaders        // the transport has the upstream's response headers
	stUpFirst          // the first read of the upstream's body returned
	stFirst            // the client has the first content_delta
	nStages
)

var stageNames = [nStages]string{"server", "auth", "limit", "read", "admit", "sent", "headers", "up-headers", "up-first", "first"}

// stamps records, for the turn being timed, when each stage was reached
// (nanoseconds after the client's send; 0: not reached).
type stamps struct {
	start atomic.Int64 // the client's send, UnixNano
	at    [nStages]atomic.Int64
}

func (s *stamps) mark(i int) {
	if st := s.start.Load(); st != 0 {
		s.at[i].Store(time.Now().UnixNano() - st)
	}
}

// stampStore is the real store, stamping when the prepare path's
// methods return.
type stampStore struct {
	*sqlstore.DB
	s *stamps
}

func (st stampStore) FindUserByKeyHash(ctx context.Context, h string) (*coachd.User, error) {
	defer st.s.mark(stAuth)
	return st.DB.FindUserByKeyHash(ctx, h)
}

func (st stampStore) HitLimit(ctx context.Context, userID string, h coachd.LimitHit) (int64, bool, error) {
	defer st.s.mark(stLimit)
	return st.DB.HitLimit(ctx, userID, h)
}

func (st stampStore) ReadTurn(ctx context.Context, userID, sessionID string, after int64) (*coachd.Session, []*coachd.Message, error) {
	defer st.s.mark(stRead)
	return st.DB.ReadTurn(ctx, userID, sessionID, after)
}

func (st stampStore) AdmitTurn(ctx context.Context, a coachd.TurnAdmission) (*coachd.Admission, error) {
	defer st.s.mark(stAdmit)
	return st.DB.AdmitTurn(ctx, a)
}

// stampTransport stamps when a model request reaches the transport.
type stampTransport struct {
	rt http.RoundTripper
	s  *stamps
}

func (t stampTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.s.mark(stSent)
	res, err := t.rt.RoundTrip(r)
	t.s.mark(stUpHeaders)
	if err == nil {
		res.Body = &stampBody{ReadCloser: res.Body, s: t.s}
	}
	return res, err
}

// stampBody stamps when the first read of a response body returns.
type stampBody struct {
	io.ReadCloser
	s    *stamps
	read bool
}

func (b *stampBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.read {
		b.read = true
		b.s.mark(stUpFirst)
	}
	return n, err
}

// BenchmarkTurnStages drives plain turns one at a time through the real
// handler (rate limit on, so its window is written as in a default
// deployment), the database (a SQLite file; Postgres from pgtest when
// installed) and the fake, sessions of 10 turns, and reports when each
// stage before the first text is reached: p50 and p90 in µs after the
// client's send. The stamps come from wrappers around the store, the
// model's transport and the handler; nothing in coachd is changed to
// take them.
//
//	go test ./server -run '^$' -bench TurnStages -benchtime 600x
func BenchmarkTurnStages(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		benchTurnStages(b, filepath.Join(b.TempDir(), "coachd.db"))
	})
	b.Run("postgres", func(b *testing.B) {
		benchTurnStages(b, pgtest.NewDatabase(b))
	})
}

func benchTurnStages(b *testing.B, dsn string) {
	s := &stamps{}
	db := mustDB(b, dsn, nil)
	fake := anthropictest.NewServer()
	b.Cleanup(fake.Close)
	fake.SetRecording(false)
	reply := anthropictest.Text(strings.Repeat("word ", 20), len("word "))
	fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return reply })
	ts, err := agent.NewToolset(tools.Builtins()...)
	if err != nil {
		b.Fatal(err)
	}
	store := stampStore{DB: db, s: s}
	hc := &http.Client{Transport: stampTransport{rt: http.DefaultTransport, s: s}}
	runner := agent.NewRunner(agent.Config{
		Store: store, Tools: ts,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true, HTTPClient: hc}),
	})
	api := server.New(server.Deps{Store: store, Logger: slog.New(slog.DiscardHandler), AdminKey: adminKey, Runner: runner,
		Heartbeat: time.Hour, Limits: server.Limits{Rate: coachd.RateLimit{N: 1 << 40, Per: time.Minute}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mark(stServer)
		api.ServeHTTP(w, r)
	}))
	b.Cleanup(func() { closeServer(api, srv) })
	budget := int64(1) << 40
	_, key, err := client.New(srv.URL, adminKey, nil).CreateUser(context.Background(), "alice", &budget)
	if err != nil {
		b.Fatal(err)
	}

	var got [nStages][]time.Duration
	session := ""
	turn := 0
	for b.Loop() {
		body := `{"message":"hi"}`
		if session != "" {
			body = fmt.Sprintf(`{"message":"hi","session_id":%q}`, session)
		}
		for i := range s.at {
			s.at[i].Store(0)
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/stream", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		s.start.Store(start.UnixNano())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		s.mark(stHeaders)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if s.at[stFirst].Load() == 0 && sc.Text() == "event: content_delta" {
				s.mark(stFirst)
				s.start.Store(0) // the turn's own later writes are not stamped
			}
		}
		resp.Body.Close()
		session = resp.Header.Get("X-Coachd-Session-Id")
		if turn++; turn%10 == 0 {
			session = ""
		}
		for i := range got {
			if d := s.at[i].Load(); d > 0 {
				got[i] = append(got[i], time.Duration(d))
			}
		}
	}
	b.StopTimer()
	for i, name := range stageNames {
		if len(got[i]) == 0 {
			continue
		}
		b.ReportMetric(pct(got[i], .5)*1000, name+"-p50-µs")
		b.ReportMetric(pct(got[i], .9)*1000, name+"-p90-µs")
	}
}
