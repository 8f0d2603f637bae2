package tools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// TestWebhookBadInput is the webhook-response surface's bad-input table
// (issue 18): every answer a broken or hostile webhook endpoint can give.
// Each row is either an is_error tool result (clear text, bounded, no NUL,
// valid UTF-8, secrets absent) or, when the body is well-formed text the
// app chose to send, that text verbatim: coachd never decodes a webhook's
// body, so duplicate keys or 1e400 are the app's business and the model
// reads them as they came. No row may take longer than the tool's timeout
// (plus a margin), and none may read past max_response_bytes.
//
//	go test ./tools -run WebhookBadInput -v
func TestWebhookBadInput(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	type row struct {
		name     string
		handler  http.HandlerFunc
		raw      func(c net.Conn) // a raw TCP answer instead of a handler
		extra    string           // added to the tool file
		want     string           // in the is_error content; "" means passed verbatim
		verbatim string           // the body expected verbatim when want is ""
	}
	jsonBody := func(ct, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			io.WriteString(w, body)
		}
	}
	status := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(code)
			io.WriteString(w, body)
		}
	}
	rows := []row{
		{name: "400", handler: status(400, `{"error":"zone is required"}`), want: `HTTP 400: {"error":"zone is required"}`},
		{name: "404", handler: status(404, "no such zone"), want: "HTTP 404: no such zone"},
		{name: "500HugeBody", handler: status(500, strings.Repeat("stack frame\n", 5000)), want: "HTTP 500: stack frame"},
		{name: "503InvalidUTF8AndNUL", handler: status(503, "down\xff\xfe\x00for maintenance"), want: "HTTP 503: down"},
		{name: "429", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "99999999999999999999")
			status(429, "slow down")(w, r)
		}, want: "HTTP 429: slow down"},
		{name: "WrongContentTypeBinary", handler: jsonBody("image/png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"), want: "not text"},
		{name: "WrongContentTypeHTML", handler: jsonBody("text/html", "<html><body>Sign in</body></html>"),
			verbatim: "<html><body>Sign in</body></html>"},
		{name: "InvalidJSON", handler: jsonBody("application/json", `{"zone":`), want: "not valid JSON"},
		{name: "TrailingGarbage", handler: jsonBody("application/json", `{"zone":"A"} trailing`), want: "not valid JSON"},
		{name: "TrailingSecondValue", handler: jsonBody("application/problem+json; charset=utf-8", `{"a":1}{"b":2}`), want: "not valid JSON"},
		{name: "Deep100000", extra: "max_response_bytes: 4194304\n", handler: jsonBody("application/json", deep), want: "not valid JSON"},
		{name: "Deep100000AsText", extra: "max_response_bytes: 4194304\n", handler: jsonBody("text/plain", deep), verbatim: deep},
		{name: "InvalidUTF8", handler: jsonBody("application/json", "{\"zone\":\"\xff\xfe\"}"), want: "not text"},
		{name: "NULByte", handler: jsonBody("text/plain", "zone\x00A"), want: "NUL"},
		{name: "EscapedNUL", handler: jsonBody("application/json", `{"zone":"\u0000"}`), verbatim: `{"zone":"\u0000"}`},
		{name: "DuplicateKeys", handler: jsonBody("application/json", `{"zone":"A","zone":"B"}`), verbatim: `{"zone":"A","zone":"B"}`},
		{name: "HugeNumbers", handler: jsonBody("application/json", `{"depth":1e400,"id":123456789012345678901234567890}`),
			verbatim: `{"depth":1e400,"id":123456789012345678901234567890}`},
		{name: "PastSizeCap", extra: "max_response_bytes: 1024\n", handler: jsonBody("text/plain", strings.Repeat("x", 1025)),
			want: "larger than 1024 bytes"},
		{name: "NeverEnds", extra: "max_response_bytes: 65536\n", handler: func(w http.ResponseWriter, r *http.Request) {
			chunk := []byte(strings.Repeat("y", 4096))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, want: "larger than 65536 bytes"},
		{name: "DribbledPastTimeout", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			tick := time.NewTicker(time.Second) // one byte a second, for ever
			defer tick.Stop()
			for {
				if _, err := w.Write([]byte("z")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
			}
		}, want: "did not answer within 1.5s"},
		{name: "HeadersNeverSent", raw: func(c net.Conn) {
			io.Copy(io.Discard, c) // reads the request, answers nothing, until the client hangs up
		}, want: "did not answer within 1.5s"},
		{name: "HalfAHeaderThenSilence", raw: func(c net.Conn) {
			readRequest(c)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Ty")
			io.Copy(io.Discard, c)
		}, want: "did not answer within 1.5s"},
		{name: "RedirectToAnotherHost", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://attacker.example/collect", http.StatusTemporaryRedirect)
		}, want: "redirect (HTTP 307)"},
		{name: "CutBeforeHeaders", raw: func(c net.Conn) {
			readRequest(c)
		}, want: "could not be reached"},
		{name: "CutMidBody", raw: func(c net.Conn) {
			readRequest(c)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"zone\":")
		}, want: "reading the response failed"},
		{name: "CutMidChunk", raw: func(c net.Conn) {
			readRequest(c)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"zo")
		}, want: "reading the response failed"},
		{name: "GarbageStatusLine", raw: func(c net.Conn) {
			readRequest(c)
			io.WriteString(c, "SMTP READY\x00\xff\r\n\r\n")
		}, want: "could not be reached"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			url := serve(t, r.handler, r.raw)
			w := hook(t, url+"/zones?token=${ZONE_KEY}", "timeout: 1500ms\n"+r.extra)
			start := time.Now()
			res, err := w.Execute(context.Background(), coachd.ToolCall{ID: "toolu_1", Input: json.RawMessage(`{"zone":"A"}`)}, env)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("Execute returned an error instead of a tool result: %v", err)
			}
			if took > timeout+time.Second {
				t.Fatalf("took %s, past the tool's timeout of %s", took, timeout)
			}
			if r.want == "" {
				if res.IsError || res.Content != r.verbatim {
					t.Fatalf("want the body verbatim, got is_error=%v %q", res.IsError, clip(res.Content))
				}
				return
			}
			if !res.IsError || !strings.Contains(res.Content, r.want) {
				t.Fatalf("want an is_error result containing %q, got is_error=%v %q", r.want, res.IsError, clip(res.Content))
			}
			if !strings.HasPrefix(res.Content, "lookup_zone: ") {
				t.Errorf("the error does not name the tool: %q", clip(res.Content))
			}
			if len(res.Content) > 1024 || !utf8.ValidString(res.Content) || strings.ContainsRune(res.Content, 0) {
				t.Errorf("the error is not short clean text (%d bytes): %q", len(res.Content), clip(res.Content))
			}
			if strings.Contains(res.Content, "s3cret") {
				t.Errorf("the secret is in the result: %q", res.Content)
			}
		})
	}
}

