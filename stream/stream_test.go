package stream_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
	"github.com/coachd/coachd/stream"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	os.Exit(code)
}

type env struct {
	db   *sqlstore.DB
	user *coachd.User
	a, b *stream.Hub // two replicas over one store
}

func mustEnv(t testing.TB, dsn string) *env {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u := &coachd.User{Name: "alice", TokenBudget: 1000}
	if err := db.CreateUser(ctx, u, "hash-alice"); err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, user: u, a: stream.NewHub(db, nil), b: stream.NewHub(db, nil)}
	for _, h := range []*stream.Hub{e.a, e.b} {
		h.FlushEvery, h.PollEvery, h.AliveEvery, h.DeadAfter = time.Millisecond, 2*time.Millisecond, 20*time.Millisecond, 30*time.Second
	}
	return e
}

func (e *env) session(t *testing.T) string {
	t.Helper()
	s := &coachd.Session{UserID: e.user.ID, Agent: "coach", Title: "t"}
	if err := e.db.CreateSession(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// halfTurn is what a process that stopped mid-turn (proc) leaves in the
// log: the turn begun, started and "Halfway" logged, no end. It returns
// the turn's number.
func (e *env) halfTurn(t *testing.T, sid, proc string) int64 {
	t.Helper()
	ctx := context.Background()
	turn, err := e.db.BeginTurn(ctx, e.user.ID, sid, proc, 20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.AppendEvents(ctx, e.user.ID, sid, turn, []coachd.Event{
		{Turn: turn, Seq: 1, Type: coachd.EventTurnStarted, SessionID: sid},
		{Turn: turn, Seq: 2, Type: coachd.EventTextDelta, Text: "Halfway"},
	}, false); err != nil {
		t.Fatal(err)
	}
	return turn
}

// play runs turns turns of n events each on hub a, as a runner would:
// seq from 1, text deltas with tool events among them, turn_ended last.
func (e *env) play(t *testing.T, sid string, turns, n int, rng *rand.Rand) {
	for range turns {
		l, err := e.a.Begin(context.Background(), e.user.ID, sid)
		if err != nil {
			t.Error(err)
			return
		}
		for i := 1; i <= n; i++ {
			ev := coachd.Event{Seq: int64(i), Type: coachd.EventTextDelta, Text: fmt.Sprintf("t%d.%d ", l.Turn(), i)}
			switch {
			case i == n:
				ev = coachd.Event{Seq: int64(i), Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn}
			case i%17 == 0:
				ev = coachd.Event{Seq: int64(i), Type: coachd.EventToolCallStarted, ToolUseID: fmt.Sprint("tu", i), ToolName: "save_note"}
			}
			l.Send(ev)
			if rng.IntN(8) == 0 {
				time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond) // pacing, not synchronisation
			}
		}
	}
}

var errCut = errors.New("cut")

// render is what a reader assembles from an event.
func render(ev coachd.Event) string {
	return fmt.Sprintf("%s|%s|%s|%s;", ev.ID(), ev.Type, ev.Text, ev.ToolUseID)
}

// readCut follows the session from the start until the last turn's end,
// cut after a random number of events each time and re-attached after
// the last id it saw, on a random replica. It returns what it assembled
// and how many times it was cut.
func (e *env) readCut(ctx context.Context, sid string, lastTurn int64, rng *rand.Rand) (string, int, error) {
	var sb strings.Builder
	var last coachd.EventID
	cuts := 0
	for {
		budget := 1 + rng.IntN(40)
		h := e.a
		if rng.IntN(2) == 0 {
			h = e.b
		}
		done := false
		err := h.Follow(ctx, e.user.ID, sid, last, 0, func(ev coachd.Event) error {
			if !last.Before(ev.ID()) {
				return fmt.Errorf("event %s after %s: out of order or duplicated", ev.ID(), last)
			}
			sb.WriteString(render(ev))
			last = ev.ID()
			if ev.Terminal() && ev.Turn == lastTurn {
				done = true
				return errCut
			}
			if budget--; budget == 0 {
				return errCut
			}
			return nil
		})
		if done {
			return sb.String(), cuts, nil
		}
		if !errors.Is(err, errCut) {
			return sb.String(), cuts, err
		}
		cuts++
	}
}

// TestFollowCutProperty: a reader cut at random points and re-attached
// after the last id it saw, here or on another replica, while the turns
// run and after they ended, reassembles exactly what an uncut reader
// sees: no gap, no duplicate. Over the runs there are about 10⁴ cuts.
func TestFollowCutProperty(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		sessions := 60
		if testing.Short() {
			sessions = 4
		} else if raceEnabled {
			sessions = 12
		}
		cutProperty(t, mustEnv(t, filepath.Join(t.TempDir(), "c.db")), sessions)
	})
	t.Run("postgres", func(t *testing.T) { cutProperty(t, mustEnv(t, pgtest.NewDatabase(t)), 4) })
}

