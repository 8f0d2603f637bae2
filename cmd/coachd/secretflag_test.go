package main

import (
	"context"
	"flag"
	"log/slog"
	"strings"
	"testing"
)

// TestHelpHidesSecrets: -h prints each flag's default, and the secrets'
// defaults come from the environment (COACHD_ADMIN_KEY,
// COACHD_WEBHOOK_SECRET, COACHD_KEY): the help never shows their values,
// and the flags still take them. A review found serve -h printing both of
// serve's.
func TestHelpHidesSecrets(t *testing.T) {
	env := getenvFrom(map[string]string{
		"COACHD_ADMIN_KEY": "adminsecret-1", "COACHD_WEBHOOK_SECRET": "whsec_secret2", "COACHD_KEY": "ck_secret3",
	})
	for _, cmd := range []string{"serve", "bench", "chat", "mcp"} {
		var out, errOut syncBuffer
		run(context.Background(), []string{"coachd", cmd, "-h"}, env, &out, &errOut)
		help := out.String() + errOut.String()
		if !strings.Contains(help, "-") {
			t.Fatalf("%s -h printed no help:\n%s", cmd, help)
		}
		for _, secret := range []string{"adminsecret-1", "whsec_secret2", "ck_secret3"} {
			if strings.Contains(help, secret) {
				t.Errorf("%s -h shows %s:\n%s", cmd, secret, help)
			}
		}
	}
	// The flags still take the environment's value, and a flag's own.
	for _, args := range [][]string{nil, {"-key", "ck_flag"}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var key string
		secretVar(fs, &key, "key", env("COACHD_KEY"), "`key`")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "ck_secret3", false: "ck_flag"}[args == nil]; key != want {
			t.Errorf("args %v: key %q, want %q", args, key, want)
		}
	}
}

// TestHelpMasksURLPasswords: --db and --anthropic-base-url default to
// COACHD_DB and ANTHROPIC_BASE_URL, which carry a password (a Postgres
// DSN, a gateway's credentials) that the startup log masks; -h printed
// them whole as the flags' defaults, and --jwt-jwks-url's key too. The
// flags still take the values.
func TestHelpMasksURLPasswords(t *testing.T) {
	env := getenvFrom(map[string]string{
		"COACHD_DB":          "postgres://coachd:pgsecret-1@db.internal:5432/coachd",
		"ANTHROPIC_BASE_URL": "https://gw:gwsecret-2@gateway.internal/anthropic",
		// otlp.go masks the endpoint in its errors; -h showed it whole.
		"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel:otlpsecret-3@collector.internal:4318",
		// A realtime gateway's credentials: the startup log showed them too.
		"COACHD_VOICE_PROVIDER_URL": "https://rt:voicesecret-4@realtime.internal",
		// A JWKS behind a gateway: its key, which the fetch error hides.
		"COACHD_JWT_JWKS_URL": "https://id.internal/jwks.json?api_key=jwkssecret-5",
	})
	for _, cmd := range [][]string{{"serve"}, {"migrate"}, {"doctor"}, {"users", "list"}, {"users", "create"}, {"review"}, {"autobuild"}} {
		var out, errOut syncBuffer
		run(context.Background(), append(append([]string{"coachd"}, cmd...), "-h"), env, &out, &errOut)
		help := out.String() + errOut.String()
		if !strings.Contains(help, "-db") {
			t.Fatalf("%v -h printed no --db:\n%s", cmd, help)
		}
		for _, secret := range []string{"pgsecret-1", "gwsecret-2", "otlpsecret-3", "voicesecret-4", "jwkssecret-5"} {
			if strings.Contains(help, secret) {
				t.Errorf("%v -h shows %s:\n%s", cmd, secret, help)
			}
		}
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "voice", voiceConfig{APIKey: "k", ProviderURL: env("COACHD_VOICE_PROVIDER_URL")})
	if strings.Contains(logged.String(), "voicesecret-4") || !strings.Contains(logged.String(), "realtime.internal") {
		t.Errorf("the startup log of voice: %s", logged.String())
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	dsn := dbFlag(fs, env)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if got, want := *dsn, env("COACHD_DB"); got != want {
		t.Errorf("--db from the environment = %q, want %q", got, want)
	}
}
