package server_test

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// commitCutter is a TCP proxy to a Postgres server that, once armed,
// forwards the next COMMIT and cuts that connection when the server
// answers it, without passing the answer on: a commit the server made
// and the client never heard of, as a connection lost during COMMIT
// leaves it.
type commitCutter struct {
	ln    net.Listener
	armed atomic.Bool
	cut   chan struct{} // closed once it cut a COMMIT
	once  sync.Once
}

// commitMsg is pgx's COMMIT: a simple Query message.
var commitMsg = []byte("Q\x00\x00\x00\x0bcommit\x00")

func newCommitCutter(t *testing.T, server string) *commitCutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &commitCutter{ln: ln, cut: make(chan struct{})}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				continue
			}
			go p.serve(c, s)
		}
	}()
	return p
}

// mustChatEnvBehindCutter is a chat env on a new Postgres database
// reached through a commitCutter.
func mustChatEnvBehindCutter(t *testing.T) (*chatEnv, *commitCutter) {
	t.Helper()
	dsn, p := behindCutter(t)
	return mustChatEnvOn(t, dsn), p
}

// behindCutter is a new Postgres database's DSN through a commitCutter.
func behindCutter(t *testing.T) (string, *commitCutter) {
	t.Helper()
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	p := newCommitCutter(t, u.Host)
	u.Host = p.ln.Addr().String()
	return u.String(), p
}

func (p *commitCutter) serve(c, s net.Conn) {
	var committing atomic.Bool
	go func() {
		defer s.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 && p.armed.Load() && bytes.Contains(buf[:n], commitMsg) {
				p.armed.Store(false)
				committing.Store(true) // before the server can answer
			}
			if n > 0 {
				if _, werr := s.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	defer c.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 && committing.Load() {
			s.Close()
			p.once.Do(func() { close(p.cut) })
			return
		}
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestAdmissionCommitLostPG: a turn whose admission's COMMIT (left
// behind the first model request) was made by the server but lost on
// the way back took the failure for "never stored" and dropped its
// reservation: the hold stayed until it expired and the model call it
// paid for was never charged. The turn now settles it all the same (a
// reservation never stored is not found, which changes nothing), so
// nothing is held once it ended, and the lease is given up.
func TestAdmissionCommitLostPG(t *testing.T) {
	e, p := mustChatEnvBehindCutter(t)
	ctx := context.Background()

	first := e.chat(ctx, e.alice.key, "", `{"message":"hi"}`)
	if outcome(first) != "ok" {
		t.Fatalf("first turn: %s\n%s", outcome(first), first.raw)
	}
	sid := first.data(t, "message_start")["session_id"].(string)
	p.armed.Store(true)
	s := e.chat(ctx, e.alice.key, "", `{"message":"and now?","session_id":"`+sid+`"}`)
	select {
	case <-p.cut:
	default:
		t.Fatalf("no COMMIT was cut: %s\n%s", outcome(s), s.raw)
	}
	// The turn fails: its admission's write failed, as far as it knows.
	if o := outcome(s); o != "status internal" && o != "error event" {
		t.Fatalf("the turn whose admission's COMMIT was lost: %s\n%s", outcome(s), s.raw)
	}
	var stored int
	if err := e.db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE session_id = $1 AND content = 'and now?'`, sid).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("the admission cut at its COMMIT was not stored (%d, %v): the proxy cut another commit", stored, err)
	}
	e.mustNothingHeld(t)
}

// TestEndCommitLostPG: a turn whose last write (its reply, settlement
// and lease's release in one transaction) the server committed but whose
// answer was lost on the way back stores the reply and settles apart, as
// after any failed write: it stored the reply of a turn with a tool
// round a second time (a message without an id of its own), and the
// first reply of a turn failed the turn with a conflict, its id taken by
// itself. The turn now looks for its reply first.
func TestEndCommitLostPG(t *testing.T) {
	e, p := mustChatEnvBehindCutter(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		script func(*anthropictest.Request) anthropictest.Reply
		stored int // the turn's messages stored before its reply
	}{
		{"ToolRound", restartTurn, 3},
		{"Text", func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("Drive after five.", 6) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.fake.SetScript(restartTurn)
			first := e.chat(ctx, e.alice.key, "", `{"message":"hi"}`)
			if outcome(first) != "ok" {
				t.Fatalf("first turn: %s\n%s", outcome(first), first.raw)
			}
			sid := first.data(t, "message_start")["session_id"].(string)
			count := func() (n int) {
				t.Helper()
				if err := e.db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE session_id = $1`, sid).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			before := count()
			started, gate := make(chan struct{}, 1), make(chan struct{})
			e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
				reply := tc.script(req)
				if len(reply.Blocks) == 1 && reply.Blocks[0].Text != "" {
					started <- struct{}{}
					<-gate
				}
				return reply
			})
			result := make(chan stream, 1)
			go func() { result <- e.tryChat(ctx, e.alice.key, "", `{"message":"and now?","session_id":"`+sid+`"}`) }()
			<-started
			// What the turn writes behind its model calls is stored: the
			// next COMMIT is the turn's end.
			for count() < before+tc.stored {
			}
			p.armed.Store(true)
			close(gate)
			s := <-result
			select {
			case <-p.cut:
			default:
				t.Fatalf("no COMMIT was cut: %s\n%s", outcome(s), s.raw)
			}
			if o := outcome(s); o != "ok" {
				t.Errorf("the turn whose end's COMMIT was lost: %s\n%s", o, s.raw)
			}
			if got := count(); got != before+tc.stored+1 {
				t.Errorf("%d messages stored by the turn, want %d (its reply once)", got-before, tc.stored+1)
			}
			e.mustNothingHeld(t)
		})
	}
}

// TestRetryAdmissionCommitLostPG: an admission committed in place (a
// retry's, an answer's: the turn's message is already stored) whose
// COMMIT the server made but whose answer was lost failed the request,
// and nothing gave back what it took: the hold stayed until it expired
// (5 minutes of the user's budget) and the session stayed busy until
// the lease ran out. The turn now undoes it: it releases its lease and
// aborts its reservation, either of which finds nothing when the
// COMMIT was not made.
func TestRetryAdmissionCommitLostPG(t *testing.T) {
	e, p := mustChatEnvBehindCutter(t)
	ctx := context.Background()

	// A turn that failed before the model answered: the retry runs it again.
	e.fake.Enqueue(anthropictest.Status(500, nil, `{"type":"error","error":{"type":"api_error","message":"boom"}}`))
	first := e.chat(ctx, e.alice.key, "", `{"message":"hi"}`)
	if o := outcome(first); o == "ok" {
		t.Fatalf("first turn: %s\n%s", o, first.raw)
	}
	sid := first.data(t, "message_start")["session_id"].(string)
	e.mustNothingHeld(t)
	p.armed.Store(true)
	s := e.chat(ctx, e.alice.key, "", `{"retry":true,"session_id":"`+sid+`"}`)
	select {
	case <-p.cut:
	default:
		t.Fatalf("no COMMIT was cut: %s\n%s", outcome(s), s.raw)
	}
	if o := outcome(s); o != "status internal" && o != "error event" {
		t.Fatalf("the retry whose admission's COMMIT was lost: %s\n%s", o, s.raw)
	}
	var n int
	if err := e.db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM reservations`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d reservations (%v), want 2: the retry's admission was not made", n, err)
	}
	e.mustNothingHeld(t)
}