func cutProperty(t *testing.T, e *env, sessions int) {
	readers := 10
	total := 0
	for run := range sessions {
		sid := e.session(t)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); e.play(t, sid, 3, 120, rand.New(rand.NewPCG(uint64(run), 7))) }()
		results := make([]string, readers+1)
		cuts := make([]int, readers+1)
		errs := make([]error, readers+1)
		for i := range readers + 1 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i == readers {
					// The uncut reader.
					var sb strings.Builder
					errs[i] = e.a.Follow(ctx, e.user.ID, sid, coachd.EventID{}, 0, func(ev coachd.Event) error {
						sb.WriteString(render(ev))
						if ev.Terminal() && ev.Turn == 3 {
							return errCut
						}
						return nil
					})
					if errors.Is(errs[i], errCut) {
						errs[i] = nil
					}
					results[i] = sb.String()
					return
				}
				r := rand.New(rand.NewPCG(uint64(run), uint64(i)))
				results[i], cuts[i], errs[i] = e.readCut(ctx, sid, 3, r)
			}()
		}
		wg.Wait()
		cancel()
		want := results[readers]
		if errs[readers] != nil || strings.Count(want, "turn_ended") != 3 || strings.Count(want, ";") != 360 {
			t.Fatalf("run %d: uncut reader: %v, %d events", run, errs[readers], strings.Count(want, ";"))
		}
		for i := range readers {
			if errs[i] != nil {
				t.Fatalf("run %d reader %d: %v", run, i, errs[i])
			}
			if results[i] != want {
				t.Fatalf("run %d reader %d (%d cuts) differs from the uncut reader:\n got %.300s…\nwant %.300s…", run, i, cuts[i], results[i], want)
			}
			total += cuts[i]
		}
	}
	t.Logf("%d cuts, all reassembled", total)
}

// collect follows sid after after on h until a terminal event (or n
// events), and returns them.
func collect(t *testing.T, h *stream.Hub, userID, sid string, after coachd.EventID, turn int64) []coachd.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []coachd.Event
	err := h.Follow(ctx, userID, sid, after, turn, func(ev coachd.Event) error {
		out = append(out, ev)
		if ev.Terminal() {
			return errCut
		}
		return nil
	})
	if err != nil && !errors.Is(err, errCut) && !errors.Is(err, stream.ErrShutdown) {
		t.Fatalf("follow: %v", err)
	}
	return out
}

// TestDeadTurn: a turn whose process stopped showing life ends, for its
// readers, with a retryable turn_interrupted error and turn_ended, the
// same for every reader.
func TestDeadTurn(t *testing.T) {
	e := mustEnv(t, filepath.Join(t.TempDir(), "c.db"))
	e.b.DeadAfter = 50 * time.Millisecond
	ctx := context.Background()
	sid := e.session(t)
	// What a process that died mid-turn leaves in the log.
	e.halfTurn(t, sid, "proc_dead")
	got := collect(t, e.b, e.user.ID, sid, coachd.EventID{}, 0)
	if len(got) != 4 || got[1].Text != "Halfway" || got[2].Type != coachd.EventError || got[2].Err.Code != stream.CodeInterrupted ||
		!got[2].Err.Retryable || got[3].Type != coachd.EventTurnEnded || got[3].ID() != (coachd.EventID{Turn: 1, Seq: 4}) {
		t.Fatalf("events: %+v", got)
	}
	again := collect(t, e.a, e.user.ID, sid, coachd.EventID{Turn: 1, Seq: 2}, 0)
	if len(again) != 2 || again[0].Err == nil || again[0].Err.Code != stream.CodeInterrupted {
		t.Fatalf("second reader: %+v", again)
	}
	if tl, _ := e.db.LatestTurn(ctx, e.user.ID, sid); !tl.Ended {
		t.Errorf("the given-up turn is not marked ended: %+v", tl)
	}
}

