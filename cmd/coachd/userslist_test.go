package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// A user name comes from whoever names the user: the admin API, or any
// end user's JWT name claim. users list shows it on the operator's
// terminal, where a newline or a tab forged a row of the table and an
// escape sequence drove the terminal (cleared it, retitled it, recoloured
// what followed).
func TestUsersListControlCharacters(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	mustCreateUser(t, dbPath, "frank")
	db := mustOpen(t, dbPath)
	for _, name := range []string{
		"eve\nusr_forged  root  999999999  0  2026-01-01 00:00:00Z",
		"mallory\x1b]0;owned\x07\x1b[2J",
		"tab\tbed",
	} {
		if _, err := server.CreateUser(context.Background(), db, &coachd.User{Name: name, TokenBudget: 1}); err != nil {
			t.Fatal(err)
		}
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "users", "list", "--db", dbPath}, getenvFrom(nil), &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	if lines := strings.Count(out, "\n"); lines != 5 {
		t.Errorf("users list: %d lines, want a header and 4 users:\n%s", lines, out)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("users list passes escape sequences to the terminal: %q", out)
	}
	if !strings.Contains(out, `"eve\nusr_forged`) || !strings.Contains(out, "frank ") {
		t.Errorf("users list: want odd names quoted, plain ones as they are:\n%s", out)
	}
}
