package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeEnv, set to "stdio", makes the test binary the fake MCP server.
const fakeEnv = "COACHD_MCP_FAKE"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "orphan" {
		orphan()
	}
	if os.Getenv(fakeEnv) == "raw" {
		rawServer()
	}
	if os.Getenv(fakeEnv) == "rawhttp" {
		rawHTTPServer()
	}
	if os.Getenv(fakeEnv) == "parent" {
		coachdLike()
	}
	if os.Getenv(fakeEnv) == "stdio" {
		// A slow start (a cold npx download, a JVM): answer nothing until then.
		if d, err := time.ParseDuration(os.Getenv("COACHD_MCP_FAKE_DELAY")); err == nil {
			time.Sleep(d)
		}
		if os.Getenv("COACHD_MCP_FAKE_CHATTY") != "" { // a server that logs its settings
			fmt.Fprintln(os.Stderr, "fake server: starting with token "+os.Getenv("MCP_FAKE_TOKEN")+" in "+os.Getenv("MCP_FAKE_DIR")+
				", args "+strings.Join(os.Args[1:], " ")+", log level debug")
		}
		holdLine()
		var t sdk.Transport = &sdk.StdioTransport{}
		if os.Getenv(deafEnv) != "" {
			t = &sdk.IOTransport{Reader: deafStdin(), Writer: os.Stdout}
		}
		if err := fakeServer().Run(context.Background(), t); err != nil {
			fmt.Fprintln(os.Stderr, "fake server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeServer is a small MCP server: echo (with the request's _meta), a
// failing tool, a hanging one, one that kills its process, a huge
// result, its environment, and a tool whose name the model API refuses.
func fakeServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	add := func(name, desc string, h func(ctx context.Context, args map[string]any, meta sdk.Meta) (*sdk.CallToolResult, error)) {
		schema := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
		if name == "echo" {
			schema["required"] = []string{"text"}
		}
		s.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: schema},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				var args map[string]any
				json.Unmarshal(req.Params.Arguments, &args)
				return h(ctx, args, req.Params.Meta)
			})
	}
	text := func(s string, isErr bool) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}, IsError: isErr}, nil
	}
	add("echo", "Echo the text.", func(_ context.Context, a map[string]any, meta sdk.Meta) (*sdk.CallToolResult, error) {
		return text(fmt.Sprintf("echo: %v user=%v session=%v", a["text"], meta[MetaUser], meta[MetaSession]), false)
	})
	add("fail", "Always fails.", func(context.Context, map[string]any, sdk.Meta) (*sdk.CallToolResult, error) {
		return text("the widget is broken", true)
	})
	add("hang", "Never answers.", func(ctx context.Context, _ map[string]any, _ sdk.Meta) (*sdk.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "hang: called") // the call is under way (TestCloseEndsCallUnderWay)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	add("crash", "Kills the server.", func(context.Context, map[string]any, sdk.Meta) (*sdk.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	add("huge", "A 200 KB answer.", func(context.Context, map[string]any, sdk.Meta) (*sdk.CallToolResult, error) {
		return text(strings.Repeat("é", 100_000), false)
	})
	add("env", "The server's environment.", func(context.Context, map[string]any, sdk.Meta) (*sdk.CallToolResult, error) {
		return text("token="+os.Getenv("MCP_FAKE_TOKEN")+" secret="+os.Getenv("COACHD_TEST_SECRET"), false)
	})
	add("pid", "The server's process id.", func(context.Context, map[string]any, sdk.Meta) (*sdk.CallToolResult, error) {
		return text(strconv.Itoa(os.Getpid()), false)
	})
	add("bad.name", "A name the Messages API refuses.", func(context.Context, map[string]any, sdk.Meta) (*sdk.CallToolResult, error) {
		return text("unreachable", false)
	})
	if os.Getenv(spawnEnv) != "" {
		add("spawn", "Starts a helper process that outlives stdin's end.", func(context.Context, map[string]any, sdk.Meta) (*sdk.CallToolResult, error) {
			return text(spawnOrphan())
		})
	}
	return s
}

// stdioConfig runs the test binary as the fake server.
func stdioConfig(t testing.TB) *Config {
	t.Helper()
	return &Config{Name: "fake", Prefix: "fake", Command: os.Args[0], Dir: t.TempDir(),
		Env:     map[string]string{fakeEnv: "stdio", "MCP_FAKE_TOKEN": "tok-123"},
		Timeout: 3 * time.Second, MaxOutput: 4096}
}

// httpConfig serves the fake server over streamable HTTP behind a header
// check, and returns a config that sends the header.
func httpConfig(t testing.TB) *Config {
	t.Helper()
	srv := fakeServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "k-456" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return &Config{Name: "remote", Prefix: "fake", URL: ts.URL, Headers: http.Header{"X-Api-Key": {"k-456"}},
		Timeout: 3 * time.Second, MaxOutput: 4096}
}
