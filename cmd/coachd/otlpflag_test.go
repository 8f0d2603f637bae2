package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// An --otlp-endpoint that is not an http(s) URL with a host exported
// nothing, or somewhere else, without a word: serve started and the
// operator waited for traces that never came. It is a usage error, like
// every other flag's bad value.
func TestServeBadOTLPEndpoint(t *testing.T) {
	for _, endpoint := range []string{"collector:4318", "ftp://collector:4318", "http://", "notaurl"} {
		var stderr bytes.Buffer
		// Were the endpoint accepted, serve would stop at the missing pack.
		err := run(context.Background(), []string{"coachd", "serve", "--addr", "127.0.0.1:0", "--db", t.TempDir() + "/c.db",
			"--pack", t.TempDir() + "/missing", "--otlp-endpoint", endpoint},
			getenvFrom(nil), &bytes.Buffer{}, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "--otlp-endpoint") {
			t.Errorf("--otlp-endpoint %q: %v, stderr %q; want a usage error naming the flag", endpoint, err, stderr.String())
		}
	}
}
