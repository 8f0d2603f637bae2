package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// hopEnv, set to an upstream's URL, makes the test binary a reverse proxy
// to it that stores nothing and does nothing else: BenchmarkLoad's third
// floor, the bare SDK through one HTTP hop, which is what any server
// between a client and the API costs before it does anything.
const hopEnv = "COACHD_TEST_HOP_UPSTREAM"

// runHop serves the proxy on a loopback port and prints its URL. Each
// request goes upstream as it came; the answer comes back as it arrives,
// flushed after every read. (httputil.ReverseProxy cut about 0.6 % of the
// fake's streams short, "unexpected EOF" at the client: net/http closed
// the request body under it when the answer began before the transport
// had read that body to its end. The hop is full duplex, which leaves the
// body to it.)
func runHop(upstream string) int {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 128 // as coachd's upstream transport
	c := &http.Client{Transport: t}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("hop on http://%s\n", ln.Addr())
	fmt.Fprintln(os.Stderr, http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		req, err := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header, req.ContentLength = r.Header.Clone(), r.ContentLength
		res, err := c.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		maps.Copy(w.Header(), res.Header)
		w.WriteHeader(res.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := res.Body.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
				w.(http.Flusher).Flush()
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				panic(http.ErrAbortHandler) // cut short, as the upstream's was
			}
		}
	})))
	return 1
}

// MustHop runs the test binary as the proxy to upstream, in a process of
// its own as coachd's is, and returns its URL.
func MustHop(tb testing.TB, upstream string) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), hopEnv+"="+upstream)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "hop on "); ok {
				found <- addr
			}
		}
	}()
	select {
	case addr := <-found:
		return addr
	case <-time.After(30 * time.Second):
		tb.Fatal("the hop's proxy did not start")
		return ""
	}
}
