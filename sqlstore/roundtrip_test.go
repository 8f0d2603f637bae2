package sqlstore_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// roundTripProxy forwards loopback connections to a PostgreSQL server and
// counts the round trips clients ask for: each Sync (the end of an
// extended-protocol exchange) and each simple Query is one, as the client
// then waits for ReadyForQuery.
type roundTripProxy struct {
	ln     net.Listener
	target string
	trips  atomic.Int64
	wg     sync.WaitGroup
}

func newRoundTripProxy(tb testing.TB, target string) *roundTripProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &roundTripProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *roundTripProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.wg.Add(2)
		go func() { defer p.wg.Done(); io.Copy(c, s); c.Close() }()
		go func() { defer p.wg.Done(); p.count(c, s); s.Close() }()
	}
}

// count copies the client's side to the server, reading its messages:
// the startup message (no type byte), then type byte and length each.
func (p *roundTripProxy) count(c, s net.Conn) {
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return
	}
	size := binary.BigEndian.Uint32(n[:])
	if _, err := s.Write(n[:]); err != nil || copyN(s, c, int64(size)-4) != nil {
		return
	}
	var h [5]byte
	for {
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return
		}
		if h[0] == 'S' || h[0] == 'Q' {
			p.trips.Add(1)
		}
		if _, err := s.Write(h[:]); err != nil || copyN(s, c, int64(binary.BigEndian.Uint32(h[1:]))-4) != nil {
			return
		}
	}
}

func copyN(dst io.Writer, src io.Reader, n int64) error {
	_, err := io.CopyN(dst, src, n)
	return err
}

// fewest runs setup and op three times and returns the fewest round trips one run
// took: a statement's first use on a connection adds its Parse, and the
// driver pings a connection it has not used for a second.
func (p *roundTripProxy) fewest(tb testing.TB, setup, op func() error) int64 {
	tb.Helper()
	best := int64(-1)
	for range 3 {
		if setup != nil {
			if err := setup(); err != nil {
				tb.Fatal(err)
			}
		}
		before := p.trips.Load()
		if err := op(); err != nil {
			tb.Fatal(err)
		}
		if n := p.trips.Load() - before; best < 0 || n < best {
			best = n
		}
	}
	return best
}

