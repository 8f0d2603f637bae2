package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/voice/voicetest"
)

// TestProviderKeyTrailingNewline: a key read from a file into the
// environment (a Kubernetes Secret, echo into an .env) often ends in a
// newline. An agent naming its provider had the key trimmed, but the
// default model and voice took it as it was: serve started and answered
// /healthz, and every turn and every voice call failed (net/http will
// not send a header holding a line break). The keys are trimmed as the
// provider registry and --voice-key-file trim them.
func TestProviderKeyTrailingNewline(t *testing.T) {
	const key = "sk-ant-newline-test"
	fake := anthropictest.NewServer()
	defer fake.Close()
	fake.SetAPIKey(key)
	provider := voicetest.New(t, voiceKey)
	p := MustServe(t, map[string]string{"ANTHROPIC_API_KEY": key + "\n", "ANTHROPIC_BASE_URL": fake.URL(),
		"COACHD_OPENAI_API_KEY": voiceKey + "\r\n"},
		"--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "coachd.db"), "--demo", "--voice-provider-url", provider.URL)
	m := apiKeyRe.FindStringSubmatch(p.stdout.String())
	if m == nil {
		t.Fatalf("no demo API key in stdout:\n%s", p.stdout)
	}
	fake.Enqueue(anthropictest.Text("Head to the airport.", 4))
	st, _, body := post(t, p.url+"/v1/chat/stream", m[1], `{"message":"where now?"}`)
	if st != 200 || !strings.Contains(string(body), `"stop_reason":"end_turn"`) {
		t.Errorf("turn = %d\n%s", st, body)
	}
	if st, _, body := post(t, p.url+"/v1/tts", m[1], `{"text":"Take the airport loop."}`); st != 200 {
		t.Errorf("tts = %d %s", st, body)
	}
}

// TestSecretFlagTrailingNewline: the admin key comes from the
// environment the same way, newline and all; it then matched no request
// (no header carries a line break), so every admin route answered 401
// "invalid admin key". The secret flags' environment values (admin key,
// COACHD_KEY) are trimmed, as the provider keys are.
func TestSecretFlagTrailingNewline(t *testing.T) {
	p := MustServe(t, map[string]string{"COACHD_ADMIN_KEY": "s3cret-admin\n"},
		"--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "coachd.db"))
	var users struct{ Users []any }
	if st := call(t, "GET", p.url+"/v1/users", "s3cret-admin", "", nil, &users); st != 200 {
		t.Errorf("GET /v1/users with the admin key = %d", st)
	}
}
