package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/tools"
	"github.com/coachd/coachd/voice"
	"github.com/coachd/coachd/voice/voicetest"
)

// voiceKey is the long-lived provider key: it must never reach a client.
const voiceKey = "sk-proj-VOICEKEY-never-leaves-7q9z"

// voiceEnv is a chat-capable server with a voice provider (the fake).
type voiceEnv struct {
	*chatEnv
	provider *voicetest.Server
}

// voicePrompt is the coach's system prompt: it must reach the provider.
const voicePrompt = "You are Rio, a rideshare driving coach. Speak plainly."

// mustVoiceEnv starts a server whose agent has voice settings; key is the
// provider key the server holds ("" turns voice off).
func mustVoiceEnv(t *testing.T, limits server.Limits, key string) *voiceEnv {
	t.Helper()
	return mustVoiceEnvOn(t, filepath.Join(t.TempDir(), "coachd.db"), limits, key)
}

// mustVoiceEnvOn is mustVoiceEnv over the database at dsn.
func mustVoiceEnvOn(t *testing.T, dsn string, limits server.Limits, key string) *voiceEnv {
	t.Helper()
	db := mustDB(t, dsn, nil)
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	provider := voicetest.New(t, voiceKey)
	ts, err := agent.NewToolset(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	ag := agent.DefaultAgent()
	ag.Name, ag.Prompt = "rio", voicePrompt
	ag.Voice = &agent.Voice{Voice: "verse", TranscriptionModel: "whisper-1"}
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	runner := agent.NewRunner(agent.Config{
		Store: db, Tools: ts, Logger: logger,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true}),
		Agents: func(name string) (*agent.Agent, bool) {
			if name == "" || name == ag.Name {
				return ag, true
			}
			return nil, false
		},
	})
	deps := server.Deps{Store: db, Logger: logger, AdminKey: adminKey, Runner: runner, Heartbeat: time.Hour, Limits: limits}
	if key != "" {
		deps.Voice = voice.New(voice.Config{APIKey: key, BaseURL: provider.URL, HTTPClient: provider.Client(), Logger: logger})
	}
	api := server.New(deps)
	srv := httptest.NewServer(api)
	t.Cleanup(func() { closeServer(api, srv) })
	e := &env{t: t, db: db, url: srv.URL, logs: logs, admin: client.New(srv.URL, adminKey, srv.Client())}
	e.alice = e.MustUser("alice")
	e.bob = e.MustUser("bob")
	return &voiceEnv{chatEnv: &chatEnv{env: e, fake: fake, api: api}, provider: provider}
}

// noKey fails when any part of the provider key is in r.
func noKey(t *testing.T, r response) {
	t.Helper()
	all := string(r.body)
	for k, vs := range r.header {
		all += "\n" + k + ": " + strings.Join(vs, ",")
	}
	for _, part := range []string{voiceKey, "VOICEKEY", "7q9z", "sk-p"} {
		if strings.Contains(all, part) {
			t.Fatalf("the provider key (%q) reached the client:\n%s", part, all)
		}
	}
}

type minted struct {
	ID           string `json:"id"`
	ClientSecret struct {
		Value     string `json:"value"`
		ExpiresAt int64  `json:"expires_at"`
	} `json:"client_secret"`
	ExpiresAt          time.Time `json:"expires_at"`
	Model              string    `json:"model"`
	Voice              string    `json:"voice"`
	TranscriptionModel string    `json:"transcription_model"`
	Agent              string    `json:"agent"`
	SessionID          string    `json:"session_id"`
	ConnectURL         string    `json:"connect_url"`
}

func TestVoiceOff(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, "")
	key := e.alice.key
	r := e.do(request{method: "GET", path: "/v1/voice", key: key})
	if r.status != 200 || !strings.Contains(string(r.body), `"enabled":false`) {
		t.Fatalf("GET /v1/voice = %d %s", r.status, r.body)
	}
	for _, path := range []string{"/v1/realtime/session", "/v1/realtime/token", "/v1/tts"} {
		r := e.post(key, path, `{"text":"hi"}`, nil, nil)
		if r.status != http.StatusForbidden || r.errorCode() != coachd.EFORBIDDEN || !strings.Contains(string(r.body), "voice is not configured") {
			t.Errorf("%s = %d %s", path, r.status, r.body)
		}
	}
	if n := len(e.provider.Requests()); n != 0 {
		t.Fatalf("the provider was called %d times", n)
	}
}

