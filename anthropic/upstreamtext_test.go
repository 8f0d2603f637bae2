package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/modeltest"
)

// hostileError is an error body whose type and message an upstream (a
// gateway in front of the API) made long, multi-byte and full of control
// characters: an ANSI escape, a NUL, a line break that forges a log line.
// It is under the 64 KiB of an error body coachd reads.
func hostileError(t *testing.T) (typ, msg, body string) {
	t.Helper()
	typ = "gateway_error\x1b[31m\nlevel=ERROR forged=1 " + strings.Repeat("é", 5000)
	msg = "upstream said:\x00\r\n" + strings.Repeat("ü", 20000)
	b, err := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	if err != nil {
		t.Fatal(err)
	}
	return typ, msg, string(b)
}

// checkBounded is modeltest.CheckBoundedError for an upstream's gateway_error.
func checkBounded(t *testing.T, err error, wantPrefix string) {
	t.Helper()
	modeltest.CheckBoundedError(t, err, wantPrefix+"gateway_error", "upstream said:")
}

// TestSecurityUpstreamErrorTextBounded: the error type an upstream puts
// in its body was echoed whole into the client's error message ("model
// rejected the request (<type>)"), and the SDK's error text, logged as
// the cause, carried the whole body: 100 KB of a gateway's text, its
// control characters (a forged log line, a terminal escape) included.
func TestSecurityUpstreamErrorTextBounded(t *testing.T) {
	_, _, body := hostileError(t)
	eachPath(t, func(t *testing.T, untraced bool) {
		t.Run("Status", func(t *testing.T) {
			srv := MustServer(t)
			srv.Enqueue(anthropictest.Status(http.StatusBadRequest, nil, body))
			m := newModel(srv, anthropic.Config{Untraced: untraced})
			_, _, err := drain(m.Stream(context.Background(), hello()))
			checkBounded(t, err, "model rejected the request (")
		})
		t.Run("ErrorEvent", func(t *testing.T) {
			typ, msg, _ := hostileError(t)
			srv := MustServer(t)
			srv.Enqueue(anthropictest.Text("Hi there", 3).ErrorAfter(2, typ, msg))
			m := newModel(srv, anthropic.Config{Untraced: untraced})
			_, _, err := drain(m.Stream(context.Background(), hello()))
			checkBounded(t, err, "model request failed (")
		})
	})
}

// TestSecurityErrorBodyCapped: the SDK reads an error answer's body whole
// into the error it returns (and kept it there for the log): a gateway
// answering 8 MiB, or endlessly, cost that much memory per failed call.
// coachd reads at most 64 KiB of it; the status still classifies it.
func TestSecurityErrorBodyCapped(t *testing.T) {
	body := `{"type":"error","error":{"type":"api_error","message":"` + strings.Repeat("x", 8<<20) + `"}}`
	eachPath(t, func(t *testing.T, untraced bool) {
		srv := MustServer(t)
		srv.Enqueue(anthropictest.Status(http.StatusServiceUnavailable, nil, body))
		m := newModel(srv, anthropic.Config{Untraced: untraced})
		_, _, err := drain(m.Stream(context.Background(), hello()))
		if coachd.ErrorCode(err) != coachd.EUPSTREAMBUSY {
			t.Fatalf("err = %v, want %s", err, coachd.EUPSTREAMBUSY)
		}
		var apiErr *sdk.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("the SDK's error is no longer found in %T", err)
		}
		if n := len(apiErr.RawJSON()); n > 64<<10 {
			t.Errorf("the error holds %d bytes of the body, want at most 64 KiB", n)
		}
	})
}
