package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeMCPEnv) == "stdio" {
		os.Exit(runFakeMCP()) // the test binary as a pack's MCP server (mcp_test.go)
	}
	if u := os.Getenv(hopEnv); u != "" {
		os.Exit(runHop(u)) // the test binary as BenchmarkLoad's hop (hop_test.go)
	}
	code := m.Run()
	pgtest.Shutdown()
	if buildDir != "" {
		os.RemoveAll(buildDir) // MustBinary's build
	}
	os.Exit(code)
}

const testAdminKey = "admin-key-for-budget-tests"

// call sends a JSON request to a running coachd and decodes the answer.
func call(t *testing.T, method, url, key, body string, header map[string]string, out any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, raw)
		}
	}
	return resp.StatusCode
}

type meBudget struct {
	Budget struct {
		TokenBudget    int64 `json:"token_budget"`
		TokensUsed     int64 `json:"tokens_used"`
		TokensReserved int64 `json:"tokens_reserved"`
	} `json:"budget"`
}

type preflightOut struct {
	SessionID       string `json:"session_id"`
	ReservationID   string `json:"reservation_id"`
	EstimatedTokens int64  `json:"estimated_tokens"`
	Error           struct {
		Code string `json:"code"`
	} `json:"error"` // a preflight the budget refused
}

func mustAPIUser(t *testing.T, url, body string) (id, key string) {
	t.Helper()
	var u struct {
		ID     string `json:"id"`
		APIKey string `json:"api_key"`
	}
	if st := call(t, "POST", url+"/v1/users", testAdminKey, body, nil, &u); st != 201 {
		t.Fatalf("create user: %d", st)
	}
	return u.ID, u.APIKey
}

// TestCrashReservation: a process reserves (preflight), is SIGKILLed
// before it settles, and restarts: the hold expires and the budget comes
// back within the expiry window; a late record still charges the real
// usage, once.
func TestCrashReservation(t *testing.T) {
	db := filepath.Join(t.TempDir(), "coachd.db")
	args := []string{"--db", db, "--admin-key", testAdminKey, "--provider", "demo", "--reservation-expiry", "1s"}
	p := MustStart(t, nil, args...)
	_, key := mustAPIUser(t, p.url, `{"name":"crash"}`)
	var pf preflightOut
	if st := call(t, "POST", p.url+"/v1/chat/preflight", key, `{"message":"hello"}`, nil, &pf); st != 200 {
		t.Fatalf("preflight %d", st)
	}
	var me meBudget
	call(t, "GET", p.url+"/v1/me", key, "", nil, &me)
	if me.Budget.TokenBudget != defaultBudget || me.Budget.TokensReserved != pf.EstimatedTokens {
		t.Fatalf("before crash: %+v", me.Budget)
	}
	p.kill()

	p = MustStart(t, nil, args...)
	start := time.Now()
	for {
		call(t, "GET", p.url+"/v1/me", key, "", nil, &me)
		if me.Budget.TokensReserved == 0 {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("hold never released: %+v", me.Budget)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("hold released %s after restart", time.Since(start).Round(time.Millisecond))
	body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":321,"final":true,
		"messages":[{"role":"user","content_blocks":[{"type":"text","text":"hello"}]}]}`, pf.SessionID, pf.ReservationID)
	for range 2 {
		if st := call(t, "POST", p.url+"/v1/chat/record", key, body, nil, nil); st != 200 {
			t.Fatalf("late record %d", st)
		}
	}
	call(t, "GET", p.url+"/v1/me", key, "", nil, &me)
	if me.Budget.TokensUsed != 321 || me.Budget.TokensReserved != 0 {
		t.Fatalf("after late record: %+v", me.Budget)
	}
	p.kill()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "doctor", "--db", db}, getenvFrom(nil), &out, &errb); err != nil {
		t.Fatalf("doctor: %v\n%s", err, out.String())
	}
}

// TestTwoProcessesOnePostgres: two coachd processes share one Postgres;
// concurrent preflights split between them can never admit more
// reservations than the budget fits, nor more requests than the rate limit.
func TestTwoProcessesOnePostgres(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	args := []string{"--db", dsn, "--admin-key", testAdminKey, "--provider", "demo", "--rate-limit", "off"}
	procs := []*proc{MustStart(t, nil, args...), MustStart(t, nil, args...)}
	urls := []string{procs[0].url, procs[1].url}

	// Learn the estimate of a first turn, give it back, then set a budget
	// that fits exactly 3.
	id, key := mustAPIUser(t, urls[0], `{"name":"shared"}`)
	var pf preflightOut
	call(t, "POST", urls[0]+"/v1/chat/preflight", key, `{"message":"hello"}`, nil, &pf)
	call(t, "POST", urls[0]+"/v1/chat/abort", key, fmt.Sprintf(`{"session_id":%q,"reservation_id":%q}`, pf.SessionID, pf.ReservationID), nil, nil)
	budget := 3*pf.EstimatedTokens + pf.EstimatedTokens/2
	call(t, "PATCH", urls[1]+"/v1/users/"+id, testAdminKey, fmt.Sprintf(`{"token_budget":%d}`, budget), nil, nil)

	race := func(key string, n int) (ok, limited, broke int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				var got preflightOut
				st := call(t, "POST", urls[i%2]+"/v1/chat/preflight", key, `{"message":"hello"}`, nil, &got)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case st == 200 && got.ReservationID != "":
					ok++
				case st == 429:
					limited++
				case st == 200 && got.Error.Code == "budget_exhausted": // budget_remaining 0
					broke++
				}
			})
		}
		wg.Wait()
		return
	}
	if ok, _, broke := race(key, 16); ok != 3 || broke != 13 {
		t.Fatalf("budget for 3: admitted %d, refused %d", ok, broke)
	}
	var me meBudget
	call(t, "GET", urls[1]+"/v1/me", key, "", nil, &me)
	if me.Budget.TokensReserved != 3*pf.EstimatedTokens || me.Budget.TokensUsed != 0 {
		t.Fatalf("shared budget %+v", me.Budget)
	}

	id2, key2 := mustAPIUser(t, urls[1], `{"name":"chatty"}`)
	call(t, "PATCH", urls[0]+"/v1/users/"+id2, testAdminKey, `{"rate_limit":"4/1h"}`, nil, nil)
	if ok, limited, _ := race(key2, 12); ok != 4 || limited != 8 {
		t.Fatalf("rate 4/1h across two processes: %d ok, %d limited", ok, limited)
	}
	for _, p := range procs {
		p.kill()
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "doctor", "--db", dsn}, getenvFrom(nil), &out, &errb); err != nil {
		t.Fatalf("doctor: %v\n%s", err, out.String())
	}
}

func TestDoctorReportsDrift(t *testing.T) {
	db := filepath.Join(t.TempDir(), "coachd.db")
	env := getenvFrom(map[string]string{"COACHD_DB": db})
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "users", "create", "--name", "d"}, env, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"coachd", "doctor"}, env, &out, &errb); err != nil {
		t.Fatalf("clean database: %v", err)
	}
	store, err := openDB(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SQL().Exec(`UPDATE users SET tokens_used = 42`); err != nil {
		t.Fatal(err)
	}
	store.Close()
	out.Reset()
	err = run(context.Background(), []string{"coachd", "doctor"}, env, &out, &errb)
	if !errors.Is(err, errDrift) || !strings.Contains(out.String(), "DRIFT") {
		t.Fatalf("doctor after tampering: %v\n%s", err, out.String())
	}
}
