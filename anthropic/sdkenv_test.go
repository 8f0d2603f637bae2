package anthropic_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd/anthropic"
)

// TestSecuritySDKReadsNoEnvCredentials: the SDK client adds credentials
// of its own from the process environment when ANTHROPIC_API_KEY is not
// set there: ANTHROPIC_AUTH_TOKEN as a bearer token, an ANTHROPIC_PROFILE
// or default profile's, ANTHROPIC_CUSTOM_HEADERS. coachd's key option
// replaces x-api-key only, so a pack agent's provider (anthropic, a
// base_url of its own and api_key_env) sent coachd's own token and
// headers to the pack's host. coachd passes every setting itself; the
// SDK reads none from the environment.
func TestSecuritySDKReadsNoEnvCredentials(t *testing.T) {
	const token, header = "sk-ant-oat-coachd-own-token", "coachd-own-header-value"
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_CONFIG_DIR", filepath.Join(t.TempDir(), "none"))
	got := make(chan http.Header, 4)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"no"}}`))
	}))
	defer ts.Close()
	for name, env := range map[string][2]string{
		"AuthToken":     {"ANTHROPIC_AUTH_TOKEN", token},
		"CustomHeaders": {"ANTHROPIC_CUSTOM_HEADERS", "X-Own-Secret: " + header},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(env[0], env[1])
			sdkEnvCase(t, ts.URL, got)
		})
	}
}

func sdkEnvCase(t *testing.T, url string, got chan http.Header) {
	eachPath(t, func(t *testing.T, untraced bool) {
		m := anthropic.New(anthropic.Config{APIKey: "pack-key", BaseURL: url, MaxRetries: -1, Untraced: untraced})
		drain(m.Stream(context.Background(), hello()))
		select {
		case h := <-got:
			if h.Get("X-Api-Key") != "pack-key" {
				t.Errorf("x-api-key = %q, want the pack's", h.Get("X-Api-Key"))
			}
			if v := h.Get("Authorization"); v != "" {
				t.Errorf("the pack's base_url received Authorization %q", v)
			}
			if v := h.Get("X-Own-Secret"); v != "" {
				t.Errorf("the pack's base_url received ANTHROPIC_CUSTOM_HEADERS' %q", v)
			}
		default:
			t.Fatal("no request reached the server")
		}
	})
}