func TestRealtimeSession(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	ctx := context.Background()
	key := e.alice.key
	t.Run("OK", func(t *testing.T) {
		sess, err := e.alice.c.CreateSession(ctx, "", "drive")
		if err != nil {
			t.Fatal(err)
		}
		var got minted
		r := e.post(key, "/v1/realtime/session", `{"session_id":"`+sess.ID+`"}`, nil, &got)
		if r.status != 200 {
			t.Fatalf("mint = %d %s", r.status, r.body)
		}
		noKey(t, r)
		if !strings.HasPrefix(got.ClientSecret.Value, "ek_") || got.SessionID != sess.ID || got.Agent != "rio" || got.Voice != "verse" ||
			got.Model != voice.DefaultModel || got.TranscriptionModel != "whisper-1" || got.ExpiresAt.Unix() != got.ClientSecret.ExpiresAt ||
			got.ConnectURL != e.provider.URL+"/v1/realtime/calls" {
			t.Fatalf("minted %+v", got)
		}
		if d := time.Until(got.ExpiresAt); d <= 0 || d > voice.DefaultSecretTTL+time.Minute {
			t.Fatalf("expires in %s", d)
		}
		reqs := e.provider.Requests()
		p := reqs[len(reqs)-1]
		s := p.Body["session"].(map[string]any)
		if p.Authorization != "Bearer "+voiceKey || s["model"] != voice.DefaultModel || !strings.Contains(s["instructions"].(string), voicePrompt) {
			t.Fatalf("provider got %s %v", p.Authorization, p.Body)
		}
		recs, _, err := e.db.ListVoiceSessions(ctx, e.alice.ID, coachd.Page{})
		if err != nil || len(recs) != 1 || recs[0].ID != got.ID || recs[0].SessionID != sess.ID || recs[0].Voice != "verse" {
			t.Fatalf("recorded %+v %v", recs, err)
		}
		if strings.Contains(mustJSON(t, recs), got.ClientSecret.Value) {
			t.Fatal("the secret was stored")
		}
	})
	t.Run("SeedAlias", func(t *testing.T) {
		// Seed 001's fetch: no Content-Type (the browser says text/plain),
		// its own ids in the body.
		var got minted
		r := e.post(key, "/v1/realtime/token", `{"snapshotId":"snap_1","userId":42,"strategyId":null}`,
			map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, &got)
		if r.status != 200 || got.ClientSecret.Value == "" || !coachd.ValidID(coachd.PrefixSession, got.SessionID) {
			t.Fatalf("token = %d %s", r.status, r.body)
		}
		noKey(t, r)
		// The new session is the caller's, and transcripts can go there.
		if _, err := e.alice.c.Session(ctx, got.SessionID); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrOtherUsersSession", func(t *testing.T) {
		before := e.provider.Secrets()
		bobs, err := e.bob.c.CreateSession(ctx, "", "bob's")
		if err != nil {
			t.Fatal(err)
		}
		r := e.post(key, "/v1/realtime/session", `{"session_id":"`+bobs.ID+`"}`, nil, nil)
		if r.status != 404 || e.provider.Secrets() != before {
			t.Fatalf("another user's session = %d %s", r.status, r.body)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, body := range []string{`{"session_id":"nope"}`, `{"agent":"Bad Name"}`, `{"agent":"ghost"}`, `{"model":"x"}`} {
			if r := e.post(key, "/v1/realtime/session", body, nil, nil); r.status != 400 {
				t.Errorf("%s = %d %s", body, r.status, r.body)
			}
		}
	})
	t.Run("ErrBudgetExhausted", func(t *testing.T) {
		carol := e.MustUser("carol")
		zero := int64(0)
		if _, err := e.admin.UpdateUser(ctx, carol.ID, coachd.UserUpdate{TokenBudget: &zero}); err != nil {
			t.Fatal(err)
		}
		before := e.provider.Secrets()
		r := e.post(carol.key, "/v1/realtime/session", `{}`, nil, nil)
		if r.status != http.StatusPaymentRequired || r.errorCode() != coachd.EBUDGET || e.provider.Secrets() != before {
			t.Fatalf("exhausted = %d %s", r.status, r.body)
		}
		if recs, _, _ := e.db.ListVoiceSessions(ctx, carol.ID, coachd.Page{}); len(recs) != 0 {
			t.Fatalf("recorded %d voice sessions", len(recs))
		}
	})
	for _, tc := range []struct {
		name         string
		status, want int
		code         string
	}{
		{"ErrProvider500", 500, http.StatusBadGateway, coachd.EAPI},
		{"ErrProvider429", 429, http.StatusServiceUnavailable, coachd.EUPSTREAMBUSY},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.provider.Fail(tc.status, "upstream says no to "+voiceKey)
			r := e.post(key, "/v1/realtime/session", `{}`, nil, nil)
			if r.status != tc.want || r.errorCode() != tc.code || strings.Contains(string(r.body), "upstream says") {
				t.Fatalf("provider %d = %d %s", tc.status, r.status, r.body)
			}
			noKey(t, r)
		})
	}
}

