package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// README: "Every flag has an environment fallback". --demo had none, so
// a container configured by its environment alone (compose, Kubernetes)
// could not ask for the demo user.
func TestDemoFromEnvironment(t *testing.T) {
	p := MustServe(t, map[string]string{"COACHD_DEMO": "1"}, "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "c.db"))
	if out := p.stdout.String(); !strings.Contains(out, "API key: ck_") {
		t.Errorf("COACHD_DEMO=1: no demo key printed:\n%s", out)
	}
}
