package datasource_test

import (
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

// freezer forwards TCP connections to target until frozen; from then on
// it forwards nothing more, as a database that stopped answering (a
// network partition, a server stuck on its disk) does.
type freezer struct {
	ln             net.Listener
	target         string
	frozen, closed chan struct{}
	once           sync.Once
}

func newFreezer(t *testing.T, target string) *freezer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln, target: target, frozen: make(chan struct{}), closed: make(chan struct{})}
	t.Cleanup(func() { f.freeze(); close(f.closed); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *freezer) freeze() { f.once.Do(func() { close(f.frozen) }) }

func (f *freezer) serve(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", f.target)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			select {
			case <-f.frozen: // silent, the connection held open
				<-f.closed
				return
			default:
			}
			if n > 0 {
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
}

// TestSourceDown: a Postgres source that stops answering made query_data
// say the query was slow, "narrow it with where or a smaller limit", and
// the model narrowed and asked again, each call waiting out the time cap.
// A database that does not even begin a transaction in time is named as
// down or busy, to try later.
func TestSourceDown(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE orders (user_id text NOT NULL, code text, total numeric)`); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	f := newFreezer(t, u.Host)
	u.Host = f.ln.Addr().String()
	file := strings.Replace(bignumFile, "user_key: name\n", "user_key: name\ntimeout: 300ms\n", 1)
	tools := loadTools(t, fmt.Sprintf(file, u.String()))
	if res := callTool(t, tools, "query_data", `{"table":"orders"}`); res.IsError {
		t.Fatalf("before: %s", res.Content)
	}
	f.freeze()
	res := callTool(t, tools, "query_data", `{"table":"orders"}`)
	if !res.IsError || strings.Contains(res.Content, "narrow") || !strings.Contains(res.Content, "did not answer") {
		t.Errorf("a database that stopped answering: %q", res.Content)
	}
}