// TestStop: a stop asked on the replica running the turn cancels it at
// once; asked on another, it reaches the turn through the log.
func TestStop(t *testing.T) {
	e := mustEnv(t, filepath.Join(t.TempDir(), "c.db"))
	ctx := context.Background()
	for _, h := range []*stream.Hub{e.a, e.b} {
		sid := e.session(t)
		l, err := e.a.Begin(ctx, e.user.ID, sid)
		if err != nil {
			t.Fatal(err)
		}
		tctx, cancel := context.WithCancelCause(ctx)
		l.SetCancel(cancel)
		l.Send(coachd.Event{Seq: 1, Type: coachd.EventTurnStarted})
		if err := h.Stop(ctx, e.user.ID, sid); err != nil {
			t.Fatal(err)
		}
		select {
		case <-tctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the turn was not stopped")
		}
		if !errors.Is(context.Cause(tctx), stream.ErrStopRequested) {
			t.Errorf("cause %v", context.Cause(tctx))
		}
		l.Send(coachd.Event{Seq: 2, Type: coachd.EventTurnEnded, StopReason: coachd.TurnAborted})
		if err := h.Stop(ctx, e.user.ID, sid); coachd.ErrorCode(err) != coachd.ENOTFOUND {
			t.Errorf("stop with no turn running: %v", err)
		}
	}
	// Not another user's.
	if err := e.b.Stop(ctx, "usr_other", e.session(t)); coachd.ErrorCode(err) != coachd.ENOTFOUND {
		t.Errorf("another user's session: %v", err)
	}
}

// TestShutdownEndsReaders: on Shutdown a reader gets a retryable
// server_shutdown error carrying the last id it was sent, and the turn is
// stopped.
func TestShutdownEndsReaders(t *testing.T) {
	e := mustEnv(t, filepath.Join(t.TempDir(), "c.db"))
	ctx := context.Background()
	sid := e.session(t)
	l, err := e.a.Begin(ctx, e.user.ID, sid)
	if err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithCancelCause(ctx)
	l.SetCancel(cancel)
	l.Send(coachd.Event{Seq: 1, Type: coachd.EventTurnStarted})
	l.Send(coachd.Event{Seq: 2, Type: coachd.EventTextDelta, Text: "Hel"})
	got := make(chan []coachd.Event)
	seen := make(chan struct{})
	go func() {
		var out []coachd.Event
		e.a.Follow(ctx, e.user.ID, sid, coachd.EventID{}, l.Turn(), func(ev coachd.Event) error {
			out = append(out, ev)
			if len(out) == 2 {
				close(seen)
			}
			return nil
		})
		got <- out
	}()
	<-seen
	e.a.Shutdown()
	out := <-got
	last := out[len(out)-1]
	if len(out) != 3 || last.Err == nil || last.Err.Code != stream.CodeShutdown || !last.Err.Retryable ||
		last.Err.Extra["last_event_id"] != "1:2" || last.ID() != (coachd.EventID{Turn: 1, Seq: 2}) {
		t.Fatalf("reader got %+v", out)
	}
	if !errors.Is(context.Cause(tctx), stream.ErrShutdown) {
		t.Errorf("the turn was not stopped: %v", context.Cause(tctx))
	}
}

// TestFinishWithoutEnd: a turn that stops without its last event (a
// panic) ends, for its readers, with turn_interrupted.
func TestFinishWithoutEnd(t *testing.T) {
	e := mustEnv(t, filepath.Join(t.TempDir(), "c.db"))
	sid := e.session(t)
	l, err := e.a.Begin(context.Background(), e.user.ID, sid)
	if err != nil {
		t.Fatal(err)
	}
	l.Send(coachd.Event{Seq: 1, Type: coachd.EventTurnStarted})
	l.Finish()
	got := collect(t, e.b, e.user.ID, sid, coachd.EventID{}, 1)
	if len(got) != 3 || got[1].Err == nil || got[1].Err.Code != stream.CodeInterrupted || got[2].Seq != 3 {
		t.Fatalf("events: %+v", got)
	}
}

