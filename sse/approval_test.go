package sse_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
)

// approvalTurns are a turn that pauses for approval and the two ways it
// resumes: the approved call's result, and a denial.
func approvalTurns() []coachd.Event {
	in := json.RawMessage(`{"amount": 500, "currency":"EUR"}`)
	evs := []coachd.Event{
		{Type: coachd.EventTurnStarted, SessionID: "sess_01", MessageID: "msg_01"},
		{Type: coachd.EventTextDelta, Text: "Refunding."},
		{Type: coachd.EventToolCallStarted, ToolUseID: "toolu_01", ToolName: "billing__refund"},
		{Type: coachd.EventToolCallReady, ToolUseID: "toolu_01", ToolName: "billing__refund", Input: in},
		{Type: coachd.EventApprovalRequired, ToolUseID: "toolu_01", ToolName: "billing__refund", Input: in,
			Reason: "billing__refund needs your approval when amount > 100", ExpiresAt: time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)},
		{Type: coachd.EventTurnEnded, SessionID: "sess_01", StopReason: coachd.TurnAwaitingInput},
		// Resumed, approved.
		{Type: coachd.EventTurnStarted, SessionID: "sess_01", MessageID: "msg_02"},
		{Type: coachd.EventToolResult, ToolUseID: "toolu_01", ToolName: "billing__refund", Input: in, Result: `{"refunded":500}`},
		{Type: coachd.EventTextDelta, Text: "Done."},
		{Type: coachd.EventTurnEnded, SessionID: "sess_01", StopReason: coachd.TurnEndTurn},
		// Resumed, denied.
		{Type: coachd.EventTurnStarted, SessionID: "sess_01", MessageID: "msg_03"},
		{Type: coachd.EventToolResult, ToolUseID: "toolu_01", ToolName: "billing__refund", Input: in,
			Result: "The user denied this call: too much", IsError: true, Denied: true, Reason: "too much"},
		{Type: coachd.EventTurnEnded, SessionID: "sess_01", StopReason: coachd.TurnEndTurn},
	}
	for i := range evs {
		evs[i].Seq = int64(i + 1)
	}
	return evs
}

// writeAll runs each turn of evs through its own Writer, as the server
// does (ai-sdk keeps state across a stream's events, so only the Writer
// encodes it), and joins the streams.
func writeAll(t *testing.T, dialect string, evs []coachd.Event) []byte {
	t.Helper()
	var out []byte
	var w *sse.Writer
	var rec *httptest.ResponseRecorder
	flush := func() {
		if w != nil {
			w.Close()
			out = append(out, rec.Body.Bytes()...)
		}
	}
	for _, ev := range evs {
		if ev.Type == coachd.EventTurnStarted {
			flush()
			rec = httptest.NewRecorder()
			w = sse.NewWriter(rec, httptest.NewRequest("POST", "/", nil), dialect, -1)
		}
		if err := w.Send(ev); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	return out
}

func TestApprovalGolden(t *testing.T) {
	for _, d := range []string{sse.Coachd, sse.ASP, sse.Sage, sse.AISDK} {
		t.Run(d, func(t *testing.T) {
			got := writeAll(t, d, approvalTurns())
			path := filepath.Join("testdata", "golden", "approval-"+d+".sse")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (go test -update rewrites it)\n got:\n%s\nwant:\n%s", d, path, got, want)
			}
		})
	}
}

