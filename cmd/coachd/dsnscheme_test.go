package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestSecuritySchemelessDSNNotShown: a Postgres URL written without its
// scheme (--db coach:secret@host/db) was taken for a SQLite path, and
// every command quoted it whole, password included ("cannot create
// coach:secret@…: directory … does not exist"). It is refused, saying a
// scheme is needed, and shown with its password masked.
func TestSecuritySchemelessDSNNotShown(t *testing.T) {
	const secret = "pgsecret-1"
	dsn := "coach:" + secret + "@127.0.0.1:1/coachd"
	check := func(t *testing.T, what, out string) {
		t.Helper()
		if strings.Contains(out, secret) {
			t.Errorf("%s shows the password:\n%s", what, out)
		}
		if !strings.Contains(out, "postgres://") || !strings.Contains(out, "127.0.0.1") {
			t.Errorf("%s does not show the DSN masked and say a scheme is needed:\n%s", what, out)
		}
	}
	t.Run("Serve", func(t *testing.T) {
		check(t, "serve", serveUnreachable(t, dsn))
	})
	env := getenvFrom(map[string]string{"COACHD_DB": dsn})
	for _, args := range [][]string{{"doctor"}, {"users", "list"}, {"backup", "--out", t.TempDir() + "/b.db"},
		{"migrate"}, {"users", "create", "--name", "x"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"coachd"}, args...), env, &stdout, &stderr)
			if err == nil {
				t.Fatalf("%v ran on a DSN without a scheme", args)
			}
			check(t, strings.Join(args, " "), stdout.String()+stderr.String()+err.Error())
		})
	}
	t.Run("Mask", func(t *testing.T) {
		for dsn, want := range map[string]string{
			"coach:" + secret + "@127.0.0.1:1/coachd": "coach:xxxxx@127.0.0.1:1/coachd",
			"coach:" + secret + "/x@127.0.0.1/coachd": "coach:xxxxx@127.0.0.1/coachd",
			"./backups/a:b@c.db":                      "./backups/a:b@c.db", // a file, as written
			"data/a:b@c.db":                           "data/a:b@c.db",
			"/var/lib/coachd/coachd.db":               "/var/lib/coachd/coachd.db",
		} {
			if got := maskDSN(dsn); got != want {
				t.Errorf("maskDSN(%q) = %q, want %q", dsn, got, want)
			}
		}
	})
}
