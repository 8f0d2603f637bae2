package modeltest

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// CheckOutcome checks how a stream an adapter was given ended, for the
// bad-input tables of every adapter (issue 18): usage always within range
// (no upstream means a negative or astronomical charge); then, with code
// empty, a message (check, when not nil, looks at it), else a coachd error
// with that code and a short, clean message and a bounded text (logged).
func CheckOutcome(t *testing.T, code string, check func(*testing.T, []coachd.ModelEvent, *coachd.ModelResponse),
	evs []coachd.ModelEvent, resp *coachd.ModelResponse, err error) {
	t.Helper()
	for _, n := range []int64{resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.Usage.CacheReadInputTokens, resp.Usage.CacheCreationInputTokens} {
		if n < 0 || n > 1<<24 {
			t.Fatalf("usage %+v out of range: a charge no upstream can have meant", resp.Usage)
		}
	}
	if code == "" {
		if err != nil {
			t.Fatalf("want a message, got %v", err)
		}
		if check != nil {
			check(t, evs, resp)
		}
		return
	}
	var ce *coachd.Error
	if !errors.As(err, &ce) {
		t.Fatalf("want a %s error, got %T %v (response %+v)", code, err, err, resp)
	}
	if ce.Code != code {
		t.Fatalf("code = %s (%v), want %s", ce.Code, err, code)
	}
	if len(ce.Message) > 200 || !utf8.ValidString(ce.Message) {
		t.Fatalf("message not short clean text: %q", ce.Message)
	}
	if text := err.Error(); len(text) > 4096 {
		t.Fatalf("the error's text, which is logged, is %d bytes: %.300q", len(text), text)
	}
	t.Logf("%s: %v", ce.Code, err)
}
