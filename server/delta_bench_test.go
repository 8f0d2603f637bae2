package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/server"
)

// replayModel streams a reply already in memory: n text deltas of
// "word ", with the message and block framing a real stream has. It is
// the upstream with the SDK's decoding taken away, so that
// BenchmarkDeltaPath measures only what coachd itself does with each
// delta (the loop, the turn's event log, the SSE encoding and writes);
// BenchmarkTurnDeltas measures the same through the SDK and the fake.
type replayModel struct{ n int }

func (m replayModel) Stream(context.Context, *coachd.ModelRequest) coachd.ModelStream {
	return &replayStream{n: m.n, i: -1}
}

type replayStream struct {
	n, i int
	ev   coachd.ModelEvent
}

func (s *replayStream) Next() bool {
	s.i++
	switch {
	case s.i < s.n:
		s.ev = coachd.ModelEvent{Type: coachd.ModelTextDelta, Text: "word "}
	case s.i == s.n:
		s.ev = coachd.ModelEvent{Type: coachd.ModelBlockStop}
	case s.i == s.n+1:
		s.ev = coachd.ModelEvent{Type: coachd.ModelMessageDelta, StopReason: coachd.StopEndTurn,
			Usage: coachd.Usage{InputTokens: 10, OutputTokens: int64(s.n)}}
	default:
		return false
	}
	return true
}

func (s *replayStream) Event() coachd.ModelEvent { return s.ev }
func (s *replayStream) Err() error               { return nil }
func (s *replayStream) Close() error             { return nil }

func (s *replayStream) Response() *coachd.ModelResponse {
	return &coachd.ModelResponse{ID: "msg_replay", Model: "claude-replay", StopReason: coachd.StopEndTurn,
		Blocks: []coachd.Block{coachd.TextBlock(strings.Repeat("word ", s.n))},
		Usage:  coachd.Usage{InputTokens: 10, OutputTokens: int64(s.n)}}
}

// BenchmarkDeltaPath is a whole turn of 20 and of 220 text deltas from
// replayModel, read to its end by a client: the difference over 200 is
// what one delta costs coachd itself, from the model's event to the SSE
// bytes on the wire (run with -benchmem).
//
//	go test ./server -run '^$' -bench DeltaPath -benchmem -benchtime 200x
func BenchmarkDeltaPath(b *testing.B) {
	for _, n := range []int{20, 220} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			e := mustReplayEnv(b, replayModel{n: n})
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/chat/stream", strings.NewReader(`{"message":"hi"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+e.alice.key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), "event: message_end") {
					b.Fatalf("status %d: %.300s", resp.StatusCode, got)
				}
			}
		})
	}
}

// mustReplayEnv is a server over a SQLite file whose runner's model is m;
// its user's budget outlasts any -benchtime.
func mustReplayEnv(b *testing.B, m coachd.Model) *env {
	db := mustDB(b, filepath.Join(b.TempDir(), "coachd.db"), nil)
	ts, err := agent.NewToolset()
	if err != nil {
		b.Fatal(err)
	}
	ag := agent.DefaultAgent()
	ag.Tools = nil
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	runner := agent.NewRunner(agent.Config{Store: db, Tools: ts, Logger: logger, Model: m,
		Agents: func(string) (*agent.Agent, bool) { return ag, true }})
	api := server.New(server.Deps{Store: db, Logger: logger, AdminKey: adminKey, Runner: runner, Heartbeat: time.Hour})
	srv := httptest.NewServer(api)
	b.Cleanup(func() { closeServer(api, srv) })
	e := &env{t: b, db: db, url: srv.URL, logs: logs, admin: client.New(srv.URL, adminKey, srv.Client())}
	e.alice = e.MustUser("alice")
	budget := int64(1) << 40
	if _, err := db.UpdateUser(context.Background(), e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		b.Fatal(err)
	}
	return e
}
