package voice_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/coachd/coachd/voice"
	"github.com/coachd/coachd/voice/voicetest"
)

// TestSpeechStalls: speech whose audio stops arriving mid-stream is cut
// once no byte came for the timeout; the read waited for as long as the
// caller stayed, holding the request and the provider's connection.
func TestSpeechStalls(t *testing.T) {
	fake := voicetest.New(t, key)
	release := fake.Gate() // the fake sends its first chunk, then nothing
	defer release()
	c := voice.New(voice.Config{APIKey: key, BaseURL: fake.URL, HTTPClient: fake.Client(), Timeout: 200 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	body, _, err := c.Speech(context.Background(), voice.SpeechRequest{Text: "Hello there"})
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	done := make(chan error, 1)
	var got []byte
	go func() {
		var err error
		got, err = io.ReadAll(body)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !bytes.HasPrefix(voicetest.Audio, got) || len(got) == 0 || len(got) == len(voicetest.Audio) {
			t.Fatalf("read %q, err %v; want the first chunk, then an error", got, err)
		}
	case <-time.After(10 * time.Second): // a guard against a hang, not a wait
		t.Fatal("reading a stalled speech stream did not end")
	}
}