func TestVoiceRateLimit(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{Rate: coachd.RateLimit{N: 2, Per: time.Hour}}, voiceKey)
	key := e.alice.key
	for i := range 2 {
		if r := e.post(key, "/v1/realtime/session", `{}`, nil, nil); r.status != 200 {
			t.Fatalf("mint %d = %d %s", i, r.status, r.body)
		}
	}
	r := e.post(key, "/v1/realtime/session", `{}`, nil, nil)
	if r.status != http.StatusTooManyRequests || r.errorCode() != coachd.ERATELIMITED || r.header.Get("Retry-After") == "" {
		t.Fatalf("third mint = %d %s", r.status, r.body)
	}
	if n := e.provider.Secrets(); n != 2 {
		t.Fatalf("minted %d secrets", n)
	}
	// Speech has a bucket of its own at the user's rate.
	for i := range 2 {
		if r := e.post(key, "/v1/tts", `{"text":"hi"}`, nil, nil); r.status != 200 {
			t.Fatalf("tts %d = %d %s", i, r.status, r.body)
		}
	}
	if r := e.post(key, "/v1/tts", `{"text":"hi"}`, nil, nil); r.status != http.StatusTooManyRequests || r.errorCode() != coachd.ERATELIMITED {
		t.Fatalf("third tts = %d %s", r.status, r.body)
	}
	// Bob's limits are his own.
	if r := e.post(e.bob.key, "/v1/tts", `{"text":"hi"}`, nil, nil); r.status != 200 {
		t.Fatalf("bob's tts = %d %s", r.status, r.body)
	}
}

