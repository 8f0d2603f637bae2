package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// BenchmarkIdleStreams opens 1,000 chat streams on a real coachd process
// whose upstream stalls after the first words, and reports the process's
// resident memory per open stream (RSS after minus RSS before, over
// 1,000). The fake upstream and the clients live in the test process, so
// only coachd's own cost is counted.
func BenchmarkIdleStreams(b *testing.B) {
	const n = 1000
	for b.Loop() {
		fake := anthropictest.NewServer()
		fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
			return anthropictest.Text("hello there", 5).StallAfter(4)
		})
		env := []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "COACHD_RATE_LIMIT=off"}
		p := MustStart(b, env, "--db", b.TempDir()+"/c.db", "--demo")
		before := rss(b, p.cmd.Process.Pid)
		tr := &http.Transport{MaxIdleConnsPerHost: n}
		hc := &http.Client{Transport: tr}
		ctx, cancel := context.WithCancel(context.Background())
		opened := make(chan error, n)
		for i := range n {
			go func() {
				body := fmt.Sprintf(`{"message":"idle %d"}`, i)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/v1/chat/stream", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+p.key)
				resp, err := hc.Do(req)
				if err != nil {
					opened <- err
					return
				}
				defer resp.Body.Close()
				if resp.StatusCode != 200 {
					opened <- fmt.Errorf("status %d", resp.StatusCode)
					return
				}
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if sc.Text() == "event: content_delta" {
						opened <- nil
						break
					}
				}
				for sc.Scan() {
				}
			}()
		}
		for range n {
			if err := <-opened; err != nil {
				b.Fatal(err)
			}
		}
		after := rss(b, p.cmd.Process.Pid)
		b.ReportMetric(float64(after-before)/n, "KiB/stream")
		b.ReportMetric(float64(after), "KiB-rss-total")
		cancel()
		tr.CloseIdleConnections()
		p.kill()
		fake.Close()
	}
}

// rss reads a process's resident set size in KiB.
func rss(b *testing.B, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
