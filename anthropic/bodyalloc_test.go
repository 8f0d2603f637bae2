package anthropic_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
)

// TestBodyWithPhotosAllocatedOnce: a history's photos are megabytes of
// base64 sent on every round. The body's buffer started at most 1 MiB and
// grew to them by append, a quarter at a time: for 19 MB of photos it
// allocated about 95 MB. It is sized for the request's attachments at
// once.
func TestBodyWithPhotosAllocatedOnce(t *testing.T) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n)
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"seen"}}`)
	}))
	defer srv.Close()
	m := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL, MaxRetries: -1, Untraced: true})
	var msgs []coachd.ModelMessage
	for i := range 20 {
		photo := coachd.AttachmentBlock(coachd.MediaJPEG, "", bytes.Repeat([]byte{byte(i)}, 700<<10))
		msgs = append(msgs, coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock("today's")}},
			coachd.ModelMessage{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}})
	}
	msgs = append(msgs, coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("and this week?")}})
	req := &coachd.ModelRequest{Model: "claude-sonnet-4-5", MaxTokens: 100, Messages: msgs}
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	_, _, err := drain(m.Stream(context.Background(), req))
	runtime.ReadMemStats(&b)
	if err == nil || got.Load() == 0 {
		t.Fatalf("the request did not reach the server: %v", err)
	}
	body, alloc := got.Load(), int64(b.TotalAlloc-a.TotalAlloc)
	t.Logf("a body of %d MB allocated %d MB", body>>20, alloc>>20)
	if alloc > 2*body {
		t.Errorf("a body of %d MB allocated %d MB", body>>20, alloc>>20)
	}
}
