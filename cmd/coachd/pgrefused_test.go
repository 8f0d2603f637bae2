package main

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestPostgresRefusedSaysWhy: serve, migrate and users with a --db whose
// login Postgres refuses, or whose database does not exist, said "the
// database is unavailable for now: retry in a moment". They fail saying
// what to fix, without the password.
func TestPostgresRefusedSaysWhy(t *testing.T) {
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	const pw = "hunter2-not-shown"
	badLogin := *u
	badLogin.User = url.UserPassword("nobody", pw)
	noDB := *u
	noDB.User = url.UserPassword("coachd", pw)
	noDB.Path = "/missing"
	for _, c := range []struct {
		dsn, want string
	}{
		{badLogin.String(), "the database refused coachd's login"},
		{noDB.String(), "the database named in --db does not exist"},
	} {
		for _, args := range [][]string{
			{"serve", "--demo", "--addr", "127.0.0.1:0"},
			{"migrate"},
			{"users", "list"},
		} {
			var stderr bytes.Buffer
			err := run(context.Background(), append(append([]string{"coachd"}, args...), "--db", c.dsn), getenvFrom(nil), io.Discard, &stderr)
			if err == nil {
				t.Fatalf("%s: no error", args[0])
			}
			out := err.Error() + stderr.String()
			if !strings.Contains(err.Error(), c.want) || strings.Contains(out, "retry") {
				t.Errorf("%s: %v: want %q, and no retry", args[0], err, c.want)
			}
			if strings.Contains(out, pw) {
				t.Errorf("%s: the password shows in:\n%s", args[0], out)
			}
		}
	}
}
