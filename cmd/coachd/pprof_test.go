package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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

// TestSecurityPprofRebinding: a loopback listener is not out of a web
// page's reach. A page the operator opens can point its own host name at
// 127.0.0.1 (DNS rebinding) and read the profiles as same-origin, the
// command line among them (--admin-key, --webhook-secret when given as
// flags). Only a request that names a loopback host is served.
func TestSecurityPprofRebinding(t *testing.T) {
	var logs syncBuffer
	stop, err := servePprof("127.0.0.1:0", slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	m := pprofAddrRe.FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no address in %q", logs.String())
	}
	_, port, _ := strings.Cut(m[1], ":")
	get := func(host string) int {
		req, err := http.NewRequest("GET", "http://"+m[1]+"/debug/pprof/cmdline", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	for _, host := range []string{"rebind.example:" + port, "rebind.example", "127.0.0.1.nip.io:" + port} {
		if got := get(host); got != http.StatusForbidden {
			t.Errorf("Host %s: %d, want 403", host, got)
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "127.0.0.1"} {
		if got := get(host); got != http.StatusOK {
			t.Errorf("Host %s: %d, want 200", host, got)
		}
	}
}

// TestServeRefusesBadListenAddr proves that serve refuses a listen
// address it could never listen on with a usage error naming the flag,
// before it makes or migrates the database: an --addr with port 99999
// made and migrated a new SQLite file, then failed to listen.
func TestServeRefusesBadListenAddr(t *testing.T) {
	for _, tc := range []struct{ flag, addr, want string }{
		{"--addr", "127.0.0.1:99999", "--addr \"127.0.0.1:99999\": the port must be a number from 0 to 65535"},
		{"--addr", "127.0.0.1", "--addr \"127.0.0.1\": want HOST:PORT"},
		{"--addr", "localhost:no-such-service", "the port must be a number"},
		{"--metrics-addr", "127.0.0.1:-1", "--metrics-addr \"127.0.0.1:-1\": the port must be"},
		{"--pprof", "0.0.0.0:6060", "--pprof \"0.0.0.0:6060\": must be a loopback address"},
	} {
		t.Run(strings.TrimPrefix(tc.flag, "--"), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "coachd.db")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var stderr bytes.Buffer
			args := []string{"coachd", "serve", "--db", db, "--provider", "demo", "--addr", "127.0.0.1:0", tc.flag, tc.addr}
			err := run(ctx, args, getenvFrom(nil), io.Discard, &stderr)
			if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("serve %s %s = %v, stderr %q; want a usage error containing %q", tc.flag, tc.addr, err, stderr.String(), tc.want)
			}
			if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("serve %s %s left a database behind (stat: %v)", tc.flag, tc.addr, err)
			}
		})
	}
}
