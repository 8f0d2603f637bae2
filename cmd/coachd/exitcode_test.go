package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDoctorExitCodes: a script running coachd doctor (a cron job that
// pages on drift) could not tell drift from a doctor that could not check:
// both exited 1. Drift exits 3; a failure (no such database) 1; a usage
// error 2; a balanced ledger 0, as README says.
func TestDoctorExitCodes(t *testing.T) {
	bin := MustBinary(t)
	db := filepath.Join(t.TempDir(), "coachd.db")
	env := getenvFrom(map[string]string{"COACHD_DB": db})
	out := &syncBuffer{}
	if err := run(context.Background(), []string{"coachd", "users", "create", "--name", "d"}, env, out, out); err != nil {
		t.Fatal(err)
	}
	code := func(args ...string) int {
		t.Helper()
		err := exec.Command(bin, args...).Run()
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}
	if got := code("doctor", "--db", db); got != 0 {
		t.Errorf("doctor on a balanced ledger exited %d, want 0", got)
	}
	if got := code("doctor", "--db", db, "extra"); got != 2 {
		t.Errorf("doctor with a stray argument exited %d, want 2", got)
	}
	if got := code("doctor", "--db", filepath.Join(t.TempDir(), "none.db")); got != 1 {
		t.Errorf("doctor on a missing database exited %d, want 1", got)
	}
	store, err := openDB(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SQL().Exec(`UPDATE users SET tokens_used = 42`); err != nil {
		t.Fatal(err)
	}
	store.Close()
	if got := code("doctor", "--db", db); got != 3 {
		t.Errorf("doctor finding drift exited %d, want 3 (not 1, a failure to check)", got)
	}
}
