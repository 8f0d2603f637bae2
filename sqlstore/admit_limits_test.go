package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// hits reads the count of a limit window (0 when it has none) without
// adding to it.
func hits(tb testing.TB, db *sqlstore.DB, userID, key string, w time.Time) int64 {
	tb.Helper()
	q := `SELECT COALESCE(SUM(hits), 0) FROM limit_windows WHERE user_id = ? AND limit_key = ? AND window_start = ?`
	var ws any = w.UnixMicro()
	if db.Dialect() == "postgres" {
		q = `SELECT COALESCE(SUM(hits), 0) FROM limit_windows WHERE user_id = $1 AND limit_key = $2 AND window_start = $3`
		ws = w.UTC()
	}
	var n int64
	if err := db.SQL().QueryRowContext(context.Background(), q, userID, key, ws).Scan(&n); err != nil {
		tb.Fatalf("reading %s: %v", key, err)
	}
	return n
}

// TestAdmitTurnLimits: an admission with Limits counts each in the same
// transaction as HitLimit would; one that is reached makes it
// ErrLimitReached and rolls everything back (no count, no lease, no
// hold, no event-log turn), and so does any other refusal (the budget, a
// user who is not there). Two limits of one key count its window twice.
func TestAdmitTurnLimits(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 1000)
			until := clock.Now().Add(time.Minute)
			w := clock.Now().Truncate(time.Minute)
			month := coachd.PeriodMonthly.Start(clock.Now())
			limits := []coachd.LimitHit{{Key: "rate", Window: w, Limit: 2}, {Key: "messages", Window: month, Limit: 5}}
			// Seeded apart: the window is shared with HitLimit.
			if _, ok, err := db.HitLimit(ctx, u.ID, coachd.LimitHit{Key: "rate", Window: w, Limit: 2}); err != nil || !ok {
				t.Fatalf("HitLimit: %v %v", ok, err)
			}

			a := admission(s, "A", until, 100)
			a.Limits = limits
			adm, err := db.AdmitTurn(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			if n, m := hits(t, db, u.ID, "rate", w), hits(t, db, u.ID, "messages", month); n != 2 || m != 1 {
				t.Fatalf("counted rate %d, messages %d; want 2, 1", n, m)
			}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationID: adm.Reservation.ID,
				Mode: coachd.SettleFinalize, Owner: "A"}); err != nil {
				t.Fatal(err)
			}
			mustStatus(t, db, u.ID, 0, 0)

			// The rate is reached: nothing counted, nothing taken.
			s, _ = db.FindSession(ctx, u.ID, s.ID)
			a = admission(s, "B", until, 100)
			a.Limits = limits
			a.Stream = &coachd.StreamStart{Owner: "proc_a", Keep: 20}
			if _, err := db.AdmitTurn(ctx, a); !errors.Is(err, coachd.ErrLimitReached) {
				t.Fatalf("over the rate: %v", err)
			}
			if n, m := hits(t, db, u.ID, "rate", w), hits(t, db, u.ID, "messages", month); n != 2 || m != 1 {
				t.Fatalf("a refused admission counted: rate %d, messages %d", n, m)
			}
			mustStatus(t, db, u.ID, 0, 0)
			if tl, err := db.LatestTurn(ctx, u.ID, s.ID); err != nil || tl.Turn != 0 {
				t.Fatalf("a refused admission began the log's turn %d (%v)", tl.Turn, err)
			}

			// The second limit reached: the first one's count is undone too.
			w2 := w.Add(time.Minute)
			a.Limits = []coachd.LimitHit{{Key: "rate", Window: w2, Limit: 2}, {Key: "messages", Window: month, Limit: 1}}
			if _, err := db.AdmitTurn(ctx, a); !errors.Is(err, coachd.ErrLimitReached) {
				t.Fatalf("over the month: %v", err)
			}
			if n := hits(t, db, u.ID, "rate", w2); n != 0 {
				t.Fatalf("the rate was counted by a refused admission: %d", n)
			}

			// Refused for its budget: the limits are not counted either.
			a = admission(s, "C", until, 5000)
			a.Limits = []coachd.LimitHit{{Key: "rate", Window: w2, Limit: 2}}
			if _, err := db.AdmitTurn(ctx, a); coachd.ErrorCode(err) != coachd.EBUDGET {
				t.Fatalf("over budget: %v", err)
			}
			if n := hits(t, db, u.ID, "rate", w2); n != 0 {
				t.Fatalf("a refused admission counted: %d", n)
			}
			// Nothing of B's or C's was taken: a third owner leases it.
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "D", until); err != nil {
				t.Fatalf("a refused admission kept the lease: %v", err)
			}
			if err := db.ReleaseTurn(ctx, u.ID, s.ID, "D"); err != nil {
				t.Fatal(err)
			}

			// A user who is not there: not found, and nothing counted.
			ghost := *s
			ghost.UserID = "usr_ghost"
			a = admission(&ghost, "E", until, 100)
			a.Limits = []coachd.LimitHit{{Key: "rate", Window: w2, Limit: 2}, {Key: "messages", Window: month, Limit: 5}}
			if _, err := db.AdmitTurn(ctx, a); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Fatalf("a user who is not there: %v", err)
			}
			if n := hits(t, db, "usr_ghost", "rate", w2); n != 0 {
				t.Fatalf("a user who is not there was counted: %d", n)
			}

			// Two limits of one key count its window twice, the second
			// seeing the first: under a limit of 3, one admission, and the
			// next is refused.
			s, _ = db.FindSession(ctx, u.ID, s.ID)
			a = admission(s, "F", until, 100)
			a.Limits = []coachd.LimitHit{{Key: "rate", Window: w2, Limit: 3}, {Key: "rate", Window: w2, Limit: 3}}
			adm, err = db.AdmitTurn(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			if n := hits(t, db, u.ID, "rate", w2); n != 2 {
				t.Fatalf("two limits of one key counted %d, want 2", n)
			}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationID: adm.Reservation.ID,
				Mode: coachd.SettleFinalize, Owner: "F"}); err != nil {
				t.Fatal(err)
			}
			s, _ = db.FindSession(ctx, u.ID, s.ID)
			a = admission(s, "G", until, 100)
			a.Limits = []coachd.LimitHit{{Key: "rate", Window: w2, Limit: 3}, {Key: "rate", Window: w2, Limit: 3}}
			if _, err := db.AdmitTurn(ctx, a); !errors.Is(err, coachd.ErrLimitReached) {
				t.Fatalf("the window's fourth count: %v", err)
			}
			if n := hits(t, db, u.ID, "rate", w2); n != 2 {
				t.Fatalf("a refused admission counted: %d, want 2", n)
			}
			MustLedgerOK(t, db)
		})
	}
}

