package voice_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/voice"
	"github.com/coachd/coachd/voice/voicetest"
)

const key = "sk-test-0123456789abcdefghij"

func newClient(t *testing.T, k string) (*voice.Client, *voicetest.Server, *syncbuf.Buffer) {
	fake := voicetest.New(t, key)
	logs := &syncbuf.Buffer{}
	c := voice.New(voice.Config{APIKey: k, BaseURL: fake.URL, HTTPClient: fake.Client(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	return c, fake, logs
}

func TestMint(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		c, fake, _ := newClient(t, key)
		s, err := c.Mint(ctx, voice.SessionRequest{Instructions: "You are a rideshare coach.", Voice: "verse"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(s.Value, "ek_") || s.Model != voice.DefaultModel || s.Voice != "verse" || s.ExpiresAt.IsZero() {
			t.Fatalf("secret %+v", s)
		}
		reqs := fake.Requests()
		if len(reqs) != 1 || reqs[0].Path != "/v1/realtime/client_secrets" || reqs[0].Authorization != "Bearer "+key {
			t.Fatalf("requests %+v", reqs)
		}
		sess := reqs[0].Body["session"].(map[string]any)
		tr := sess["audio"].(map[string]any)["input"].(map[string]any)["transcription"].(map[string]any)
		if sess["instructions"] != "You are a rideshare coach." || sess["model"] != voice.DefaultModel || tr["model"] != "whisper-1" {
			t.Fatalf("session %v", sess)
		}
	})
	for _, tc := range []struct {
		name   string
		status int
		code   string
	}{
		{"Err500", 500, coachd.EAPI},
		{"Err429", 429, coachd.EUPSTREAMBUSY},
		{"Err400", 400, coachd.EAPI},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, fake, _ := newClient(t, key)
			fake.Fail(tc.status, "boom "+key)
			_, err := c.Mint(ctx, voice.SessionRequest{})
			if coachd.ErrorCode(err) != tc.code || strings.Contains(coachd.AsError(err).Message, "boom") {
				t.Fatalf("err %v, want %s without the provider's text", err, tc.code)
			}
		})
	}
	t.Run("ErrBadKey", func(t *testing.T) {
		c, _, logs := newClient(t, "sk-wrong-key-000000000000")
		_, err := c.Mint(ctx, voice.SessionRequest{})
		if coachd.ErrorCode(err) != coachd.EUPSTREAMAUTH {
			t.Fatalf("err %v", err)
		}
		if strings.Contains(err.Error(), "sk-w") || strings.Contains(logs.String(), "sk-wrong-key-000000000000") {
			t.Fatalf("the key leaked: %v / %s", err, logs)
		}
	})
}

func TestSpeech(t *testing.T) {
	ctx := context.Background()
	t.Run("Streamed", func(t *testing.T) {
		c, fake, _ := newClient(t, key)
		release := fake.Gate()
		defer release()
		body, ct, err := c.Speech(ctx, voice.SpeechRequest{Text: "Hello there", Voice: "alloy", Format: "mp3"})
		if err != nil {
			t.Fatal(err)
		}
		defer body.Close()
		if ct != "audio/mpeg" {
			t.Fatalf("content type %q", ct)
		}
		// The first chunk arrives while the fake holds the rest back.
		first := make([]byte, 4)
		if _, err := io.ReadFull(body, first); err != nil || !bytes.Equal(first, voicetest.Audio[:4]) {
			t.Fatalf("first bytes %q %v", first, err)
		}
		release()
		rest, err := io.ReadAll(body)
		if err != nil || !bytes.Equal(append(first, rest...), voicetest.Audio) {
			t.Fatalf("audio %q %v", rest, err)
		}
		r := fake.Requests()[0]
		if r.Body["input"] != "Hello there" || r.Body["voice"] != "alloy" || r.Body["response_format"] != "mp3" || r.Body["model"] != voice.DefaultTTSModel {
			t.Fatalf("request %v", r.Body)
		}
	})
	t.Run("ErrUpstream", func(t *testing.T) {
		c, fake, _ := newClient(t, key)
		fake.Fail(http.StatusServiceUnavailable, "down")
		if _, _, err := c.Speech(ctx, voice.SpeechRequest{Text: "x"}); coachd.ErrorCode(err) != coachd.EAPI {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("ErrFormat", func(t *testing.T) {
		c, _, _ := newClient(t, key)
		if _, _, err := c.Speech(ctx, voice.SpeechRequest{Text: "x", Format: "ogg"}); coachd.ErrorCode(err) != coachd.EINVALID {
			t.Fatalf("err %v", err)
		}
	})
}