// FollowBuffered flushes whenever it has no further event at hand: an
// event sent while the turn runs reaches the reader before the turn ends,
// and events that were at hand together are flushed once.
func TestFollowBufferedFlushes(t *testing.T) {
	e := mustEnv(t, filepath.Join(t.TempDir(), "c.db"))
	sid := e.session(t)
	l, err := e.a.Begin(context.Background(), e.user.ID, sid)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		l.Send(coachd.Event{Seq: int64(i), Type: coachd.EventTextDelta, Text: fmt.Sprint(i)})
	}
	var mu sync.Mutex
	var held, out []string
	flushes := 0
	flushed := make(chan int, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- e.a.FollowBuffered(ctx, e.user.ID, sid, coachd.EventID{}, l.Turn(), func(ev coachd.Event) error {
			mu.Lock()
			defer mu.Unlock()
			held = append(held, ev.Text)
			return nil
		}, func() error {
			mu.Lock()
			defer mu.Unlock()
			if len(held) == 0 {
				return nil
			}
			out = append(out, strings.Join(held, ""))
			held = nil
			flushes++
			flushed <- flushes
			return nil
		})
	}()
	// The three events at hand go out in one flush, while the turn runs.
	select {
	case <-flushed:
	case <-ctx.Done():
		t.Fatal("no flush while the turn was running")
	}
	l.Send(coachd.Event{Seq: 4, Type: coachd.EventTextDelta, Text: "4"})
	select {
	case <-flushed:
	case <-ctx.Done():
		t.Fatal("the fourth event was not flushed")
	}
	l.Send(coachd.Event{Seq: 5, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(out) < 3 || out[0] != "123" || out[1] != "4" {
		t.Fatalf("flushed %q, want [123 4 <end>]", out)
	}
}

// The turn's first text reaches a waiting reader before the turn goes on
// with the events that arrived with it: on one processor, with the turn
// sending a burst of deltas without ever blocking, the reader gets the
// first delta while the burst has barely begun (without the yield it
// would get it only once the turn blocked or was preempted, after the
// burst). The yield is a request to the scheduler, which now and then
// runs the sender again first (about 1 in 200 on its own): the reader
// must be early in one of five turns.
func TestFirstTextNotHeldBehindBurst(t *testing.T) {
	e := mustEnv(t, filepath.Join(t.TempDir(), "c.db"))
	sid := e.session(t)
	const burst = 2000
	var got []int64
	for range 5 {
		n := burstTurn(t, e, sid, burst)
		if n <= burst/10 {
			return
		}
		got = append(got, n)
	}
	t.Fatalf("the reader got the first delta after the turn had sent %v of %d deltas", got, burst)
}

// burstTurn plays one turn that sends burst text deltas on one processor
// without blocking, and returns how many it had begun to send when the
// reader got the first.
func burstTurn(t *testing.T, e *env, sid string, burst int) int64 {
	t.Helper()
	l, err := e.a.Begin(context.Background(), e.user.ID, sid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sent atomic.Int64 // text deltas the turn has begun to send
	started := make(chan struct{})
	firstAt := make(chan int64, 1)
	done := make(chan error, 1)
	go func() {
		done <- e.a.FollowBuffered(ctx, e.user.ID, sid, coachd.EventID{}, l.Turn(), func(ev coachd.Event) error {
			switch ev.Type {
			case coachd.EventTurnStarted:
				close(started)
			case coachd.EventTextDelta:
				if ev.Seq == 2 {
					firstAt <- sent.Load()
				}
			}
			return nil
		}, func() error { return nil })
	}()
	l.Send(coachd.Event{Seq: 1, Type: coachd.EventTurnStarted})
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the reader never got turn_started")
	}
	procs := runtime.GOMAXPROCS(1)
	for i := range burst {
		sent.Add(1)
		l.Send(coachd.Event{Seq: int64(i + 2), Type: coachd.EventTextDelta, Text: "x"})
	}
	runtime.GOMAXPROCS(procs)
	l.Send(coachd.Event{Seq: int64(burst + 2), Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return <-firstAt
}
