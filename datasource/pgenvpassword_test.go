package datasource_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/coachd/coachd/datasource"
)

// TestSecurityDSNNoEnvPassword: a pack's data source DSN without a
// password connected with coachd's own PGPASSWORD (the driver's libpq
// default), so a pack naming any host, postgres://coachd@db.example/x,
// received coachd's database password when that server asked for it in
// clear. A pack's DSN now carries only its own password (${ENV} for a
// secret); PGPASSWORD and the passfile are not read for it.
func TestSecurityDSNNoEnvPassword(t *testing.T) {
	const own = "coachd-own-pg-password"
	t.Setenv("PGPASSWORD", own)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 4)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				be := pgproto3.NewBackend(conn, conn)
				msg, err := be.ReceiveStartupMessage()
				if _, ok := msg.(*pgproto3.SSLRequest); ok && err == nil {
					conn.Write([]byte("N"))
					msg, err = be.ReceiveStartupMessage()
				}
				if _, ok := msg.(*pgproto3.StartupMessage); !ok || err != nil {
					return
				}
				// Ask for the password in clear, as any server may.
				be.Send(&pgproto3.AuthenticationCleartextPassword{})
				if be.Flush() != nil {
					return
				}
				be.SetAuthType(pgproto3.AuthTypeCleartextPassword)
				pm, err := be.Receive()
				if p, ok := pm.(*pgproto3.PasswordMessage); ok && err == nil {
					got <- p.Password
				}
				be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: "password authentication failed"})
				be.Flush()
			}()
		}
	}()

	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	yaml := "dsn: postgres://coachd@" + ln.Addr().String() + "/app?sslmode=disable\ntables:\n  t:\n    description: T\n    scope: user_id\n    columns: [id]\n"
	if err := os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil); err == nil {
		t.Fatal("Load passed against a server refusing every login")
	}
	for {
		select {
		case pw := <-got:
			if pw == own {
				t.Errorf("the pack's host received coachd's PGPASSWORD")
			}
			continue
		default:
		}
		break
	}
}
