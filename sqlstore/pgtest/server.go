package pgtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// Server is a PostgreSQL server of one test's own, for a test that stops
// and starts it (Restart): the process-wide cluster serves every other
// test of the binary, which a restart would fail.
type Server struct{ c *cluster }

// NewServer starts a server of the test's own, stopped and its files
// removed when the test ends. Without the server binaries it skips the
// test, or fails it when $CI is set, as NewDatabase does.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	c, err := newCluster()
	if err != nil {
		if errors.Is(err, errNoBinaries) {
			missingBinaries(tb, err)
		} else {
			tb.Fatalf("pgtest: %v", err)
		}
		return nil
	}
	s := &Server{c: c}
	tb.Cleanup(func() { s.c.stop() })
	return s
}

// NewDatabase returns the DSN of a fresh, empty database on s.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d", dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.c.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	return s.c.dsn(name)
}

// Restart stops s in fast mode, as an operator's restart or a failover
// does (every session ended, its transaction rolled back), and starts it
// again on the same data directory and port: the DSNs it gave still
// work. It returns once the server accepts connections.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Stop()
	s.Start(tb)
}

// Stop stops s in fast mode and waits for it: until Start, connections
// to it are refused.
func (s *Server) Stop() { s.c.halt() }

// Start starts s again after Stop, on the same data directory and port,
// and returns once it accepts connections.
func (s *Server) Start(tb testing.TB) {
	tb.Helper()
	old := s.c
	c, err := launch(old.bin, old.dir, old.data, old.cred, old.port)
	if err != nil {
		tb.Fatalf("pgtest: start again: %v", err)
	}
	s.c = c
}
