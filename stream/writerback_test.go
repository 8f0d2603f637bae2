package stream_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/cutproxy"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
	"github.com/coachd/coachd/stream"
)

// TestGivenUpWriterStops: a partition longer than DeadAfter between the
// replica running a turn and Postgres, while a reader on another replica
// follows it. The reader gives the turn up (turn_interrupted, its end
// logged); once the partition heals, the turn's first write to the log
// tells the process running it so, and the turn is stopped, as a stop
// asked elsewhere is: it must not go on (more model rounds, more tools,
// its reply stored) as if its readers had not been told it ended.
func TestGivenUpWriterStops(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	direct := mustEnv(t, dsn) // the follower's replica
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := cutproxy.New(t, u.Host)
	viaProxy := *u
	viaProxy.Host = proxy.URL()[len("http://"):]
	wdb, err := sqlstore.Open(ctx, viaProxy.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wdb.Close() })
	writer := stream.NewHub(wdb, nil)
	writer.FlushEvery, writer.AliveEvery = time.Millisecond, 5*time.Millisecond
	follower := direct.b
	follower.DeadAfter = 50 * time.Millisecond

	sid := direct.session(t)
	l, err := writer.Begin(ctx, direct.user.ID, sid)
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	l.SetCancel(func(cause error) {
		select {
		case stopped <- cause:
		default:
		}
	})
	l.Send(coachd.Event{Seq: 1, Type: coachd.EventTurnStarted, SessionID: sid})
	l.Send(coachd.Event{Seq: 2, Type: coachd.EventTextDelta, Text: "Halfway"})
	alive := waitTurn(t, direct, sid, l.Turn(), func(tl coachd.TurnLog) bool { return !tl.AliveAt.IsZero() })
	waitEvents(t, direct, sid, 2)

	// The partition: nothing the writer sends reaches the database.
	proxy.Retarget("127.0.0.1:1")
	proxy.Cut()
	got := collect(t, follower, direct.user.ID, sid, coachd.EventID{}, 0)
	if len(got) != 4 || got[2].Err == nil || got[2].Err.Code != stream.CodeInterrupted {
		t.Fatalf("the follower was told %+v, want the turn interrupted", got)
	}
	given := waitTurn(t, direct, sid, l.Turn(), func(tl coachd.TurnLog) bool { return tl.Ended })

	// The partition heals; the turn goes on sending.
	proxy.Retarget(u.Host)
	l.Send(coachd.Event{Seq: 3, Type: coachd.EventTextDelta, Text: " and the rest"})
	// Two writes of the writer land after the heal: the first one's
	// answer was handled before the second began (a Live writes one
	// batch at a time).
	seen := given.AliveAt
	for range 2 {
		seen = waitTurn(t, direct, sid, l.Turn(), func(tl coachd.TurnLog) bool { return tl.AliveAt.After(seen) }).AliveAt
	}
	select {
	case cause := <-stopped:
		if cause != stream.ErrStopRequested {
			t.Errorf("stopped with %v", cause)
		}
	default:
		t.Errorf("the writer wrote to the log twice after its turn was given up (alive %s, given up %s), and was not stopped",
			alive.AliveAt.Format(time.RFC3339Nano), given.AliveAt.Format(time.RFC3339Nano))
	}
	l.Send(coachd.Event{Seq: 4, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn})
	if after := collect(t, follower, direct.user.ID, sid, coachd.EventID{}, 0); len(after) != 4 {
		t.Errorf("the log after the writer came back: %+v", after)
	}
}

// TestAppendAfterGivenUp: a write to the log of a turn that ended
// before it (its readers gave it up) adds nothing and tells the turn to
// stop, on both stores; the turn's own last write is not told so.
func TestAppendAfterGivenUp(t *testing.T) {
	onBothStores(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		sid := e.session(t)
		turn := e.halfTurn(t, sid, "proc_stalled")
		stop, err := e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
			{Turn: turn, Seq: 3, Type: coachd.EventTextDelta, Text: " more"},
		}, false)
		if err != nil || stop {
			t.Fatalf("a running turn's write: stop %v, %v", stop, err)
		}
		// Its readers give it up.
		if _, err := e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
			{Turn: turn, Seq: 4, Type: coachd.EventError, Err: &coachd.Error{Code: stream.CodeInterrupted}},
			{Turn: turn, Seq: 5, Type: coachd.EventTurnEnded, StopReason: coachd.TurnError},
		}, true); err != nil {
			t.Fatal(err)
		}
		stop, err = e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
			{Turn: turn, Seq: 6, Type: coachd.EventTextDelta, Text: " too late"},
		}, false)
		if err != nil || !stop {
			t.Errorf("a write after the turn was given up: stop %v, %v; want told to stop", stop, err)
		}
		stop, err = e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
			{Turn: turn, Seq: 7, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn},
		}, true)
		if err != nil || stop {
			t.Errorf("the turn's own end after it was given up: stop %v, %v", stop, err)
		}
		evs, err := e.db.Events(ctx, e.user.ID, sid, coachd.EventID{}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(evs); n != 5 || evs[n-1].Seq != 5 {
			t.Errorf("the log holds %+v, want 5 events ending with the given-up end", evs)
		}
	})
}

