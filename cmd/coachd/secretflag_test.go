package main

import (
	"context"
	"flag"
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
