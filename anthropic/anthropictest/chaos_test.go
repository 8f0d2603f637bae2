package anthropictest_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

const chaosBody = `{"model":"m","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hello there, how are you doing today"}]}`

// chaosPost sends one streaming request and returns the status, the body
// read so far and the read error.
func chaosPost(t *testing.T, srv *anthropictest.Server) (int, http.Header, string, error) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL()+"/v1/messages", strings.NewReader(chaosBody))
	req.Header.Set("x-api-key", "k")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("content-type", "application/json")
	req.Close = true
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b), err
}

func TestChaosFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chaos anthropictest.Chaos
		kind  string
		check func(t *testing.T, status int, h http.Header, body string, err error)
	}{
		{"Overloaded", anthropictest.Chaos{Overloaded: 1}, anthropictest.ChaosOverloaded, func(t *testing.T, st int, h http.Header, body string, err error) {
			if st != 529 || !strings.Contains(body, "overloaded_error") || h.Get("x-should-retry") != "true" {
				t.Errorf("%d %s", st, body)
			}
		}},
		{"RateLimited", anthropictest.Chaos{RateLimited: 1}, anthropictest.ChaosRateLimited, func(t *testing.T, st int, h http.Header, body string, err error) {
			if st != 429 || h.Get("retry-after-ms") != "100" || h.Get("retry-after") == "" || !strings.Contains(body, "rate_limit_error") {
				t.Errorf("%d %v %s", st, h, body)
			}
		}},
		{"ErrorEvent", anthropictest.Chaos{ErrorEvent: 1}, anthropictest.ChaosErrorEvent, func(t *testing.T, st int, h http.Header, body string, err error) {
			if st != 200 || err != nil || !strings.Contains(body, "event: error") || strings.Contains(body, "message_stop") {
				t.Errorf("%d %v %s", st, err, body)
			}
		}},
		{"Reset", anthropictest.Chaos{Reset: 1}, anthropictest.ChaosReset, func(t *testing.T, st int, h http.Header, body string, err error) {
			if st != 200 || !errors.Is(err, syscall.ECONNRESET) || !strings.Contains(body, "message_start") {
				t.Errorf("%d %v %q", st, err, body)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := anthropictest.NewServer()
			defer srv.Close()
			srv.SetChaos(&tc.chaos)
			for range 3 {
				st, h, body, err := chaosPost(t, srv)
				tc.check(t, st, h, body, err)
			}
			if got := srv.Faults(); got[tc.kind] != 3 || len(got) != 1 {
				t.Errorf("faults %v, want %s=3", got, tc.kind)
			}
		})
	}
	t.Run("SeededMix", func(t *testing.T) {
		counts := func() map[string]int {
			srv := anthropictest.NewServer()
			defer srv.Close()
			c := anthropictest.DefaultChaos(7)
			c.Stall = 0 // a stall waits for the client to leave
			srv.SetChaos(&c)
			for range 200 {
				chaosPost(t, srv)
			}
			return srv.Faults()
		}
		a, b := counts(), counts()
		if anthropictest.FaultSummary(a) != anthropictest.FaultSummary(b) {
			t.Errorf("same seed, different faults: %v vs %v", a, b)
		}
		if a[anthropictest.ChaosOverloaded] == 0 || a[anthropictest.ChaosOverloaded] > 30 {
			t.Errorf("529s in 200 requests at 5%%: %v", a)
		}
	})
}

func TestValidateHistory(t *testing.T) {
	user := coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}
	use := coachd.ModelMessage{Role: coachd.RoleAssistant, Blocks: []coachd.Block{{Type: coachd.BlockToolUse, ID: "toolu_1", Name: "f", Input: []byte(`{}`)}}}
	result := coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.ToolResultBlock("toolu_1", "ok", false)}}
	for _, tc := range []struct {
		name string
		msgs []coachd.ModelMessage
		want string
	}{
		{"OK", []coachd.ModelMessage{user, use, result}, ""},
		{"ErrUnpaired", []coachd.ModelMessage{user, use, user}, "without `tool_result`"},
		{"ErrTrailing", []coachd.ModelMessage{user, use}, "without `tool_result`"},
		{"ErrRoles", []coachd.ModelMessage{user, user}, "alternate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := anthropictest.ValidateHistory(tc.msgs)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
