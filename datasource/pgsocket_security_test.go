package datasource_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/coachd/coachd/datasource"
)

// TestSecurityDSNNoUnixSocket: a DSN whose host is a path (or that names
// no host, which pgx takes for the local socket directory) reached a
// Postgres Unix socket, where the usual peer authentication logs in as
// coachd's own OS user, with no password: a pack could read coachd's own
// database. A pack's DSN names a TCP host; the socket is never dialled.
func TestSecurityDSNNoUnixSocket(t *testing.T) {
	sock, err := os.MkdirTemp("", "pgsock") // short: a socket path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	ln, err := net.Listen("unix", filepath.Join(sock, ".s.PGSQL.5432"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	dialled := make(chan struct{}, 16)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			dialled <- struct{}{}
			be := pgproto3.NewBackend(conn, conn)
			be.ReceiveStartupMessage()
			be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28000", Message: "no login here"})
			be.Flush()
			conn.Close()
		}
	}()

	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: ${APP_DB}\ntables:\n  t: {scope: user_id, columns: [id]}\n"), 0o644)
	for _, dsn := range []string{
		"postgres://coachd@/app?host=" + sock,
		"postgres://coachd@/app?host=127.0.0.1," + sock + "&port=1,5432",
		"postgres://coachd@/app", // PGHOST's socket
	} {
		t.Setenv("PGHOST", sock)
		_, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return dsn }, nil)
		if err == nil || !strings.Contains(err.Error(), "Unix socket") {
			t.Errorf("%s: %v", dsn, err)
		}
	}
	select {
	case <-dialled:
		t.Error("a pack's DSN reached a Unix socket")
	default:
	}
}
