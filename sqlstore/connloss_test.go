package sqlstore_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestSettleAfterConnectionLossPG: after the server closed the pool's
// connections (a Postgres restart or failover, an administrator's
// pg_terminate_backend), a turn's settlement still lands. Each pooled
// connection, not yet known to be closed, failed the next transaction's
// BEGIN ("terminating connection due to administrator command"): a
// turn ending then left its hold until it expired and never charged what
// it used.
func TestSettleAfterConnectionLossPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	db := MustOpen(t, dsn, newClock())
	u := budgetUser(t, db, 1000)
	res, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 300})
	if err != nil {
		t.Fatal(err)
	}
	closePool(t, db, dsn)
	got, err := db.Finalize(ctx, u.ID, res.ID, 120)
	if err != nil {
		t.Fatalf("Finalize after the connections were closed: %v", err)
	}
	if got.State != coachd.ReservationFinalized || got.Charged != 120 {
		t.Fatalf("reservation %+v", got)
	}
	mustStatus(t, db, u.ID, 120, 0)
}

// TestSettleWhenConnectionClosesPG: a settlement whose connection the
// server closes while its transaction waits (here on the user's row
// lock, as a shutdown or pg_terminate_backend finds it) ran nothing the
// server kept: it runs again on another connection, so the turn's usage
// is charged, once, and nothing stays held. It failed with 57P01 and
// left the hold.
func TestSettleWhenConnectionClosesPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	db := MustOpen(t, dsn, newClock())
	u := budgetUser(t, db, 1000)
	res, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 300})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// Another transaction holds the user's row: the settlement waits.
	holder, err := admin.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	var me int
	if err := holder.QueryRowContext(ctx, `SELECT pg_backend_pid() FROM users WHERE id = $1 FOR UPDATE`, u.ID).Scan(&me); err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   *coachd.Reservation
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := db.Finalize(ctx, u.ID, res.ID, 120)
		done <- result{r, err}
	}()
	var waiting int
	for waiting == 0 {
		err := admin.QueryRowContext(ctx, `SELECT COALESCE(MAX(pid), 0) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`, me).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
	}
	var ok bool
	if err := admin.QueryRowContext(ctx, `SELECT pg_terminate_backend($1)`, waiting).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate %d: %v %v", waiting, ok, err)
	}
	for gone := false; !gone; {
		if err := admin.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, waiting).Scan(&gone); err != nil {
			t.Fatal(err)
		}
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil {
		t.Fatalf("Finalize whose connection closed: %v", got.err)
	}
	if got.r.State != coachd.ReservationFinalized || got.r.Charged != 120 {
		t.Fatalf("reservation %+v", got.r)
	}
	mustStatus(t, db, u.ID, 120, 0)
}

// closePool has the server close db's pooled connections, each used
// within the last second, as a busy process's are (the driver pings one
// idle for longer before it is used again), and returns once they are
// gone.
func closePool(t *testing.T, db *sqlstore.DB, dsn string) {
	t.Helper()
	ctx := context.Background()
	for range 2 {
		var conns []*sql.Conn
		for range 4 {
			c, err := db.SQL().Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			c.Close()
		}
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// pg_terminate_backend returns before the backends are gone: wait
	// for them.
	if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	for {
		var n int
		if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
}

// TestReadsAfterConnectionLossPG: a request's authentication and a
// turn's read of its session, reads without a transaction, still answer
// after the server closed the pool's connections; each answered an
// internal error (57P01) once per closed connection.
func TestReadsAfterConnectionLossPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	db := MustOpen(t, dsn, newClock())
	u := MustCreateUser(t, db, "auth")
	s := MustCreateSession(t, db, u.ID)
	closePool(t, db, dsn)
	got, err := db.FindUserByKeyHash(ctx, "hash-auth")
	if err != nil || got.ID != u.ID {
		t.Fatalf("FindUserByKeyHash after the connections were closed: %v, %v", got, err)
	}
	closePool(t, db, dsn)
	if sess, _, err := db.ReadTurn(ctx, u.ID, s.ID, 0); err != nil || sess.ID != s.ID {
		t.Fatalf("ReadTurn after the connections were closed: %v, %v", sess, err)
	}
}

// TestServerGoneAsksOncePG: when the server is not there (restarting,
// refusing connections), a transaction's BEGIN, tried again on another
// connection after a closed one, stops at the first connection that
// cannot be made: it tried a new one for each of the pool's 32, a burst
// of connection attempts per request at a server coming back. Only
// connection attempts (a startup message) count: pgx sends a cancel
// request, on a connection of its own and from a goroutine, for each
// pooled connection it finds broken; counted too, they failed the test
// whenever they reached the proxy before its count was read (3 with two
// connections pooled).
func TestServerGoneAsksOncePG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	server := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// A proxy to the server that, once down is set, cuts every
	// connection and refuses (accepts and closes) new ones, counting
	// those that ask for a session (not pgx's cancel requests). A
	// refused one is counted before it is closed, so before the
	// connection attempt fails.
	var down atomic.Bool
	var refused atomic.Int64
	refuse := func(c net.Conn) {
		defer c.Close()
		// Every message before a session's starts with its length and
		// a code: a cancel request's is 80877102.
		var head [8]byte
		if _, err := io.ReadFull(c, head[:]); err != nil || binary.BigEndian.Uint32(head[4:]) != 80877102 {
			refused.Add(1)
		}
	}
	var mu sync.Mutex
	var open []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if down.Load() {
				go refuse(c)
				continue
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			open = append(open, c, s)
			mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	u.Host = ln.Addr().String()
	db := MustOpen(t, u.String(), newClock())
	user := budgetUser(t, db, 1000)
	res, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: user.ID, Agent: "coach", Estimate: 300})
	if err != nil {
		t.Fatal(err)
	}
	// The pool holds a few connections, as a busy process's does.
	var conns []*sql.Conn
	for range 4 {
		c, err := db.SQL().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	down.Store(true)
	mu.Lock()
	for _, c := range open {
		c.Close()
	}
	mu.Unlock()
	if _, err := db.Finalize(ctx, user.ID, res.ID, 120); err == nil {
		t.Fatal("Finalize with the server gone succeeded")
	}
	if n := refused.Load(); n != 1 {
		t.Errorf("one Finalize with the server gone tried %d new connections, want 1", n)
	}
}