// TestApprovalShapes checks what each dialect's client reads of an
// approval, beyond the bytes.
func TestApprovalShapes(t *testing.T) {
	frames := func(d string) []map[string]any {
		var out []map[string]any
		for _, line := range strings.Split(string(writeAll(t, d, approvalTurns())), "\n") {
			var m map[string]any
			if data, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(data), &m) == nil {
				out = append(out, m)
			}
		}
		return out
	}
	find := func(fs []map[string]any, key, val string) map[string]any {
		for _, f := range fs {
			if v, _ := f[key].(string); v == val {
				return f
			}
		}
		return nil
	}
	t.Run("coachd", func(t *testing.T) {
		out := string(writeAll(t, sse.Coachd, approvalTurns()))
		want := "event: approval_required\ndata: {\"tool_use_id\":\"toolu_01\",\"name\":\"billing__refund\",\"input\":{\"amount\":500,\"currency\":\"EUR\"}," +
			"\"reason\":\"billing__refund needs your approval when amount > 100\",\"expires_at\":\"2026-11-30T05:00:00Z\"}\n\n"
		if !strings.Contains(out, want) {
			t.Errorf("no approval_required frame %q in\n%s", want, out)
		}
		if !strings.Contains(out, `"is_error":true,"denied":true`) {
			t.Errorf("the denial is not marked:\n%s", out)
		}
	})
	t.Run("asp", func(t *testing.T) {
		fs := frames(sse.ASP)
		a := find(fs, "type", "approval_required")
		if a == nil || a["tool_use_id"] != "toolu_01" || a["name"] != "billing__refund" || a["reason"] == "" || a["input"].(map[string]any)["amount"] != 500.0 {
			t.Fatalf("approval frame %v", a)
		}
		if _, ok := a["expires_at"]; ok {
			t.Errorf("asp's approval frame has expires_at, which is the coachd dialect's: %v", a)
		}
		if tool := find(fs, "type", "tool"); tool == nil || tool["tool_use_id"] != "toolu_01" {
			t.Fatalf("the call's tool frame is missing: %v", fs)
		}
	})
	t.Run("sage", func(t *testing.T) {
		var opts map[string]any
		for _, f := range frames(sse.Sage) {
			if o, ok := f["showOptions"].(map[string]any); ok {
				opts = o
			}
		}
		if opts == nil || opts["toolUseId"] != "toolu_01" || len(opts["options"].([]any)) != 2 || opts["options"].([]any)[0] != "Approve" {
			t.Fatalf("showOptions %v", opts)
		}
	})
	t.Run("ai-sdk", func(t *testing.T) {
		fs := frames(sse.AISDK)
		req := find(fs, "type", "tool-approval-request")
		if req == nil || req["toolCallId"] != "toolu_01" || req["approvalId"] != "toolu_01" || req["reason"] == "" {
			t.Fatalf("approval request %v", req)
		}
		if d := find(fs, "type", "tool-output-denied"); d == nil || d["toolCallId"] != "toolu_01" {
			t.Fatalf("denial %v", fs)
		}
	})
}

// TestSageApprovalShimmer: seed 002's client counts each toolCall into
// activeToolCountRef and resets it only at a roundBoundary, appending
// "\n\n" to the message there. A round that pauses for an approval must
// leave the counter at 0 (no roundBoundary follows the pause), with the
// message as before: the call's text, "\n\n", the reason.
func TestSageApprovalShimmer(t *testing.T) {
	evs := approvalTurns()[:6] // the turn that pauses
	message, count := "", 0
	for _, line := range strings.Split(string(writeAll(t, sse.Sage, evs)), "\n") {
		var f struct {
			Text          string          `json:"text"`
			ToolCall      json.RawMessage `json:"toolCall"`
			RoundBoundary bool            `json:"roundBoundary"`
		}
		if data, ok := strings.CutPrefix(line, "data: "); !ok || json.Unmarshal([]byte(data), &f) != nil {
			continue
		}
		message += f.Text
		if f.ToolCall != nil {
			count++
		}
		if f.RoundBoundary {
			message += "\n\n"
			count = 0
		}
	}
	if count != 0 {
		t.Errorf("the shimmer counter is %d after the approval pause, want 0", count)
	}
	if want := "Refunding.\n\nbilling__refund needs your approval when amount > 100: {\"amount\":500,\"currency\":\"EUR\"}"; message != want {
		t.Errorf("message %q, want %q", message, want)
	}
}
