package anthropic_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
)

func TestCountTokens(t *testing.T) {
	srv := MustServer(t)
	m := newModel(srv, anthropic.Config{MaxRetries: -1})
	req := hello()
	req.System = []coachd.Block{coachd.TextBlock("Be brief.")}
	req.Tools = []coachd.ToolSpec{{Name: "get_weather", Description: "Weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}

	srv.SetCount(777)
	n, err := m.CountTokens(context.Background(), req)
	if err != nil || n != 777 {
		t.Fatalf("got %d, %v", n, err)
	}
	reqs := srv.Requests()
	got := reqs[len(reqs)-1]
	if got.Path != "/v1/messages/count_tokens" {
		t.Fatalf("path %s", got.Path)
	}
	for _, k := range []string{"model", "messages", "system", "tools"} {
		if _, ok := got.Body[k]; !ok {
			t.Errorf("count request lacks %s: %s", k, got.Raw)
		}
	}
	if _, ok := got.Body["max_tokens"]; ok {
		t.Errorf("count request has max_tokens: %s", got.Raw)
	}

	srv.SetCount(-1)
	if _, err := m.CountTokens(context.Background(), req); coachd.ErrorCode(err) != coachd.EUPSTREAMBUSY {
		t.Fatalf("overloaded: got %v", err)
	}
}
