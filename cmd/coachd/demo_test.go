package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestDemoLeavesSignedInUsers: a user created from an identity
// provider's token chooses its own name, which may be "demo". --demo
// must not take that user over (give it an API key and print it): it
// refuses, and the user's sign-in stays as it was.
func TestDemoLeavesSignedInUsers(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "c.db"))
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	hash := server.HashAPIKey(server.NewAPIKey())
	signedIn := &coachd.User{Name: demoUserName, TokenBudget: 1000, ExternalID: "https://id.example.com|user-42"}
	if err := db.CreateUser(ctx, signedIn, hash); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err := announceDemo(ctx, db, "http://127.0.0.1:8080", 1000, &out)
	if err == nil || !strings.Contains(err.Error(), "identity provider") {
		t.Fatalf("--demo with a signed-in user named demo: %v; want a refusal naming why", err)
	}
	if strings.Contains(out.String(), "ck_") {
		t.Fatalf("a key was printed:\n%s", out.String())
	}
	if u, err := db.FindUserByKeyHash(ctx, hash); err != nil || u.ID != signedIn.ID {
		t.Fatalf("the signed-in user's key changed: %v %v", u, err)
	}
}
