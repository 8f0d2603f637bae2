package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/voice/voicetest"
)

const voiceKey = "sk-proj-binary-VOICEKEY-5x8w"

// post sends a JSON body with the key and returns the status, headers
// and body.
func post(t *testing.T, url, key, body string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// TestVoiceBinary: the real binary with the fake provider mints a secret
// with the coach's prompt and speaks text; the key stays inside.
func TestVoiceBinary(t *testing.T) {
	provider := voicetest.New(t, voiceKey)
	p := MustStart(t, []string{"COACHD_OPENAI_API_KEY=" + voiceKey, "ANTHROPIC_API_KEY=", "COACHD_PROVIDER=demo"},
		"--db", filepath.Join(t.TempDir(), "coachd.db"), "--demo", "--voice-provider-url", provider.URL, "--voice", "sage")
	leaks := func(where string, b []byte) {
		t.Helper()
		if bytes.Contains(b, []byte("VOICEKEY")) {
			t.Fatalf("the provider key is in %s", where)
		}
	}

	st, hdr, body := post(t, p.url+"/v1/realtime/session", p.key, `{}`)
	if st != 200 {
		t.Fatalf("mint = %d %s", st, body)
	}
	leaks("the mint answer", append(body, []byte(strings.Join(hdr.Values("Content-Type"), ""))...))
	var minted struct {
		ClientSecret            struct{ Value string } `json:"client_secret"`
		Voice, Model, SessionID string
	}
	json.Unmarshal(body, &minted)
	if !strings.HasPrefix(minted.ClientSecret.Value, "ek_") {
		t.Fatalf("minted %s", body)
	}
	reqs := provider.Requests()
	if len(reqs) != 1 || reqs[0].Authorization != "Bearer "+voiceKey {
		t.Fatalf("provider requests %+v", reqs)
	}
	sess := reqs[0].Body["session"].(map[string]any)
	out := sess["audio"].(map[string]any)["output"].(map[string]any)
	if !strings.Contains(sess["instructions"].(string), agent.DefaultAgent().Prompt) || out["voice"] != "sage" {
		t.Fatalf("provider got %v", reqs[0].Body)
	}

	st, hdr, body = post(t, p.url+"/v1/tts", p.key, `{"text":"Take the airport loop at six."}`)
	if st != 200 || hdr.Get("Content-Type") != "audio/mpeg" || !bytes.Equal(body, voicetest.Audio) {
		t.Fatalf("tts = %d %s %q", st, hdr.Get("Content-Type"), body)
	}
	p.kill()
	leaks("the log", []byte(p.stderr.String()))
	if !strings.Contains(p.stderr.String(), "voice.enabled=true") {
		t.Errorf("the startup log does not say voice is on:\n%s", p.stderr)
	}
}

func TestVoiceFlags(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.key")
	os.WriteFile(empty, nil, 0o600)
	db := filepath.Join(dir, "x.db")
	for _, args := range [][]string{
		{"--voice", "robot"},
		{"--voice-provider-url", "ftp://api.openai.com"},
		{"--voice-provider-url", "https://api.openai.com/v1"},
		{"--voice-model", "GPT 4"},
		{"--voice-secret-ttl", "5s"},
		{"--voice-key-file", filepath.Join(dir, "missing.key")},
		{"--voice-key-file", empty},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), append([]string{"coachd", "serve", "--db", db}, args...), getenvFrom(nil), io.Discard, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "voice") {
			t.Errorf("%v: %v, stderr %q; want a usage error about voice", args, err, stderr.String())
		}
	}
}

// Without a key, the voice routes say so and GET /v1/voice says off.
func TestVoiceOffBinary(t *testing.T) {
	p := MustServe(t, map[string]string{}, "--db", filepath.Join(t.TempDir(), "coachd.db"), "--addr", "127.0.0.1:0", "--demo")
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())
	if key == nil {
		t.Fatalf("no demo key in %s", p.stdout)
	}
	st, _, body := post(t, p.url+"/v1/realtime/session", key[1], `{}`)
	if st != http.StatusForbidden || !strings.Contains(string(body), "voice is not configured") {
		t.Fatalf("mint without voice = %d %s", st, body)
	}
}
