package server_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// restartTurn is one turn's round: a tool call, then, once the tool's
// result is back, the reply.
func restartTurn(req *anthropictest.Request) anthropictest.Reply {
	if len(req.ToolResults()) == 0 {
		return anthropictest.Blocks(anthropictest.TextBlock("Checking. ", 4), anthropictest.ToolUse("toolu_r", "list_notes", `{}`))
	}
	return anthropictest.Text("Drive after five.", 6)
}

// outcome is how a turn's request ended: "ok" (message_end), an error
// event's or body's type, or "no response".
func outcome(s stream) string {
	switch {
	case s.err != nil:
		return "no response"
	case s.status != 200:
		return "status " + s.errBody.errorCode()
	case len(s.named("error")) > 0:
		return "error event"
	case len(s.named("message_end")) == 1:
		return "ok"
	}
	return "cut short"
}

// TestPostgresRestartPG: Postgres restarted (a fast stop and a start on
// the same data, as an operator's restart or a failover does) under
// coachd, which keeps running. Turns in flight across the restart end
// (their writes go to connections the server ended: each is found
// closed and the write runs on a new one); turns that meet the server
// down fail with an error, never a hang; new turns run once it is back;
// and after it all no hold, lease or charge is left behind.
func TestPostgresRestartPG(t *testing.T) {
	pg := pgtest.NewServer(t)
	e := mustChatEnvOn(t, pg.NewDatabase(t))
	ctx := context.Background()
	const n = 4

	// Turns waiting on the model's reply, after their first round was
	// stored, while the server restarts.
	t.Run("InFlight", func(t *testing.T) {
		started, gate := make(chan struct{}, n), make(chan struct{})
		var gated atomic.Bool
		gated.Store(true)
		e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
			if len(req.ToolResults()) > 0 && gated.Load() {
				started <- struct{}{}
				<-gate
			}
			return restartTurn(req)
		})
		stored := e.messages(t)
		results := make(chan stream, n)
		for range n {
			go func() { results <- e.tryChat(ctx, e.alice.key, "", `{"message":"when should I drive?"}`) }()
		}
		for range n {
			<-started
		}
		// Each turn's first round (its write behind the second call)
		// is stored: the user message, the call, its result.
		e.awaitMessages(t, stored+3*n)
		pg.Restart(t)
		gated.Store(false)
		close(gate)
		for range n {
			if s := <-results; outcome(s) != "ok" {
				t.Errorf("a turn in flight across the restart: %s\n%s", outcome(s), s.raw)
			}
		}
		e.mustNothingHeld(t)
	})

	// A turn whose reply comes while the server is down: its last
	// write fails, and it ends with an error (or, the server back in
	// time, stores the reply); its hold is settled and its lease given
	// up once the server is back, within the time the turn's end has.
	// They were tried once: the hold stayed until it expired, its usage
	// never charged, and the session stayed busy.
	t.Run("EndsWhileDown", func(t *testing.T) {
		started, gate := make(chan struct{}, 1), make(chan struct{})
		e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
			if len(req.ToolResults()) > 0 {
				started <- struct{}{}
				<-gate
			}
			return restartTurn(req)
		})
		stored := e.messages(t)
		result := make(chan stream, 1)
		go func() { result <- e.tryChat(ctx, e.alice.key, "", `{"message":"when should I drive?"}`) }()
		<-started
		e.awaitMessages(t, stored+3)
		pg.Stop()
		close(gate)
		for !strings.Contains(e.logs.String(), "ending turn; storing and settling apart") {
			runtime.Gosched() // the turn's last write failed
		}
		pg.Start(t)
		if o := outcome(<-result); o != "ok" && o != "error event" {
			t.Errorf("the turn whose end met the server down: %s", o)
		}
		e.mustNothingHeld(t)
		if t.Failed() {
			t.Log(e.logs.String())
		}
	})

	// Turns one after another on n sessions while the server restarts.
	t.Run("UnderLoad", func(t *testing.T) {
		e.fake.SetScript(restartTurn)
		var done, after atomic.Int64
		var restarted atomic.Bool
		stop := make(chan struct{})
		progress := make(chan struct{}, 1)
		var mu sync.Mutex
		outcomes := map[string]int{}
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					o := outcome(e.tryChat(ctx, e.alice.key, "", `{"message":"when should I drive?"}`))
					mu.Lock()
					outcomes[o]++
					mu.Unlock()
					done.Add(1)
					if o == "ok" && restarted.Load() {
						after.Add(1)
					}
					select {
					case progress <- struct{}{}:
					default:
					}
				}
			}()
		}
		for done.Load() < 2*n {
			<-progress
		}
		pg.Restart(t)
		restarted.Store(true)
		for after.Load() < 2*n {
			<-progress
		}
		close(stop)
		wg.Wait()
		t.Logf("outcomes: %v", outcomes)
		for o := range outcomes {
			if o == "no response" || o == "cut short" {
				t.Errorf("%d turns: %s", outcomes[o], o)
			}
		}
		e.mustNothingHeld(t)
	})
}

// messages counts the messages stored.
func (e *chatEnv) messages(t *testing.T) int {
	t.Helper()
	var k int
	if err := e.db.SQL().QueryRowContext(context.Background(), `SELECT count(*) FROM messages`).Scan(&k); err != nil {
		t.Fatal(err)
	}
	return k
}

// awaitMessages returns once k messages are stored.
func (e *chatEnv) awaitMessages(t *testing.T, k int) {
	t.Helper()
	for e.messages(t) < k {
	}
}

// mustNothingHeld fails unless no turn holds anything: no reservation
// active, no tokens reserved, no session leased, and every ledger
// balanced.
func (e *chatEnv) mustNothingHeld(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for what, q := range map[string]string{
		"active reservations":    `SELECT count(*) FROM reservations WHERE state = 'active'`,
		"users with tokens held": `SELECT count(*) FROM users WHERE tokens_reserved <> 0`,
		"leased sessions":        `SELECT count(*) FROM sessions WHERE turn_owner IS NOT NULL`,
	} {
		var k int
		if err := e.db.SQL().QueryRowContext(ctx, q).Scan(&k); err != nil {
			t.Fatal(err)
		}
		if k != 0 {
			t.Errorf("%d %s after every turn ended", k, what)
		}
	}
	drift, err := e.db.CheckLedger(ctx)
	if err != nil || len(drift) != 0 {
		t.Errorf("ledger: %v, %v", drift, err)
	}
}
