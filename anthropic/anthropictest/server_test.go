package anthropictest_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

func post(t *testing.T, srv *anthropictest.Server, path, body string, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL()+path, strings.NewReader(body))
	req.Header.Set("x-api-key", "k")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("content-type", "application/json")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultTransport.RoundTrip(req) // no transparent gunzip
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

func TestValidation(t *testing.T) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	user := `{"role":"user","content":"hi"}`
	use := `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]}`
	tests := []struct {
		name, body, want string
		hdr              map[string]string
		status           int
	}{
		{"ErrNoKey", `{}`, "x-api-key header is required", map[string]string{"x-api-key": ""}, 401},
		{"ErrNoVersion", `{}`, "anthropic-version", map[string]string{"anthropic-version": ""}, 400},
		{"ErrJSON", `{`, "not valid JSON", nil, 400},
		{"ErrMaxTokens", `{"model":"m","messages":[` + user + `]}`, "max_tokens: Field required", nil, 400},
		{"ErrEmpty", `{"model":"m","max_tokens":5,"messages":[]}`, "at least one message", nil, 400},
		{"ErrFirstAssistant", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":"x"}]}`, "first message", nil, 400},
		{"ErrUnansweredToolUse", `{"model":"m","max_tokens":5,"messages":[` + user + `,` + use + `,` + user + `]}`, "without `tool_result`", nil, 400},
		{"ErrTrailingToolUse", `{"model":"m","max_tokens":5,"messages":[` + user + `,` + use + `]}`, "without `tool_result`", nil, 400},
		{"ErrStrayToolResult", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"r"}]}]}`, "unexpected `tool_use_id`", nil, 400},
		{"ErrBudget", `{"model":"m","max_tokens":5,"thinking":{"type":"enabled","budget_tokens":100},"messages":[` + user + `]}`, "budget_tokens", nil, 400},
		{"OK", `{"model":"m","max_tokens":5,"messages":[` + user + `,` + use + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}]}`, `"type":"message"`, nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, hdr, body := post(t, srv, "/v1/messages", tt.body, tt.hdr)
			if status != tt.status || !strings.Contains(string(body), tt.want) {
				t.Fatalf("%d %s, want %d containing %q", status, body, tt.status, tt.want)
			}
			if status != 200 {
				var e struct {
					Type      string `json:"type"`
					RequestID string `json:"request_id"`
					Error     struct{ Type, Message string }
				}
				if json.Unmarshal(body, &e) != nil || e.Type != "error" || e.Error.Type == "" || e.RequestID != hdr.Get("request-id") {
					t.Errorf("error body %s does not have the API's shape", body)
				}
			}
		})
	}
	if got := len(srv.Requests()); got != len(tests) {
		t.Errorf("recorded %d requests, want %d", got, len(tests))
	}
}

func TestNonStreaming(t *testing.T) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	srv.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("hi", 1), anthropictest.ToolUse("toolu_1", "f", `{"a":1}`, 3)))
	status, _, body := post(t, srv, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, nil)
	want := `"content":[{"text":"hi","type":"text"},{"id":"toolu_1","input":{"a":1},"name":"f","type":"tool_use"}]`
	if status != 200 || !strings.Contains(string(body), want) || !strings.Contains(string(body), `"stop_reason":"tool_use"`) {
		t.Errorf("%d %s", status, body)
	}
	status, _, body = post(t, srv, "/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hello there"}]}`, nil)
	if status != 200 || !strings.Contains(string(body), `"input_tokens":`) {
		t.Errorf("count_tokens: %d %s", status, body)
	}
}

func TestScriptAndGzip(t *testing.T) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	srv.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		if len(r.ToolResults()) == 0 {
			return anthropictest.Blocks(anthropictest.ToolUse("toolu_1", "f", `{}`))
		}
		return anthropictest.Text("done: "+r.ToolResults()[0].ResultText(), 0).Gzipped().Padded()
	})
	status, _, body := post(t, srv, "/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
	if status != 200 || !strings.Contains(string(body), "event: content_block_start") || !strings.Contains(string(body), `"tool_use"`) {
		t.Fatalf("%d %s", status, body)
	}
	msgs := `[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"42"}]}]`
	status, hdr, body := post(t, srv, "/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":`+msgs+`}`,
		map[string]string{"accept-encoding": "gzip"})
	if status != 200 || hdr.Get("content-encoding") != "gzip" {
		t.Fatalf("%d %v", status, hdr)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	evs, err := anthropictest.ParseSSE(bytes.NewReader(plain))
	if err != nil || len(evs) == 0 || !strings.Contains(string(plain), `"done: 42"`) || !strings.Contains(string(plain), "  }") {
		t.Errorf("gzipped padded stream: %v %s", err, plain)
	}
}
