package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// A refused --voice-provider-url is named in the error without its
// password or key, as every other URL coachd shows.
func TestSecurityVoiceURLSecretNotShown(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.db")
	for _, u := range []string{
		"https://user:s3cret@voice.example.com/v1",
		"https://voice.example.com/?api_key=s3cret",
		"ftp://user:s3cret@voice.example.com",
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), []string{"coachd", "serve", "--db", db, "--voice-provider-url", u},
			getenvFrom(nil), io.Discard, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "voice.example.com") {
			t.Fatalf("%s: %v, stderr %q; want a usage error naming the host", u, err, stderr.String())
		}
		if strings.Contains(stderr.String(), "s3cret") {
			t.Errorf("%s: the error shows the secret: %q", u, stderr.String())
		}
	}
}
