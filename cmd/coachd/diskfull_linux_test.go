package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestDiskFull: when the database's files can grow no more (RLIMIT_FSIZE
// on the serving process, as a full disk does to its writes), a turn
// fails with an error whose log line says the storage is full or failing,
// not a misleading event log "not found" for the turn whose admission was
// never stored; once the files may grow again, the next turn on the same
// session runs (no lease, no hold left behind) and the ledger balances.
func TestDiskFull(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	db := filepath.Join(t.TempDir(), "c.db")
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", db, "--demo", "--rate-limit", "off")
	turn := func(session, msg string) (int, string) {
		t.Helper()
		body := fmt.Sprintf(`{"message":%q,"session_id":%q}`, msg, session)
		if session == "" {
			body = fmt.Sprintf(`{"message":%q}`, msg)
		}
		code, _, raw := post(t, p.url+"/v1/chat/stream", p.key, body)
		return code, string(raw)
	}
	fake.Enqueue(anthropictest.Text("Start at the airport.", 2))
	code, raw := turn("", "where should I drive?")
	i := strings.Index(raw, `"session_id":"`)
	if code != 200 || i < 0 {
		t.Fatalf("first turn: %d %s", code, raw)
	}
	session := raw[i+len(`"session_id":"`):]
	session = session[:strings.IndexByte(session, '"')]

	size := int64(0)
	for _, f := range []string{db, db + "-wal"} {
		if fi, err := os.Stat(f); err == nil {
			size = max(size, fi.Size())
		}
	}
	pid := p.cmd.Process.Pid
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(size), Max: unix.RLIM_INFINITY}, nil); err != nil {
		t.Skipf("cannot limit the server's file size: %v", err)
	}
	big := strings.Repeat("I drive mornings near the airport. ", 800)
	failed, ran := false, 1
	for n := 0; n < 40 && !failed; n++ {
		fake.Enqueue(anthropictest.Text("Noted.", 2))
		code, raw = turn(session, big)
		failed = code != 200 || strings.Contains(raw, "event: error")
		if !failed {
			ran++
		}
	}
	if !failed {
		t.Fatal("no turn failed with the database's files unable to grow")
	}
	if !strings.Contains(raw, `"type":"internal"`) {
		t.Errorf("the failed turn's answer: %d %s", code, raw)
	}
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}, nil); err != nil {
		t.Fatal(err)
	}
	// A reply the failed turn never asked for may still be queued.
	fake.Enqueue(anthropictest.Text("Back to the airport.", 2))
	if code, raw := turn(session, "and now?"); code != 200 || !strings.Contains(raw, "event: content_delta") || strings.Contains(raw, "event: error") {
		t.Fatalf("the turn after space came back: %d %s", code, raw)
	}
	ran++
	// Each turn that ran stored its message and its reply; the one that
	// failed stored nothing.
	var msgs struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if code := call(t, "GET", p.url+"/v1/sessions/"+session+"/messages?limit=200", p.key, "", nil, &msgs); code != 200 {
		t.Fatalf("messages: %d", code)
	}
	if len(msgs.Messages) != 2*ran {
		t.Errorf("the session holds %d messages after %d turns that ran, want %d", len(msgs.Messages), ran, 2*ran)
	}
	for i, m := range msgs.Messages {
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			t.Errorf("message %d is the %s's, want the %s's", i, m.Role, want)
		}
	}
	p.kill()
	logs := p.stderr.String()
	if !strings.Contains(logs, "storage is full or failing") {
		t.Errorf("no log line says the storage is full or failing:\n%s", logs)
	}
	if strings.Contains(logs, `msg="event log"`) {
		t.Errorf("the event log's write for a turn never stored was logged as a failure:\n%s", logs)
	}
	var out, errb strings.Builder
	if err := run(t.Context(), []string{"coachd", "doctor", "--db", db}, getenvFrom(nil), &out, &errb); err != nil {
		t.Fatalf("doctor: %v\n%s%s", err, out.String(), errb.String())
	}
}
