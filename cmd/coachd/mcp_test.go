package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coachd/coachd/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerClient is an HTTP client that sends a user's key.
func bearerClient(key string) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+key)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// stdioSession runs "coachd mcp" in-process on pipes and connects the Go
// SDK's client to it.
func stdioSession(t *testing.T, url, key string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		done <- runMCP(ctx, []string{"--url", url}, getenvFrom(map[string]string{"COACHD_KEY": key}), inR, outW, &stderr)
		outW.Close()
	}()
	sess, err := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil).
		Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect to coachd mcp: %v (stderr %s)", err, stderr.String())
	}
	t.Cleanup(func() {
		sess.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("coachd mcp did not stop")
		}
	})
	return sess
}

func callText(t *testing.T, sess *sdk.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String(), res.IsError
}

// mustCreateRichUser runs "coachd users create" with a budget for a
// few turns and returns the key.
func mustCreateRichUser(t *testing.T, dbPath, name string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "users", "create", "--name", name, "--budget", "1000000"}, getenvFrom(map[string]string{"COACHD_DB": dbPath}), &stdout, &stderr); err != nil {
		t.Fatalf("users create: %v\n%s", err, stderr.String())
	}
	return strings.TrimSuffix(stdout.String(), "\n")
}

// TestMCPServe: coachd serves a user's notes and coaches over MCP, on
// stdio (coachd mcp) and streamable HTTP (/v1/mcp), each user seeing only
// their own.
func TestMCPServe(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	keyA := mustCreateRichUser(t, dbPath, "ada")
	keyB := mustCreateRichUser(t, dbPath, "bob")
	p := MustServe(t, map[string]string{"COACHD_DB": dbPath}, "--addr", "127.0.0.1:0")
	sess := stdioSession(t, p.url, keyA)

	t.Run("ListTools", func(t *testing.T) {
		var names []string
		for tool, err := range sess.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		got := strings.Join(names, ",")
		for _, want := range []string{"save_note", "list_notes", mcp.ChatTool} {
			if !strings.Contains(got, want) {
				t.Errorf("tools %s lack %s", got, want)
			}
		}
		// Interactive and lifecycle tools are not a client's to run.
		if strings.Contains(got, "show_options") || strings.Contains(got, "complete_session") {
			t.Errorf("tools = %s", got)
		}
	})
	t.Run("SaveAndRead", func(t *testing.T) {
		text, isErr := callText(t, sess, "save_note", map[string]any{"note_type": "preference", "title": "Mornings", "content": "Ada drives best before 9am."})
		if isErr {
			t.Fatalf("save_note: %s", text)
		}
		text, isErr = callText(t, sess, "list_notes", map[string]any{})
		if isErr || !strings.Contains(text, "Ada drives best before 9am.") {
			t.Fatalf("list_notes = %s (error %v)", text, isErr)
		}
	})
	t.Run("InvalidInput", func(t *testing.T) {
		text, isErr := callText(t, sess, "save_note", map[string]any{"title": "x"})
		if !isErr || !strings.Contains(text, "content") {
			t.Fatalf("save_note without content = %s (error %v)", text, isErr)
		}
	})
	t.Run("Chat", func(t *testing.T) {
		res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ChatTool, Arguments: map[string]any{"message": "Hello coach"}})
		if err != nil || res.IsError {
			t.Fatalf("chat: %v %+v %s", err, res, res.Content[0].(*sdk.TextContent).Text)
		}
		out, _ := res.StructuredContent.(map[string]any)
		sid, _ := out["session_id"].(string)
		if !strings.HasPrefix(sid, "sess_") || out["text"] == "" {
			t.Fatalf("chat = %+v", res.StructuredContent)
		}
		res, err = sess.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ChatTool, Arguments: map[string]any{"message": "And again", "session_id": sid}})
		if err != nil || res.IsError {
			t.Fatalf("second chat: %v %+v", err, res)
		}
		if out, _ := res.StructuredContent.(map[string]any); out["session_id"] != sid {
			t.Errorf("second chat went to %v, want %s", out["session_id"], sid)
		}
	})
	t.Run("OtherUser", func(t *testing.T) {
		c := sdk.NewClient(&sdk.Implementation{Name: "other", Version: "1"}, nil)
		other, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: p.url + "/v1/mcp", HTTPClient: bearerClient(keyB), DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		text, isErr := callText(t, other, "list_notes", map[string]any{})
		if isErr || strings.Contains(text, "9am") {
			t.Fatalf("bob's list_notes = %s", text)
		}
	})
	t.Run("ErrNoKey", func(t *testing.T) {
		c := sdk.NewClient(&sdk.Implementation{Name: "anon", Version: "1"}, nil)
		_, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: p.url + "/v1/mcp", MaxRetries: -1, DisableStandaloneSSE: true}, nil)
		if err == nil {
			t.Fatal("connected without a key")
		}
		_, err = c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: p.url + "/v1/mcp?agent=nope", HTTPClient: bearerClient(keyA), MaxRetries: -1, DisableStandaloneSSE: true}, nil)
		if err == nil {
			t.Fatal("connected to an unknown agent")
		}
		req, _ := http.NewRequest("POST", p.url+"/v1/mcp?agent=nope", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+keyA)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(raw), `"agent"`) {
			t.Errorf("unknown agent: %d %s", resp.StatusCode, raw)
		}
		err = run(context.Background(), []string{"coachd", "mcp", "--url", p.url, "--key", "ck_wrong"}, getenvFrom(nil), io.Discard, io.Discard)
		if err == nil {
			t.Fatal("coachd mcp with a wrong key started")
		}
	})
}

func TestMCPHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "mcp", "-h"}, getenvFrom(nil), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: coachd mcp", "-url", "-key", "COACHD_KEY", "/v1/mcp"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("coachd mcp -h lacks %q:\n%s", want, stdout.String())
		}
	}
	if err := run(context.Background(), []string{"coachd", "mcp"}, getenvFrom(nil), io.Discard, io.Discard); err != errUsage {
		t.Errorf("without a key: %v, want the usage error", err)
	}
}

// TestPackValidateMCP: coachd pack validate reports a bad MCP server file
// and an agent's unknown server.
func TestPackValidateMCP(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\nmcp: {servers: [crm, ghost]}\n---\nYou coach.\n",
		"mcp/crm.yaml":    "name: crm\nurl: https://crm.example/mcp\nheaders: {Authorization: \"Bearer ${CRM_TOKEN}\"}\nmax_output: 10\n",
	})
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard)
	if err == nil {
		t.Fatal("a bad pack validated")
	}
	for _, want := range []string{
		"mcp/crm.yaml:3: environment variable CRM_TOKEN is not set",
		"mcp/crm.yaml:4: max_output must be between 256",
		`agents/coach.md:4: unknown MCP server "ghost"`,
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("missing %q in:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	os.WriteFile(filepath.Join(dir, "agents/coach.md"), []byte("---\nname: coach\ndescription: A coach.\nmcp: {servers: [crm]}\n---\nYou coach.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "mcp/crm.yaml"), []byte("name: crm\nurl: https://crm.example/mcp\n"), 0o644)
	if err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "1 MCP servers") {
		t.Errorf("validate = %s", stdout.String())
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"coachd", "pack", "list", dir}, getenvFrom(nil), &stdout, io.Discard); err != nil ||
		!strings.Contains(stdout.String(), "MCP SERVERS\n  crm  agents: coach") {
		t.Errorf("pack list: %v\n%s", err, stdout.String())
	}
	// An HTTP server on a loopback address needs the operator's leave,
	// as a webhook does.
	os.WriteFile(filepath.Join(dir, "mcp/crm.yaml"), []byte("name: crm\nurl: http://127.0.0.1:9/mcp\n"), 0o644)
	stdout.Reset()
	if err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), &stdout, io.Discard); err == nil ||
		!strings.Contains(stdout.String(), "mcp/crm.yaml: url: ") {
		t.Errorf("loopback url: %v\n%s", err, stdout.String())
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(map[string]string{"COACHD_WEBHOOK_ALLOW": "127.0.0.1/32"}), &stdout, io.Discard); err != nil {
		t.Errorf("loopback url allowed: %v\n%s", err, stdout.String())
	}
}

// fakeMCPEnv, set to "stdio", makes the test binary an MCP server with a
// pid tool (TestMain).
const fakeMCPEnv = "COACHD_MCP_FAKE"

func runFakeMCP() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "pid", Description: "The server's process id.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// TestServeMCPPack: coachd serve --pack starts a pack's stdio MCP server
// on first use (not at boot), serves its tools to the agent that mounts
// it, and stops it when coachd shuts down.
func TestServeMCPPack(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\ntools: [save_note]\nmcp: {servers: [fake]}\n---\nYou coach.\n",
		"mcp/fake.yaml":   "name: fake\ncommand: ${COACHD_TEST_BIN}\nenv: {" + fakeMCPEnv + ": stdio}\n",
	})
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	key := mustCreateRichUser(t, dbPath, "ada")
	p := MustServe(t, map[string]string{"COACHD_DB": dbPath, "COACHD_PACK": dir, "COACHD_TEST_BIN": os.Args[0]}, "--addr", "127.0.0.1:0")
	if strings.Contains(p.stderr.String(), "mcp server started") {
		t.Errorf("the MCP server started at boot:\n%s", p.stderr)
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	// A turn waits 2 s for the server to start; a loaded machine may take
	// longer, and a later listing has its tools.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code := call(t, "GET", p.url+"/v1/tools?agent=coach", key, "", nil, &list)
		if code == 200 && slices.ContainsFunc(list.Tools, func(tl struct{ Name string }) bool { return tl.Name == "fake__pid" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools: %d %+v", code, list)
		}
	}
	if !strings.Contains(p.stderr.String(), "mcp server started") {
		t.Errorf("no start logged:\n%s", p.stderr)
	}
	var out struct {
		Result  string `json:"result"`
		IsError bool   `json:"is_error"`
	}
	code := call(t, "POST", p.url+"/v1/tools/execute", key, `{"tool_name":"fake__pid","agent":"coach"}`, nil, &out)
	pid, err := strconv.Atoi(out.Result)
	if code != 200 || out.IsError || err != nil || pid <= 0 {
		t.Fatalf("execute: %d %+v", code, out)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("server process %d: %v", pid, err)
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d still there after coachd stopped: %v", pid, err)
	}
}
