package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/loadtest"
)

// runFake serves the fake Anthropic Messages API, for trying coachd and
// for load tests from outside Go: ANTHROPIC_BASE_URL=http://ADDR.
func runFake(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fake-anthropic", "Usage: coachd fake-anthropic [flags]\n\n"+
		"Serves a fake Anthropic Messages API (POST /v1/messages, /v1/messages/count_tokens).\n"+
		"Replies with the --replay files in order, then echoes the last user message.")
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	key := fs.String("key", "", "accept only this x-api-key (default: any non-empty key)")
	replay := fs.String("replay", "", "comma-separated .sse files to serve, one per request, in order")
	delay := fs.Duration("event-delay", 0, "pause before each streamed event of the echo replies")
	bench := fs.Bool("bench", false, "answer like `coachd bench` expects: a save_note round for messages starting \"tool:\", then 20 text deltas")
	benchFirst := fs.Duration("bench-first", loadtest.DefaultPace.First, "with --bench: pause before the first event of each reply")
	benchEach := fs.Duration("bench-each", loadtest.DefaultPace.Each, "with --bench: pause between events")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this loopback address (off by default)")
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	fake := anthropictest.New()
	if *key != "" {
		fake.SetAPIKey(*key)
	}
	for _, f := range strings.Split(*replay, ",") {
		if f = strings.TrimSpace(f); f != "" {
			// Checked now, not at the request that would answer 500.
			if _, err := os.Stat(f); err != nil {
				return fmt.Errorf("--replay: %w", err)
			}
			fake.Enqueue(anthropictest.ReplayFile(f))
		}
	}
	if *delay > 0 {
		d := *delay
		fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
			return anthropictest.Text("(fake) you said: "+req.LastUserText(), 8).Paced(d, d)
		})
	}
	if *bench {
		fake.SetScript(loadtest.ScriptAny(loadtest.Pace{First: *benchFirst, Each: *benchEach}))
		fake.SetRecording(false) // a load test would hold every request
	}
	if *pprofAddr != "" {
		stop, err := servePprof(*pprofAddr, slog.New(slog.NewTextHandler(stderr, nil)))
		if err != nil {
			return err
		}
		defer stop()
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	srv := &http.Server{Handler: fake.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "fake Anthropic API listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fake.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
