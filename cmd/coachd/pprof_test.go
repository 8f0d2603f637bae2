package main

import (
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestPprofLoopbackOnly(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.1.2.3:0", "example.com:0", "nonsense"} {
		if stop, err := servePprof(addr, logger); err == nil {
			stop()
			t.Errorf("--pprof %s was accepted", addr)
		}
	}
	stop, err := servePprof("127.0.0.1:0", logger)
	if err != nil {
		t.Fatal(err)
	}
	stop()
}

// serve --pprof answers /debug/pprof/ on its own listener.
func TestServePprof(t *testing.T) {
	p := MustStart(t, nil, "--db", t.TempDir()+"/c.db", "--demo", "--pprof", "127.0.0.1:0", "--log-level", "info")
	m := p.stderr.waitFor(t, pprofAddrRe)
	resp, err := http.Get("http://" + m[1] + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "goroutine profile") {
		t.Fatalf("%d %.200s", resp.StatusCode, body)
	}
}

var pprofAddrRe = regexp.MustCompile(`pprof listening.*addr=(127\.0\.0\.1:\d+)`)
