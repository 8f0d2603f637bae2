package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestDiskFullPG is TestDiskFull on PostgreSQL: the server's processes
// may not grow the messages table's file past its size (RLIMIT_FSIZE on
// its backends, not a multiple of a page: the next page's write comes
// short, which PostgreSQL reports as disk_full, 53100). A turn whose
// reply cannot be stored, and one whose question cannot, fail with an
// internal error whose log line says the storage is full or failing,
// leaving no lease and no budget held; once the file may grow again, the
// next turn on the same session runs, and the session holds what was
// stored: the first failed turn's question, not the second's.
//
// The limit must stay above a WAL segment (16 MiB), which backends write
// too: the table is filled past it first.
func TestDiskFullPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", dsn, "--admin-key", testAdminKey, "--rate-limit", "off")
	_, key := mustAPIUser(t, p.url, `{"name":"full","token_budget":10000000}`)
	turn := func(session, msg string) (int, string) {
		t.Helper()
		body := fmt.Sprintf(`{"message":%q,"session_id":%q}`, msg, session)
		if session == "" {
			body = fmt.Sprintf(`{"message":%q}`, msg)
		}
		code, _, raw := post(t, p.url+"/v1/chat/stream", key, body)
		return code, string(raw)
	}
	sessionOf := func(raw string) string {
		t.Helper()
		i := strings.Index(raw, `"session_id":"`)
		if i < 0 {
			t.Fatalf("no session id in %s", raw)
		}
		s := raw[i+len(`"session_id":"`):]
		return s[:strings.IndexByte(s, '"')]
	}
	fake.Enqueue(anthropictest.Text("Start at the airport.", 2))
	code, raw := turn("", "where should I drive?")
	if code != 200 {
		t.Fatalf("first turn: %d %s", code, raw)
	}
	session := sessionOf(raw)
	fake.Enqueue(anthropictest.Text("Filler.", 2))
	code, raw = turn("", "a session to fill the table with")
	if code != 200 {
		t.Fatalf("filler session: %d %s", code, raw)
	}
	filler := sessionOf(raw)

	rawDB, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer rawDB.Close()
	// 9,000 rows of 1.8 KB (stored inline, uncompressed): about 18 MiB.
	if _, err := rawDB.ExecContext(ctx, `INSERT INTO messages (id, session_id, seq, role, content, created_at)
		SELECT 'msg_fill_' || g, $1, 1000000 + g, 'user', repeat('x', 1800), now() FROM generate_series(1, 9000) g`, filler); err != nil {
		t.Fatal(err)
	}
	// Four such rows fill a page: 9,000 left the file's last page with
	// room for a reply and more (one row on it), and a backend
	// with no page of the table in hand (one the server's pool opened
	// after its last insert there) tries the last page before it
	// extends the file: the turn whose reply cannot be stored stored it,
	// or the one whose question cannot be admitted was (7 messages, want
	// 4). The last page is filled up: no page has room for more than a
	// short question.
	var size int64
	for pad := 0; ; pad++ {
		var rows int
		if err := rawDB.QueryRowContext(ctx, `SELECT pg_relation_size('messages'), (SELECT count(*) FROM messages
			WHERE ctid >= format('(%s,0)', pg_relation_size('messages')/8192 - 1)::tid)`).Scan(&size, &rows); err != nil {
			t.Fatal(err)
		}
		if rows >= 4 {
			break
		}
		if _, err := rawDB.ExecContext(ctx, `INSERT INTO messages (id, session_id, seq, role, content, created_at)
			SELECT 'msg_pad_' || $2::int, $1, 2000000 + $2::int, 'user', repeat('x', 1800), now()`, filler, pad); err != nil {
			t.Fatal(err)
		}
	}
	if size <= 16<<20 {
		t.Fatalf("messages is %d bytes, want more than a WAL segment", size)
	}
	// The postmaster first, then every process it started: a backend
	// starts with its postmaster's limit, so one started from then on
	// has it, and one started before is among its children. Listing the
	// database's backends first and the postmaster last left a gap: a
	// backend the server's pool opened meanwhile (or one still starting,
	// not yet in pg_stat_activity) stored what the test says cannot be.
	var backend int
	if err := rawDB.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		t.Fatal(err)
	}
	postmaster := parentPID(t, backend)
	limit := func(cur uint64) error {
		if err := limitFileSize(postmaster, cur); err != nil {
			return err
		}
		for _, pid := range childPIDs(t, postmaster) {
			// One that exited since it was listed needs no limit.
			if err := limitFileSize(pid, cur); err != nil && !exited(pid) {
				return err
			}
		}
		return nil
	}
	if err := limit(uint64(size) + 4096); err != nil {
		t.Skipf("cannot limit the PostgreSQL server's file size: %v", err)
	}
	t.Cleanup(func() { limit(unix.RLIM_INFINITY) })

	var me meBudget
	clean := func(when string) {
		t.Helper()
		if code := call(t, "GET", p.url+"/v1/me", key, "", nil, &me); code != 200 || me.Budget.TokensReserved != 0 {
			t.Errorf("%s: %d, budget %+v; want nothing held", when, code, me.Budget)
		}
		var owners int
		if err := rawDB.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE turn_owner IS NOT NULL`).Scan(&owners); err != nil || owners != 0 {
			t.Errorf("%s: %d sessions still leased (%v)", when, owners, err)
		}
	}
	// The file's last page has room for a short question, not for a
	// reply of 700 bytes stored inline (no TOAST under 2 KB): the turn is
	// admitted, and its reply cannot be stored.
	reply := strings.Repeat("Try the airport. ", 40)
	fake.Enqueue(anthropictest.Text(reply, 50))
	code, raw = turn(session, "and now?")
	if code != 200 || !strings.Contains(raw, "event: error") || !strings.Contains(raw, `"type":"internal"`) {
		t.Fatalf("the turn whose reply cannot be stored: %d %s", code, raw)
	}
	stored := 2*1 + 1 // the first turn's, and this one's question
	clean("after the turn whose reply could not be stored")

	// A question as long as that reply finds no room either: the next
	// turn is not admitted.
	fake.Enqueue(anthropictest.Text("Noted.", 2))
	if code, raw = turn(session, reply); code != 500 || !strings.Contains(raw, `"type":"internal"`) {
		t.Errorf("the turn whose question cannot be stored: %d %s", code, raw)
	}
	clean("after the turn whose question could not be stored")
	if err := limit(unix.RLIM_INFINITY); err != nil {
		t.Fatal(err)
	}
	// The unasked reply is still queued: the next turn gets it. The
	// question sent again is the stored one's turn run again (a client
	// that knows no retry resends): only the reply is stored.
	if code, raw := turn(session, "and now?"); code != 200 || !strings.Contains(raw, "event: content_delta") || strings.Contains(raw, "event: error") {
		t.Fatalf("the turn after space came back: %d %s", code, raw)
	}
	stored++
	clean("after space came back")
	var msgs struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if code := call(t, "GET", p.url+"/v1/sessions/"+session+"/messages?limit=200", key, "", nil, &msgs); code != 200 {
		t.Fatalf("messages: %d", code)
	}
	if len(msgs.Messages) != stored {
		t.Errorf("the session holds %d messages, want %d", len(msgs.Messages), stored)
	}
	p.kill()
	if logs := p.stderr.String(); !strings.Contains(logs, "storage is full or failing") {
		t.Errorf("no log line says the storage is full or failing:\n%s", logs)
	}
}

// limitFileSize sets the RLIMIT_FSIZE of process pid to cur (its hard
// limit unlimited). Only a process of the same user may (short of
// CAP_SYS_RESOURCE): as root, whose tests run PostgreSQL as its own user
// (pgtest), util-linux's prlimit does it as the process's user.
func limitFileSize(pid int, cur uint64) error {
	err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: cur, Max: unix.RLIM_INFINITY}, nil)
	if err != unix.EPERM || os.Geteuid() != 0 {
		return err
	}
	var st unix.Stat_t
	if err := unix.Stat(fmt.Sprintf("/proc/%d", pid), &st); err != nil {
		return err
	}
	bin, err := exec.LookPath("prlimit")
	if err != nil {
		return err
	}
	v := "unlimited"
	if cur != unix.RLIM_INFINITY {
		v = strconv.FormatUint(cur, 10)
	}
	cmd := exec.Command(bin, "--pid", strconv.Itoa(pid), "--fsize="+v+":unlimited")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: st.Uid, Gid: st.Gid}}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("prlimit: %v: %s", err, out)
	}
	return nil
}

// parentPID is the parent process of pid (a backend's: the postmaster).
func parentPID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("cannot read the PostgreSQL server's processes: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			ppid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return ppid
		}
	}
	t.Fatalf("no PPid in /proc/%d/status", pid)
	return 0
}

// childPIDs lists the processes whose parent is ppid.
func childPIDs(t *testing.T, ppid int) []int {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("cannot list processes: %v", err)
	}
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue // it exited
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok && strings.TrimSpace(v) == strconv.Itoa(ppid) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// exited reports whether process pid is gone.
func exited(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return os.IsNotExist(err)
}
