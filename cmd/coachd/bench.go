package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"flag"

	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/loadtest"
)

const benchHelp = `Usage: coachd bench --url URL (--key KEY[,KEY...] | --admin-key KEY) [flags]

Plays full turns against a running coachd (POST /v1/chat/stream) from
parallel clients and prints turns/s, time to first text (p50, p99) and the
delay per streamed event. With --floor, the same turns are also played by
the bare Anthropic SDK against the fake upstream at that URL, nothing
stored, in slices taken in turn with coachd's, and coachd's figures are
printed as ratios to that floor.

The server's upstream must be the paced benchmark fake:
  coachd fake-anthropic --bench --addr 127.0.0.1:8090
  ANTHROPIC_BASE_URL=http://127.0.0.1:8090 ANTHROPIC_API_KEY=x coachd serve --admin-key ADMIN
  coachd bench --url http://127.0.0.1:8080 --admin-key ADMIN --floor http://127.0.0.1:8090

With --admin-key, one user per client is created (huge budget, generous
rate limit); with --key, the given keys are shared round-robin.`

// benchSlices is how many turns the floor and coachd take (interleaved)
// in each measurement.
const benchSlices = 3

func runBench(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", benchHelp)
	url := fs.String("url", "", "coachd base URL (required)")
	keys := fs.String("key", "", "comma-separated user API keys")
	admin := new(string)
	secretVar(fs, admin, "admin-key", getenv("COACHD_ADMIN_KEY"), "admin `key`: create one user per client (env COACHD_ADMIN_KEY)")
	floor := fs.String("floor", "", "the fake upstream's URL: also measure the bare SDK against it")
	clients := fs.String("clients", "1,8", "comma-separated client counts")
	kinds := fs.String("kinds", "plain,tool", "turn kinds: plain (text), tool (a save_note round, then text)")
	dur := fs.Duration("duration", 5*time.Second, "how long each measurement runs")
	agentName := fs.String("agent", "", "the agent to talk to (default: the server's)")
	model := fs.String("model", anthropic.DefaultModel, "the model the floor asks for")
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	if *url == "" || (*keys == "" && *admin == "") {
		return benchUsage(fs, stderr, "--url and one of --key or --admin-key are required")
	}
	counts, err := intList(*clients)
	if err != nil {
		return benchUsage(fs, stderr, "--clients: "+err.Error())
	}
	var ks []loadtest.Kind
	for _, k := range splitList(*kinds) {
		if kind := loadtest.Kind(k); kind != loadtest.Plain && kind != loadtest.Tool {
			return benchUsage(fs, stderr, fmt.Sprintf("--kinds: unknown kind %q", k))
		}
		ks = append(ks, loadtest.Kind(k))
	}
	userKeys := splitList(*keys)
	if len(userKeys) == 0 {
		if userKeys, err = benchUsers(ctx, *url, *admin, slices.Max(counts)); err != nil {
			return err
		}
	}
	for _, kind := range ks {
		for _, n := range counts {
			fmt.Fprintf(stdout, "\n== %s turns, %d client(s), %s each\n", kind, n, *dur)
			coachd := loadtest.NewCoachd(*url, userKeys, kind, n)
			coachd.Agent = *agentName
			targets := []loadtest.Named{{Name: "coachd", Target: coachd}}
			if *floor != "" {
				floorT := loadtest.Named{Name: "bare SDK (floor)", Target: loadtest.NewDirect(*floor, *model, kind, n)}
				targets = append([]loadtest.Named{floorT}, targets...)
			}
			results := loadtest.Compare(ctx, n, *dur, benchSlices, targets...)
			var floors []*loadtest.Result
			if *floor != "" {
				floors = append(floors, &results[0])
			}
			loadtest.Report(stdout, floors, results...)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	return nil
}

// benchUsers creates n users through the admin API and returns their keys.
func benchUsers(ctx context.Context, url, admin string, n int) ([]string, error) {
	url = strings.TrimRight(url, "/")
	stamp := time.Now().UnixNano()
	keys := make([]string, n)
	for i := range keys {
		var u struct {
			ID     string `json:"id"`
			APIKey string `json:"api_key"`
		}
		body := fmt.Sprintf(`{"name":"bench-%d-%d","token_budget":%d}`, stamp, i, int64(1)<<50)
		if err := benchCall(ctx, http.MethodPost, url+"/v1/users", admin, body, &u); err != nil {
			return nil, fmt.Errorf("creating bench users: %w", err)
		}
		if err := benchCall(ctx, http.MethodPatch, url+"/v1/users/"+u.ID, admin, `{"rate_limit":"1000000/60s"}`, nil); err != nil {
			return nil, fmt.Errorf("raising the bench user's rate limit: %w", err)
		}
		keys[i] = u.APIKey
	}
	return keys, nil
}

func benchCall(ctx context.Context, method, url, key, body string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: status %d: %s", method, url, resp.StatusCode, bytes.TrimSpace(raw))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 10000 {
			return nil, fmt.Errorf("%q is not a count from 1 to 10000", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no count given")
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// benchUsage reports a bad command line with the usage.
func benchUsage(fs *flag.FlagSet, stderr io.Writer, msg string) error {
	fmt.Fprintf(stderr, "coachd bench: %s\n", msg)
	fs.SetOutput(stderr)
	fs.Usage()
	return errUsage
}
