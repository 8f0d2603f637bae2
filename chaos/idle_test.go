package chaos

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIdleStreams opens N idle SSE streams (GET /v1/sessions/{id}/stream
// on sessions with no turn running) on one coachd process and reports
// the process's resident memory, heap and goroutines per stream.
// COACHD_IDLE_STREAMS=10000 is the full figure; the default is CI-sized.
// It checks that every stream got its headers and that each costs a
// bounded number of goroutines; the bytes per stream are reported, not
// asserted (they depend on the machine).
func TestIdleStreams(t *testing.T) {
	n := 300
	if v := os.Getenv("COACHD_IDLE_STREAMS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("COACHD_IDLE_STREAMS=%q: want a positive number", v)
		}
	}
	metricsAddr := freeAddr(t)
	p := mustStart(t, []string{"COACHD_LOG_LEVEL=warn"}, "--db", filepath.Join(t.TempDir(), "c.db"), "--admin-key", adminKey,
		"--provider", "demo", "--rate-limit", "off", "--max-conns", strconv.Itoa(n+100), "--metrics-addr", metricsAddr)
	var u struct {
		APIKey string `json:"api_key"`
	}
	mustCall(t, p.url, adminKey, "POST", "/v1/users", `{"name":"idle"}`, 201, &u)
	sessions := make([]string, min(n, 50))
	for i := range sessions {
		var s struct{ ID string }
		mustCall(t, p.url, u.APIKey, "POST", "/v1/sessions", `{"title":"idle"}`, 201, &s)
		sessions[i] = s.ID
	}
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: -1, DisableKeepAlives: true}
	hc := &http.Client{Transport: tr}
	open := func(i int) (io.Closer, error) {
		req, _ := http.NewRequest("GET", p.url+"/v1/sessions/"+sessions[i%len(sessions)]+"/stream", nil)
		req.Header.Set("Authorization", "Bearer "+u.APIKey)
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != 200 {
			resp.Body.Close()
			return nil, fmt.Errorf("status %d", resp.StatusCode)
		}
		// The first bytes (retry:) show the stream is set up server side.
		if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
			resp.Body.Close()
			return nil, err
		}
		return resp.Body, nil
	}
	// Warm up: one stream opened and closed, so pools and caches are paid for.
	if c, err := open(0); err != nil {
		t.Fatal(err)
	} else {
		c.Close()
	}
	// ... and its end noticed (a parked stream's by the prober).
	before := scrape(t, metricsAddr)
	for deadline := time.Now().Add(30 * time.Second); before["coachd_open_streams"] != 0; before = scrape(t, metricsAddr) {
		if time.Now().After(deadline) {
			t.Fatalf("the warm-up stream is still open: %v", before["coachd_open_streams"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	streams := make([]io.Closer, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c, err := open(i)
			if err != nil {
				errs <- err
				return
			}
			streams[i] = c
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("open stream: %v", err)
	}
	opened := time.Since(start)
	after := scrape(t, metricsAddr)
	per := func(k string) float64 { return (after[k] - before[k]) / float64(n) }
	t.Logf("%d idle streams opened in %s: RSS %.1f KiB/stream (%.1f -> %.1f MiB), heap in use %.1f KiB/stream, goroutines %.2f/stream (%v -> %v)",
		n, opened.Round(time.Millisecond), per("process_resident_memory_bytes")/1024,
		before["process_resident_memory_bytes"]/(1<<20), after["process_resident_memory_bytes"]/(1<<20),
		per("go_memstats_heap_inuse_bytes")/1024, per("go_goroutines"), before["go_goroutines"], after["go_goroutines"])
	if g := per("go_goroutines"); g > 4 {
		t.Errorf("%.2f goroutines per idle stream, want at most 4", g)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range streams {
		c.Close()
	}
	// The streams end when their clients leave: goroutines, open streams
	// and file descriptors come back.
	if o := after["coachd_open_streams"] - before["coachd_open_streams"]; o != float64(n) {
		t.Errorf("%v open streams counted, want %d", o, n)
	}
	for {
		m := scrape(t, metricsAddr)
		if m["go_goroutines"] < before["go_goroutines"]+float64(n)/10 && m["coachd_open_streams"] == before["coachd_open_streams"] &&
			m["process_open_fds"] < before["process_open_fds"]+float64(n)/10 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the streams did not end after the clients left: goroutines %v, open streams %v, open fds %v (before: %v, %v, %v)",
				m["go_goroutines"], m["coachd_open_streams"], m["process_open_fds"],
				before["go_goroutines"], before["coachd_open_streams"], before["process_open_fds"])
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

var metricLine = regexp.MustCompile(`^([a-z_]+) ([0-9.e+]+)$`)

// scrape reads the process's Prometheus metrics (unlabelled ones).
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if m := metricLine.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			out[m[1]] = v
		}
	}
	return out
}
