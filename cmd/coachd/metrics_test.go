package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestMetrics: the real binary counts turns, time to first token, tokens,
// tool calls, rate-limit rejections and what the SQLite writer did, on
// /metrics behind the admin key and on --metrics-addr without one.
func TestMetrics(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	const admin = "metrics-admin-key-0123456789"
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo", "--admin-key", admin, "--rate-limit", "1/1h", "--metrics-addr", "127.0.0.1:0")
	fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Let me look.", 4), anthropictest.ToolUse("toolu_1", "list_notes", `{}`)),
		anthropictest.Text("Nothing yet.", 4))
	post := func() int {
		req, _ := http.NewRequest("POST", p.url+"/v1/chat/stream", strings.NewReader(`{"message":"what do you know?"}`))
		req.Header.Set("Authorization", "Bearer "+p.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post(); st != 200 {
		t.Fatalf("turn: %d", st)
	}
	if st := post(); st != 429 {
		t.Fatalf("second turn: %d, want the rate limit", st)
	}
	scrape := func(url, key string) (int, string) {
		req, _ := http.NewRequest("GET", url, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, _ := scrape(p.url+"/metrics", p.key); st != 403 {
		t.Fatalf("a user key read /metrics: %d", st)
	}
	st, body := scrape(p.url+"/metrics", admin)
	for _, want := range []string{
		`coachd_turns_total{agent="default",stop_reason="end_turn"} 1`,
		`coachd_tool_calls_total{outcome="ok",tool="list_notes"} 1`,
		`coachd_rejections_total{code="rate_limit_exceeded"} 1`,
		`coachd_time_to_first_token_seconds_count{agent="default"} 1`,
		`coachd_open_streams 0`,
	} {
		if st != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if m := regexp.MustCompile(`coachd_tokens_total\{kind="input"\} (\d+)`).FindStringSubmatch(body); m == nil || m[1] == "0" {
		t.Errorf("input tokens not counted")
	}
	if m := regexp.MustCompile(`coachd_db_transaction_seconds_count\{kind="write"\} (\d+)`).FindStringSubmatch(body); m == nil || m[1] == "0" {
		t.Errorf("write transactions not counted")
	}
	// The SQLite writer's counts: the turn wrote, so each moved.
	for _, name := range []string{"coachd_sqlite_writer_busy_seconds_total", "coachd_sqlite_writer_statements_total",
		"coachd_sqlite_write_transactions_total", "coachd_sqlite_commits_total", "coachd_sqlite_wal_pages_total"} {
		m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			t.Errorf("/metrics lacks %s", name)
		} else if v, err := strconv.ParseFloat(m[1], 64); err != nil || v <= 0 {
			t.Errorf("%s = %s after a turn, want more than 0", name, m[1])
		}
	}
	// The separate listener: its address is logged before "listening".
	m := p.stderr.waitFor(t, regexp.MustCompile(`metrics listening"? addr=(\S+)`))
	addr := m[1]
	if st, body := scrape("http://"+addr+"/metrics", ""); st != 200 || !strings.Contains(body, "coachd_turns_total") {
		t.Fatalf("--metrics-addr: %d", st)
	}
	// On loopback, it answers loopback Hosts only: not a web page that
	// points its own name there (DNS rebinding).
	_, port, _ := strings.Cut(addr, ":")
	for host, want := range map[string]int{"rebind.example:" + port: 403, "127.0.0.1.nip.io:" + port: 403, "localhost:" + port: 200, "[::1]:" + port: 200} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("--metrics-addr, Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestGCPercent: serve sets the collector's target to defaultGCPercent when
// GOGC is unset, and leaves an operator's GOGC alone. The runtime reports
// the target on /metrics.
func TestGCPercent(t *testing.T) {
	const admin = "gc-admin-key-0123456789"
	for _, c := range []struct{ gogc, want string }{
		{"", fmt.Sprint(defaultGCPercent)},
		{"100", "100"},
		{"350", "350"},
	} {
		p := MustStart(t, []string{"GOGC=" + c.gogc}, "--db", filepath.Join(t.TempDir(), "c.db"), "--admin-key", admin)
		req, _ := http.NewRequest("GET", p.url+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := regexp.MustCompile(`(?m)^go_gc_gogc_percent (\d+)$`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("GOGC=%q: no go_gc_gogc_percent on /metrics", c.gogc)
		}
		if string(m[1]) != c.want {
			t.Errorf("GOGC=%q: the collector's target is %s, want %s", c.gogc, m[1], c.want)
		}
		p.kill()
	}
}