// waitTurn reads the session's turn from the log until ok holds.
func waitTurn(t *testing.T, e *env, sid string, turn int64, ok func(coachd.TurnLog) bool) coachd.TurnLog {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		tl, err := e.db.TurnLogAt(ctx, e.user.ID, sid, turn)
		if err != nil {
			t.Fatal(err)
		}
		if ok(tl) {
			return tl
		}
		select {
		case <-ctx.Done():
			t.Fatalf("turn %d never got there: %+v", turn, tl)
		case <-time.After(time.Millisecond):
		}
	}
}

// waitEvents waits until the log holds n events of the session.
func waitEvents(t *testing.T, e *env, sid string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		evs, err := e.db.Events(ctx, e.user.ID, sid, coachd.EventID{}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the log holds %d events, want %d", len(evs), n)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestGiveUpRacesTheWriter: a reader judged a turn dead, and the turn's
// process logs more of it before the reader logs the turn's interrupted
// ending: the ending must not go in (the turn is alive, and its ending
// would come before events logged after it). The give-up holds only
// while the turn shows no life since the reader looked.
func TestGiveUpRacesTheWriter(t *testing.T) {
	onBothStores(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		sid := e.session(t)
		turn := e.halfTurn(t, sid, "proc_slow")
		looked, err := e.db.TurnLogAt(ctx, e.user.ID, sid, turn)
		if err != nil {
			t.Fatal(err)
		}
		// The writer comes back between the reader's look and its
		// give-up.
		if _, err := e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
			{Turn: turn, Seq: 3, Type: coachd.EventTextDelta, Text: " a"},
			{Turn: turn, Seq: 4, Type: coachd.EventTextDelta, Text: " b"},
			{Turn: turn, Seq: 5, Type: coachd.EventTextDelta, Text: " c"},
		}, false); err != nil {
			t.Fatal(err)
		}
		ending := []coachd.Event{
			{Turn: turn, Seq: 3, Type: coachd.EventError, Err: &coachd.Error{Code: stream.CodeInterrupted, Retryable: true}},
			{Turn: turn, Seq: 4, Type: coachd.EventTurnEnded, StopReason: coachd.TurnError},
		}
		given, err := e.db.GiveUpTurn(ctx, e.user.ID, sid, turn, looked.AliveAt, ending)
		if err != nil {
			t.Fatal(err)
		}
		now, err := e.db.TurnLogAt(ctx, e.user.ID, sid, turn)
		if err != nil {
			t.Fatal(err)
		}
		if given || now.Ended {
			t.Errorf("given up %v, ended %v: the turn showed life after the reader looked", given, now.Ended)
		}
		// Judged again, with nothing since: it goes in.
		if given, err = e.db.GiveUpTurn(ctx, e.user.ID, sid, turn, now.AliveAt, []coachd.Event{
			{Turn: turn, Seq: 6, Type: coachd.EventError, Err: &coachd.Error{Code: stream.CodeInterrupted, Retryable: true}},
			{Turn: turn, Seq: 7, Type: coachd.EventTurnEnded, StopReason: coachd.TurnError},
		}); err != nil || !given {
			t.Fatalf("given up %v, %v; want the silent turn given up", given, err)
		}
		evs, err := e.db.Events(ctx, e.user.ID, sid, coachd.EventID{}, 100)
		if err != nil {
			t.Fatal(err)
		}
		for i, ev := range evs {
			if ev.Seq != int64(i+1) {
				t.Fatalf("the log holds %+v, want seqs 1..7 in order", evs)
			}
		}
		if n := len(evs); n != 7 || evs[n-1].Type != coachd.EventTurnEnded {
			t.Errorf("the log holds %+v, want the given-up end last", evs)
		}
		if tl, err := e.db.TurnLogAt(ctx, e.user.ID, sid, turn); err != nil || !tl.Ended {
			t.Errorf("after the give-up: %+v, %v", tl, err)
		}
	})
}
