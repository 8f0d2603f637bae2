package anthropic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// decodeBody drains a stream over a 200 text/event-stream response with
// body, decoded by coachd (fast) or by the SDK's ssestream, as the two
// paths of Model.Stream do.
func decodeBody(tb testing.TB, body []byte, fast bool) ([]coachd.ModelEvent, *coachd.ModelResponse, error) {
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/v1/messages", nil)
	if err != nil {
		tb.Fatal(err)
	}
	res := &http.Response{StatusCode: 200, Status: "200 OK", Request: req, Body: io.NopCloser(bytes.NewReader(body)),
		Header: http.Header{"Content-Type": {"text/event-stream"}, "Request-Id": {"req_1"}}}
	s := &stream{ctx: context.Background(), sdk: ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)}
	if fast {
		if s.sse = newSSEReader(res); s.sse == nil {
			tb.Fatal("no fast reader for a text/event-stream body")
		}
	}
	defer s.Close()
	var evs []coachd.ModelEvent
	for s.Next() {
		evs = append(evs, s.Event())
	}
	return evs, s.Response(), s.Err()
}

// checkSameDecode fails tb unless both paths make the same of body.
func checkSameDecode(tb testing.TB, body []byte) {
	tb.Helper()
	fe, fr, ferr := decodeBody(tb, body, true)
	se, sr, serr := decodeBody(tb, body, false)
	if !reflect.DeepEqual(fe, se) {
		tb.Fatalf("events differ on %q:\nfast %+v\n sdk %+v", body, fe, se)
	}
	if !reflect.DeepEqual(fr, sr) {
		tb.Fatalf("response differs on %q:\nfast %+v\n sdk %+v", body, fr, sr)
	}
	if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
		tb.Fatalf("error differs on %q:\nfast %v\n sdk %v", body, ferr, serr)
	}
	var fc, sc *coachd.Error
	if ferr != nil && (!errors.As(ferr, &fc) || !errors.As(serr, &sc) || fc.Code != sc.Code) {
		tb.Fatalf("error class differs on %q: fast %v, sdk %v", body, ferr, serr)
	}
}

// FuzzStreamDecode feeds arbitrary bytes, as a text/event-stream body, to
// coachd's decoder and to the SDK's, and wants the same events, message
// and error from both. Seeds: every recorded stream in testdata/fixtures
// and the corpus in testdata/fuzz/FuzzStreamDecode.
//
//	go test ./anthropic -run '^$' -fuzz FuzzStreamDecode -fuzztime 60s
func FuzzStreamDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fixtures", "*.sse"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\\u00e9\\ud83d\\ude00\"}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 1<<20 {
			return
		}
		checkSameDecode(t, body)
	})
}
