package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd/internal/syncbuf"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSecurityEndlessToolList: a hostile server that lists page after
// page of tools coachd skips (here: schemas that are not objects, under
// 2 KB names, the same on every page) is read up to a bound, not for the whole listing timeout,
// and each skipped tool does not cost an unbounded log line.
func TestSecurityEndlessToolList(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "endless", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "ok", Description: "A tool.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	var pages atomic.Int64
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "tools/list" {
				return next(ctx, method, req)
			}
			n := pages.Add(1)
			res := &sdk.ListToolsResult{NextCursor: fmt.Sprint(n)}
			for i := range 50 {
				name := fmt.Sprintf("t%d_%s", i, strings.Repeat("x", 2000))
				res.Tools = append(res.Tools, &sdk.Tool{Name: name, InputSchema: map[string]any{"type": "string"}})
			}
			return res, nil
		}
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ts.Close)
	var logs syncbuf.Buffer
	s := mustServer(t, &Config{Name: "endless", Prefix: "endless", URL: ts.URL, Timeout: 3 * time.Second, MaxOutput: 4096},
		Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond}})
	start := time.Now()
	_, _ = s.Tools(context.Background())
	took := time.Since(start)
	if n := pages.Load(); n > 40 {
		t.Errorf("coachd read %d pages (%d tools) in %s: the listing has no bound but its timeout", n, n*50, took.Round(time.Millisecond))
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	skipped := 0
	for _, l := range lines {
		if strings.Contains(l, "mcp tool skipped") {
			skipped++
		}
		if len(l) > 1000 {
			t.Errorf("a log line of %d bytes: %.200s…", len(l), l)
			break
		}
	}
	if skipped > 20 {
		t.Errorf("%d lines logged for skipped tools", skipped)
	}
}