// BenchmarkAdmitLimits is a turn's admission with its rate limit counted
// apart first (HitLimit, then AdmitTurn: before) and counted in the
// admission (TurnAdmission.Limits), each released by EndTurn.
//
//	go test ./sqlstore -run '^$' -bench AdmitLimits -benchmem
func BenchmarkAdmitLimits(b *testing.B) {
	for _, mode := range []string{"apart", "in"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			db := MustOpen(b, backends[0].newDSN(b), nil)
			u := budgetUser(b, db, 1<<40)
			s := mustSession(b, db, u)
			for b.Loop() {
				now := time.Now()
				l := coachd.LimitHit{Key: "rate", Window: now.Truncate(time.Minute), Limit: 1 << 40}
				a := admission(s, "A", now.Add(time.Minute), 100)
				if mode == "apart" {
					if _, ok, err := db.HitLimit(ctx, u.ID, l); err != nil || !ok {
						b.Fatal(ok, err)
					}
				} else {
					a.Limits = []coachd.LimitHit{l}
				}
				adm, err := db.AdmitTurn(ctx, a)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationID: adm.Reservation.ID,
					Mode: coachd.SettleFinalize, Owner: "A"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAdmitTurnMessage: the turn's user message is stored in the
// admission's transaction — there, numbered and filled in, when it is
// admitted; absent, and left as it came, when the admission is refused
// (the budget, a session changed since it was read, a session too full
// for it, which refuses the lease and the hold too).
func TestAdmitTurnMessage(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 1000)
			until := clock.Now().Add(time.Minute)
			newMsg := func(text string) *coachd.Message {
				return &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(text)}}
			}
			count := func() int {
				t.Helper()
				msgs, err := db.History(ctx, u.ID, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				return len(msgs)
			}
			// refused wants a refused: an error that is want, and the
			// message neither stored nor filled in.
			refused := func(a coachd.TurnAdmission, want func(error) bool, why string) {
				t.Helper()
				n := count()
				if _, err := db.AdmitTurn(ctx, a); !want(err) {
					t.Fatalf("%s: %v", why, err)
				}
				if got := count(); got != n || a.Message.ID != "" || a.Message.Seq != 0 {
					t.Fatalf("%s: the refused admission stored its message: %d messages, was %d; %+v", why, got, n, a.Message)
				}
			}
			isCode := func(code string) func(error) bool {
				return func(err error) bool { return coachd.ErrorCode(err) == code }
			}

			a := admission(s, "A", until, 100)
			a.Message = newMsg("hello")
			adm, err := db.AdmitTurn(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			msgs, err := db.History(ctx, u.ID, s.ID)
			if err != nil || len(msgs) != 1 || coachd.BlocksText(msgs[0].Blocks) != "hello" {
				t.Fatalf("history after the admission: %d messages (%v)", len(msgs), err)
			}
			if m := a.Message; m.ID != msgs[0].ID || m.Seq != msgs[0].Seq || m.SessionID != s.ID || m.CreatedAt.IsZero() {
				t.Fatalf("the admitted message was not filled in: %+v, stored %+v", m, msgs[0])
			}
			if got, _ := db.FindSession(ctx, u.ID, s.ID); got.MessageCount != 1 {
				t.Fatalf("message count %d, want 1", got.MessageCount)
			}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationID: adm.Reservation.ID,
				Mode: coachd.SettleFinalize, Owner: "A"}); err != nil {
				t.Fatal(err)
			}

			// Refused for its budget: the message is not stored.
			s, _ = db.FindSession(ctx, u.ID, s.ID)
			a = admission(s, "B", until, 5000)
			a.Message = newMsg("too dear")
			refused(a, isCode(coachd.EBUDGET), "over budget")

			// Read before a message came: the session changed.
			stale := *s
			if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{newMsg("between")}); err != nil {
				t.Fatal(err)
			}
			a = admission(&stale, "B", until, 100)
			a.Message = newMsg("late")
			refused(a, func(err error) bool { return errors.Is(err, coachd.ErrSessionChanged) }, "stale session")

			// Another owner's live lease: the turn is refused, nothing taken.
			s, _ = db.FindSession(ctx, u.ID, s.ID)
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "Z", until); err != nil {
				t.Fatal(err)
			}
			a = admission(s, "B", until, 100)
			a.Message = newMsg("busy")
			refused(a, isCode(coachd.ETURNINPROGRESS), "busy session")
			if err := db.ReleaseTurn(ctx, u.ID, s.ID, "Z"); err != nil {
				t.Fatal(err)
			}
			// Read with another title than the session has (its count and
			// update time unchanged): the session changed.
			retitled := *s
			retitled.Title = "not what is stored"
			a = admission(&retitled, "B", until, 100)
			a.Message = newMsg("retitled")
			refused(a, func(err error) bool { return errors.Is(err, coachd.ErrSessionChanged) }, "session with another title")
			// Another user's session is not found, whatever was read.
			other := budgetUser(t, db, 1000)
			foreign := *s
			foreign.UserID = other.ID
			a = admission(&foreign, "B", until, 100)
			a.Message = newMsg("foreign")
			refused(a, isCode(coachd.ENOTFOUND), "another user's session")
			if got, _ := db.FindSession(ctx, u.ID, s.ID); got.MessageCount != s.MessageCount || !got.UpdatedAt.Equal(s.UpdatedAt) {
				t.Fatalf("refused admissions moved the session: %+v, was %+v", got, s)
			}

			// A session too full for the message refuses the admission.
			if _, err := db.SQL().ExecContext(ctx, rebind(b.name, `UPDATE sessions SET message_count = $1 WHERE id = $2`), coachd.MaxMessagesPerSession, s.ID); err != nil {
				t.Fatal(err)
			}
			s, _ = db.FindSession(ctx, u.ID, s.ID)
			a = admission(s, "C", until, 100)
			a.Message = newMsg("no room")
			refused(a, isCode(coachd.ECONFLICT), "full session")
			if n := count(); n != 2 {
				t.Fatalf("%d messages, want 2", n)
			}
			mustStatus(t, db, u.ID, 0, 0) // no hold left behind
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "D", until); err != nil {
				t.Fatalf("a refused admission kept the lease: %v", err)
			}
			MustLedgerOK(t, db)
		})
	}
}

// TestAdmitTurnStatements: on SQLite an admission with its user message
// takes the lease and the message's seqs in one UPDATE of the session, not
// one each, and holds the estimate without reading the user's budget state
// first (no stale hold, the same period): the session, the user's hold,
// the reservation and its ledger row, the event log's turn, the message.
func TestAdmitTurnStatements(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	db := MustOpen(t, backends[0].newDSN(t), clock)
	u := budgetUser(t, db, 1000)
	s := mustSession(t, db, u)
	a := admission(s, "A", clock.Now().Add(time.Minute), 100)
	a.Stream = &coachd.StreamStart{Owner: "proc_a", Keep: 20}
	a.Message = &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hello")}}
	before := db.WriteStats()
	if _, err := db.AdmitTurn(ctx, a); err != nil {
		t.Fatal(err)
	}
	after := db.WriteStats()
	if got, want := after.Statements-before.Statements, int64(6); got != want {
		t.Fatalf("the admission ran %d statements, want %d", got, want)
	}
	if got, _ := db.FindSession(ctx, u.ID, s.ID); got.MessageCount != 1 || a.Message.Seq != 1 {
		t.Fatalf("session %+v, message seq %d", got, a.Message.Seq)
	}
}
