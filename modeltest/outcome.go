package modeltest

import (
	"errors"
	"strings"
	"testing"
	"unicode"
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

// CheckBoundedError checks what of an adapter's error reaches a client
// (its message: short clean text starting clientPrefix, so it still says
// what failed) and a log line (its text: bounded clean text, holding
// logHolds when that is not empty), after an upstream answered with long,
// multi-byte text full of control characters.
func CheckBoundedError(t *testing.T, err error, clientPrefix, logHolds string) {
	t.Helper()
	var ce *coachd.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %T %v, want *coachd.Error", err, err)
	}
	if len(ce.Message) > 200 || !utf8.ValidString(ce.Message) || strings.ContainsFunc(ce.Message, unicode.IsControl) {
		t.Errorf("client message is not short clean text (%d bytes): %.300q", len(ce.Message), ce.Message)
	}
	if !strings.HasPrefix(ce.Message, clientPrefix) {
		t.Errorf("client message %.300q lost what failed, want it to start %q", ce.Message, clientPrefix)
	}
	text := err.Error()
	if len(text) > 2000 || !utf8.ValidString(text) || strings.ContainsFunc(text, unicode.IsControl) {
		t.Errorf("log text is not bounded clean text (%d bytes): %.300q", len(text), text)
	}
	if logHolds != "" && !strings.Contains(text, logHolds) {
		t.Errorf("log text %.300q lost %q", text, logHolds)
	}
}