// TestWebhookBadInputMemory: a body that never ends costs about
// max_response_bytes, not what the endpoint sends.
func TestWebhookBadInputMemory(t *testing.T) {
	const limit = 64 << 10
	chunk := []byte(strings.Repeat("y", 32<<10))
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}, nil)
	w := hook(t, url, "max_response_bytes: 65536\n")
	call(t, w, `{}`) // warm the transport
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := call(t, w, `{}`)
	runtime.ReadMemStats(&after)
	if !res.IsError || !strings.Contains(res.Content, "larger than 65536 bytes") {
		t.Fatalf("%+v", res)
	}
	// io.ReadAll's doubling buffer reaches ~2× the limit; the transport's
	// buffers add a few KiB. The endpoint sent far more (it never stops).
	if got := after.TotalAlloc - before.TotalAlloc; got > 8*limit {
		t.Fatalf("one call allocated %d bytes; want ≤ %d for a %d-byte limit", got, 8*limit, limit)
	} else {
		t.Logf("a never-ending body cost %d bytes allocated (limit %d)", got, limit)
	}
}

// serve starts a loopback endpoint: an http.Handler, or a raw TCP answer.
func serve(t *testing.T, h http.HandlerFunc, raw func(net.Conn)) string {
	t.Helper()
	if raw == nil {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				raw(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String()
}

// readRequest consumes one request's head and body from c.
func readRequest(c net.Conn) {
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err == nil {
		io.Copy(io.Discard, req.Body)
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