// TestPostgresRoundTrips holds the turn's hot statements on Postgres to
// the round trips they take (BEGIN and COMMIT count): one for an
// authentication, a rate-limit hit and an event-log flush, two for
// ReadTurn, three for a chat turn's admission (with its limits or
// without), for a turn's end given the reservation as last seen, for an
// append of messages and for a note, five for a settlement, six for a
// turn's end without it.
func TestPostgresRoundTrips(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newRoundTripProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	ctx := context.Background()
	clock := newClock()
	db := MustOpen(t, u.String(), clock)
	user := budgetUser(t, db, 1_000_000)
	s := mustSession(t, db, user)

	check := func(name string, want int64, setup, op func() error) {
		t.Helper()
		if got := proxy.fewest(t, setup, op); got != want {
			t.Errorf("%s: %d round trips, want %d", name, got, want)
		}
	}
	check("FindUserByKeyHash", 1, nil, func() error {
		_, err := db.FindUserByKeyHash(ctx, "no such hash")
		if coachd.ErrorCode(err) == coachd.ENOTFOUND {
			return nil
		}
		return err
	})
	window := clock.Now().Truncate(time.Minute)
	check("HitLimit", 1, nil, func() error {
		_, _, err := db.HitLimit(ctx, user.ID, coachd.LimitHit{Key: "turns", Window: window, Limit: 1000})
		return err
	})
	check("ReadTurn", 2, nil, func() error {
		_, _, err := db.ReadTurn(ctx, user.ID, s.ID, 0)
		return err
	})

	var turn int64
	var resv []*coachd.Reservation
	seen := s
	for i := range 3 {
		adm, err := db.AdmitTurn(ctx, coachd.TurnAdmission{Owner: "A", Until: clock.Now().Add(time.Minute), Seen: seen,
			Reserve: coachd.ReserveRequest{Agent: s.Agent, Estimate: 500}, Stream: &coachd.StreamStart{Owner: "proc", Keep: 20}})
		if err != nil {
			t.Fatalf("admission %d: %v", i, err)
		}
		turn = adm.StreamTurn
		resv = append(resv, adm.Reservation)
		if _, _, err := db.EndTurn(ctx, user.ID, coachd.TurnEnd{SessionID: s.ID, Owner: "A"}); err != nil {
			t.Fatal(err)
		}
		if seen, _, err = db.ReadTurn(ctx, user.ID, s.ID, 0); err != nil {
			t.Fatal(err)
		}
	}
	// A chat turn's admission: BEGIN, one statement for the user's lock,
	// the lease, the event log's turn, the user message, the user's hold,
	// the reservation and its ledger row, COMMIT (was eight: the log's
	// turn, the message and the hold each a statement of their own; then
	// five, the lock and the hold each one of its own).
	held := false
	release := func() error {
		if held {
			if _, _, err := db.EndTurn(ctx, user.ID, coachd.TurnEnd{SessionID: s.ID, Owner: "A"}); err != nil {
				return err
			}
			held = false
		}
		var err error
		seen, _, err = db.ReadTurn(ctx, user.ID, s.ID, 0)
		return err
	}
	check("AdmitTurn", 3, release, func() error {
		_, err := db.AdmitTurn(ctx, coachd.TurnAdmission{Owner: "A", Until: clock.Now().Add(time.Minute), Seen: seen,
			Reserve: coachd.ReserveRequest{Agent: s.Agent, Estimate: 500}, Stream: &coachd.StreamStart{Owner: "proc", Keep: 20},
			Message: &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hello")}}})
		held = err == nil
		return err
	})
	if err := release(); err != nil {
		t.Fatal(err)
	}
	// With the server's two limits: their counts go in the same
	// statement, so still three (was seven, a statement a limit).
	month := coachd.PeriodMonthly.Start(clock.Now())
	check("AdmitTurn with limits", 3, release, func() error {
		_, err := db.AdmitTurn(ctx, coachd.TurnAdmission{Owner: "A", Until: clock.Now().Add(time.Minute), Seen: seen,
			Reserve: coachd.ReserveRequest{Agent: s.Agent, Estimate: 500}, Stream: &coachd.StreamStart{Owner: "proc", Keep: 20},
			Message: &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hello")}},
			Limits:  []coachd.LimitHit{{Key: "rate", Window: window, Limit: 1000}, {Key: "messages", Window: month, Limit: 1000}}})
		held = err == nil
		return err
	})
	if err := release(); err != nil {
		t.Fatal(err)
	}
	seq := int64(0)
	check("AppendEvents", 1, nil, func() error {
		evs := make([]coachd.Event, 5)
		for i := range evs {
			seq++
			evs[i] = coachd.Event{Type: coachd.EventTextDelta, Seq: seq, Text: "hi"}
		}
		_, err := db.AppendEvents(ctx, user.ID, s.ID, turn, evs, false)
		return err
	})
	spent := int64(0)
	check("Settle", 5, nil, func() error {
		spent += 10
		_, err := db.Settle(ctx, user.ID, resv[0].ID, coachd.Spend{Amount: spent, Tokens: spent}, coachd.SettleCharge)
		return err
	})
	i := 0
	acquire := func() error { // each end its own lease, taken outside the count
		return db.AcquireTurn(ctx, user.ID, s.ID, "B", clock.Now().Add(time.Minute))
	}
	// A turn's end: BEGIN, the user's lock, the reservation's read, one
	// statement for the session (its seqs and the lease) and the reply,
	// one for the settlement, COMMIT (was seven: the reply's INSERT a
	// statement of its own).
	check("EndTurn", 6, acquire, func() error {
		r := resv[i]
		i++
		msg := &coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("reply")}}
		_, _, err := db.EndTurn(ctx, user.ID, coachd.TurnEnd{SessionID: s.ID, Messages: []*coachd.Message{msg},
			ReservationID: r.ID, Spend: coachd.Spend{Amount: 100, Tokens: 100}, Mode: coachd.SettleFinalize, Owner: "B"})
		return err
	})
	// A tool round's write: its two messages (in the session's statement)
	// and its charge, in one transaction: six (were AppendMessages, five
	// with one INSERT a message, and Settle, four; then seven, with the
	// messages in one INSERT of their own).
	var cur *coachd.Reservation
	spent = 100 // past the end's charge: each round charges more
	round := func(seen *coachd.Reservation) error {
		asst := &coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("calling")}}
		results := &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.ToolResultBlock("toolu_1", "ok", false)}}
		spent += 10
		r, _, err := db.EndTurn(ctx, user.ID, coachd.TurnEnd{SessionID: s.ID, Messages: []*coachd.Message{asst, results},
			ReservationID: resv[0].ID, ReservationSeen: seen, Spend: coachd.Spend{Amount: spent, Tokens: spent}, Mode: coachd.SettleCharge})
		cur = r
		return err
	}
	check("EndTurn round", 6, nil, func() error { return round(nil) })
	// Given the reservation as the turn last had it (ReservationSeen, as
	// the agent gives it), the settlement is made on condition that the
	// row is still that, with no read, in the messages' statement, which
	// also takes the user's lock: BEGIN, the lock, the session, the
	// messages and the settlement, COMMIT.
	check("EndTurn round, reservation seen", 3, nil, func() error { return round(cur) })
	// BEGIN, the session's seqs and the two messages, COMMIT (was four).
	check("AppendMessages", 3, nil, func() error {
		return db.AppendMessages(ctx, user.ID, s.ID, []*coachd.Message{
			{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("one")}},
			{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("two")}},
		})
	})
	// save_note's write: BEGIN, one statement for the user's lock, the
	// session, the note count and the insert, COMMIT (was seven: the
	// user, the session and the count each a statement; then four, the
	// insert a statement of its own).
	check("CreateNote", 3, nil, func() error {
		return db.CreateNote(ctx, &coachd.Note{UserID: user.ID, SessionID: s.ID, Type: "tip", Title: "t", Content: "c"})
	})
}