func TestTTS(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	key := e.alice.key
	t.Run("Streamed", func(t *testing.T) {
		release := e.provider.Gate()
		defer release()
		req, _ := http.NewRequest("POST", e.url+"/v1/tts", strings.NewReader(`{"text":"Airport rush after five.","voice":"nova","format":"mp3"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/mpeg" {
			t.Fatalf("tts = %d %s", resp.StatusCode, resp.Header)
		}
		// The first bytes are here while the provider holds the rest.
		first := make([]byte, 4)
		if _, err := io.ReadFull(resp.Body, first); err != nil || !bytes.Equal(first, voicetest.Audio[:4]) {
			t.Fatalf("first bytes %q %v", first, err)
		}
		release()
		rest, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(append(first, rest...), voicetest.Audio) {
			t.Fatalf("audio %q %v", rest, err)
		}
		noKey(t, response{status: resp.StatusCode, header: resp.Header, body: append(first, rest...)})
		reqs := e.provider.Requests()
		p := reqs[len(reqs)-1]
		if p.Body["input"] != "Airport rush after five." || p.Body["voice"] != "nova" || p.Body["response_format"] != "mp3" {
			t.Fatalf("provider got %v", p.Body)
		}
	})
	t.Run("CoachVoice", func(t *testing.T) {
		sess := e.MustSession(e.alice)
		voiceOf := func(k, body string) (int, any) {
			t.Helper()
			before := len(e.provider.Requests())
			r := e.post(k, "/v1/tts", body, nil, nil)
			reqs := e.provider.Requests()
			if r.status != 200 || len(reqs) == before {
				return r.status, nil
			}
			return r.status, reqs[len(reqs)-1].Body["voice"]
		}
		for body, want := range map[string]any{
			`{"text":"hi","agent":"rio"}`:                  "verse", // the coach's voice
			`{"text":"hi","session_id":"` + sess.ID + `"}`: "verse", // the session's coach's
			`{"text":"hi","agent":"rio","voice":"nova"}`:   "nova",  // the request's own first
			`{"text":"hi"}`: "alloy", // the default voice
		} {
			if st, got := voiceOf(key, body); st != 200 || got != want {
				t.Errorf("%s: %d, voice %v, want %v", body, st, got, want)
			}
		}
		if st, _ := voiceOf(e.bob.key, `{"text":"hi","session_id":"`+sess.ID+`"}`); st != 404 {
			t.Errorf("bob naming alice's session: %d, want 404", st)
		}
		if st, _ := voiceOf(key, `{"text":"hi","agent":"nobody"}`); st != 400 {
			t.Errorf("an unknown agent: %d, want 400", st)
		}
	})
	t.Run("Formats", func(t *testing.T) {
		for format, ct := range map[string]string{"opus": "audio/ogg", "wav": "audio/wav", "pcm": "audio/L16;rate=24000;channels=1"} {
			r := e.post(key, "/v1/tts", `{"text":"hi","format":"`+format+`"}`, nil, nil)
			if r.status != 200 || r.header.Get("Content-Type") != ct {
				t.Errorf("%s = %d %q", format, r.status, r.header.Get("Content-Type"))
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		before := len(e.provider.Requests())
		for body, field := range map[string]string{
			`{"text":""}`:    "text",
			`{"text":"   "}`: "text",
			`{"text":"` + strings.Repeat("a", 4097) + `"}`: "text",
			`{"text":"hi","voice":"robot"}`:                "voice",
			`{"text":"hi","format":"ogg"}`:                 "format",
			`{"text":"hi","speed":2}`:                      "speed",
		} {
			r := e.post(key, "/v1/tts", body, nil, nil)
			if r.status != 400 || r.errorCode() != coachd.EINVALID || !strings.Contains(string(r.body), field) {
				t.Errorf("%.40s = %d %s", body, r.status, r.body)
			}
		}
		if n := len(e.provider.Requests()); n != before {
			t.Fatalf("invalid requests reached the provider: %d", n-before)
		}
	})
	t.Run("ErrBudgetExhausted", func(t *testing.T) {
		// Speech is the operator's to pay, as a realtime secret is: a user
		// with no budget, or none left, gets none.
		ctx := context.Background()
		carol := e.MustUser("carol")
		zero := int64(0)
		if _, err := e.admin.UpdateUser(ctx, carol.ID, coachd.UserUpdate{TokenBudget: &zero}); err != nil {
			t.Fatal(err)
		}
		before := len(e.provider.Requests())
		r := e.post(carol.key, "/v1/tts", `{"text":"Airport rush after five."}`, nil, nil)
		if r.status != http.StatusPaymentRequired || r.errorCode() != coachd.EBUDGET {
			t.Fatalf("no budget = %d %s", r.status, r.body)
		}
		if n := len(e.provider.Requests()); n != before {
			t.Fatalf("a user without budget reached the provider: %d requests", n-before)
		}
	})
	t.Run("ErrProvider", func(t *testing.T) {
		e.provider.Fail(503, "overloaded "+voiceKey)
		r := e.post(key, "/v1/tts", `{"text":"hi"}`, nil, nil)
		if r.status != http.StatusBadGateway || r.errorCode() != coachd.EAPI {
			t.Fatalf("provider 503 = %d %s", r.status, r.body)
		}
		noKey(t, r)
		e.provider.Fail(429, "slow down")
		if r := e.post(key, "/v1/tts", `{"text":"hi"}`, nil, nil); r.status != http.StatusServiceUnavailable || r.errorCode() != coachd.EUPSTREAMBUSY {
			t.Fatalf("provider 429 = %d %s", r.status, r.body)
		}
	})
}

// TestVoiceOpenAPIResponses: the voice routes' answers match the document.
func TestVoiceOpenAPIResponses(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	check, _ := openAPIChecker(t)
	key := e.alice.key
	check("GET", "/v1/voice", "200", e.do(request{method: "GET", path: "/v1/voice", key: key}))
	var m minted
	r := e.post(key, "/v1/realtime/session", `{}`, nil, &m)
	check("POST", "/v1/realtime/session", "200", r)
	check("POST", "/v1/realtime/token", "200", e.post(key, "/v1/realtime/token", `{"session_id":"`+m.SessionID+`"}`, nil, nil))
	r = e.post(key, "/v1/sessions/"+m.SessionID+"/messages", `{"role":"user","content":"hi","source":"voice"}`, nil, nil)
	if r.status != 201 {
		t.Fatalf("transcript = %d %s", r.status, r.body)
	}
	check("POST", "/v1/sessions/{id}/messages", "201", r)
}
