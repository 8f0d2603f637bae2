package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A password holding a character a URL reserves, left unescaped ('/',
// '#', a stray '%'), makes net/url fail to parse the DSN, or read the
// password as a port; the DSN must still never be shown with it.
func TestMaskDSNUnescapedPassword(t *testing.T) {
	const secret = "s3cr"
	for _, dsn := range []string{
		"postgres://coach:s3cr/et@127.0.0.1:1/coachd",
		"postgres://coach:s3cr#et@127.0.0.1:1/coachd",
		"postgres://coach:s3cr%zzet@127.0.0.1:1/coachd",
		"postgresql://coach:s3cr?et@127.0.0.1:1/coachd",
		"postgres://coach:5432#s3cr@127.0.0.1:1/coachd",                  // parses: host coach:5432
		"host=127.0.0.1 port=1 user=coach password=s3cret dbname=coachd", // libpq key=value: refused
	} {
		t.Run("Mask", func(t *testing.T) {
			if got := maskDSN(dsn); strings.Contains(got, secret) {
				t.Errorf("maskDSN(%q) = %q: shows the password", dsn, got)
			}
		})
		t.Run("ServeLog", func(t *testing.T) {
			// serve logs its configuration, then fails to connect: neither
			// the log nor the error may show the password.
			if out := serveUnreachable(t, dsn); strings.Contains(out, secret) {
				t.Errorf("serve --db %q shows the password:\n%s", dsn, out)
			}
		})
	}
}

// A gateway's URL may carry credentials (https://user:token@gateway/):
// the configuration serve logs shows the URL, never them.
func TestServeLogMasksBaseURLCredentials(t *testing.T) {
	var stderr bytes.Buffer
	// Serve logs its configuration, then stops at the missing pack.
	err := run(context.Background(), []string{"coachd", "serve", "--addr", "127.0.0.1:0", "--db", t.TempDir() + "/c.db",
		"--pack", t.TempDir() + "/missing", "--anthropic-base-url", "https://coach:tok3n@gateway.example.com/anthropic"},
		getenvFrom(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test"}), &bytes.Buffer{}, &stderr)
	if err == nil {
		t.Fatal("serve started without its pack")
	}
	if out := stderr.String(); strings.Contains(out, "tok3n") || !strings.Contains(out, "gateway.example.com") {
		t.Errorf("serve's log shows the base URL's password, or not the URL:\n%s", out)
	}
}

// TestSecurityMaskURLQuerySecrets: a secret may sit in a URL's query as
// well as in its user info: pgx's sslpassword (the client key's
// passphrase), or a gateway's key in ANTHROPIC_BASE_URL. serve logs both
// URLs at start (and the DSN again when it cannot connect).
func TestSecurityMaskURLQuerySecrets(t *testing.T) {
	const secret = "s3cr"
	for _, dsn := range []string{
		"postgres://coach@127.0.0.1:1/coachd?sslmode=disable&sslpassword=s3cret",
		"postgres://coach@127.0.0.1:1/coachd?sslmode=disable&SSLPassword=s3cret",
	} {
		if got := maskDSN(dsn); strings.Contains(got, secret) || !strings.Contains(got, "sslmode=disable") {
			t.Errorf("maskDSN(%q) = %q: shows the secret, or lost the rest", dsn, got)
		}
		if out := serveUnreachable(t, dsn); strings.Contains(out, secret) {
			t.Errorf("serve --db %q shows the secret:\n%s", dsn, out)
		}
	}
	for _, base := range []string{
		"https://gateway.example.com/anthropic?key=s3cret",
		"https://gateway.example.com/anthropic?api-key=s3cret&region=eu",
		"https://gateway.example.com/anthropic?access_token=s3cret",
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), []string{"coachd", "serve", "--addr", "127.0.0.1:0", "--db", t.TempDir() + "/c.db",
			"--pack", t.TempDir() + "/missing", "--anthropic-base-url", base},
			getenvFrom(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test"}), &bytes.Buffer{}, &stderr)
		if err == nil {
			t.Fatal("serve started without its pack")
		}
		if out := stderr.String(); strings.Contains(out, secret) || !strings.Contains(out, "gateway.example.com") {
			t.Errorf("serve's log shows the base URL's key, or not the URL:\n%s", out)
		}
	}
}

// TestSecurityProviderBaseURLMasked: the base URL of an agent's provider
// (or of --provider openai) is logged when its client is built, user info
// and query masked as the configuration's.
func TestSecurityProviderBaseURLMasked(t *testing.T) {
	for _, env := range []map[string]string{
		{"OPENAI_BASE_URL": "https://coach:s3cret@gateway.example.com/v1?api-key=s3cret", "OPENAI_API_KEY": "sk-test"},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), []string{"coachd", "serve", "--addr", "127.0.0.1:0", "--db", t.TempDir() + "/c.db",
			"--pack", t.TempDir() + "/missing", "--provider", "openai", "--model", "gpt-test"},
			getenvFrom(env), &bytes.Buffer{}, &stderr)
		if err == nil {
			t.Fatal("serve started without its pack")
		}
		if out := stderr.String(); strings.Contains(out, "s3cr") || !strings.Contains(out, "gateway.example.com") {
			t.Errorf("serve's log shows the provider's base URL secrets, or not the URL:\n%s", out)
		}
	}
}

// serveUnreachable runs serve on dsn, a database it cannot reach, and
// returns what it printed and its error: serve logs its configuration,
// then fails to connect.
func serveUnreachable(t *testing.T, dsn string) string {
	t.Helper()
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"coachd", "serve", "--addr", "127.0.0.1:0", "--db", dsn},
		getenvFrom(nil), &bytes.Buffer{}, &stderr)
	if err == nil {
		t.Fatal("serve started on an unreachable database")
	}
	return stderr.String() + err.Error()
}

// TestSecurityKeywordDSNNotShown: a libpq key=value DSN in COACHD_DB is
// refused, but doctor, users list and backup refused it by quoting it
// whole, password included ("database host=… password=… does not
// exist"), into a job's log; serve and migrate masked it.
func TestSecurityKeywordDSNNotShown(t *testing.T) {
	const secret = "pgsecret-1"
	env := getenvFrom(map[string]string{"COACHD_DB": "host=127.0.0.1 port=1 user=coach password=" + secret + " dbname=coachd"})
	for _, args := range [][]string{{"doctor"}, {"users", "list"}, {"backup", "--out", t.TempDir() + "/b.db"},
		{"migrate"}, {"users", "create", "--name", "x"}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"coachd"}, args...), env, &stdout, &stderr)
		if err == nil {
			t.Fatalf("%v ran on a key=value DSN", args)
		}
		if out := stdout.String() + stderr.String() + err.Error(); strings.Contains(out, secret) || !strings.Contains(out, "127.0.0.1") {
			t.Errorf("%v shows the DSN's password, or not the DSN:\n%s", args, out)
		}
	}
}
