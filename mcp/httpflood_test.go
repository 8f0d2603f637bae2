package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawHTTPServer (fakeEnv "rawhttp") is a hand-written streamable HTTP
// MCP server in a process of its own, its address on stdout. Once it
// listed its tools, its event stream sends pings without end, and it
// never answers the POSTs that carry their answers.
func rawHTTPServer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	listed := make(chan struct{})
	var once sync.Once
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", "s1")
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
			select {
			case <-listed:
			case <-r.Context().Done():
				return
			}
			for i := 0; r.Context().Err() == nil; i++ {
				if _, err := fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":\"ping\"}\n\n", i); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
			return
		case http.MethodDelete:
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &msg)
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
		}
		switch {
		case msg.Method == "initialize":
			reply(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"flood","version":"1"}}`)
		case msg.Method == "tools/list":
			reply(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)
			once.Do(func() { close(listed) })
		case msg.Method == "":
			<-r.Context().Done() // coachd's answer to a ping: never taken
		case len(msg.ID) > 0:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	http.Serve(ln, h)
	os.Exit(0)
}

// startRawHTTP runs the test binary as rawHTTPServer and returns its URL.
func startRawHTTP(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeEnv+"=rawhttp")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the flooding server did not start: %v", err)
	}
	return "http://" + strings.TrimSpace(addr)
}

// TestHTTPServerFloodsUnreadRequests: an HTTP server whose event stream
// sends requests (pings) without end, and that never takes the POSTs
// carrying their answers, is stopped once coachd holds maxAnswering of
// them, as a stdio one is, and the answers under way end. Each answer's
// POST waited its 5 s bound in a goroutine (and a connection) of its
// own: coachd grew by thousands of goroutines and sockets a second, for
// as long as the server ran.
func TestHTTPServerFloodsUnreadRequests(t *testing.T) {
	cfg := &Config{Name: "flood", Prefix: "flood", URL: startRawHTTP(t), Timeout: 30 * time.Second, MaxOutput: 4096}
	stopped := make(chan string, 1)
	s := mustServer(t, cfg, Options{Logger: slog.New(logErrs{msg: "mcp server stopped; it is restarted on next use", c: stopped})})
	base := runtime.NumGoroutine()
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	peak := 0
	for {
		select {
		case err := <-stopped:
			if !strings.Contains(err, "requests without reading their answers") {
				t.Fatalf("stopped for %q, want the unread requests named", err)
			}
			t.Logf("peak: %d more goroutines", peak)
			// The answers under way end with the server.
			for n := runtime.NumGoroutine() - base; n > 100; n = runtime.NumGoroutine() - base {
				select {
				case <-tick.C:
				case <-deadline:
					t.Fatalf("the stopped server's answers still hold %d more goroutines", n)
				}
			}
			return
		case <-tick.C:
			n := runtime.NumGoroutine() - base
			peak = max(peak, n)
			if n > 5000 {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				t.Fatalf("coachd holds %d more goroutines (%d MB of heap) answering a server that takes no answer", n, m.HeapInuse>>20)
			}
		case <-deadline:
			t.Fatalf("the server flooding unanswered requests was not stopped; %d goroutines", runtime.NumGoroutine())
		}
	}
}
