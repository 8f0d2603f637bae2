package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore"
)

// demoUserName names the user --demo creates.
const demoUserName = "demo"

// announceDemo makes sure the demo user exists and prints how to call the
// API as that user.
func announceDemo(ctx context.Context, store *sqlstore.DB, baseURL string, budget int64, stdout io.Writer) error {
	u, err := findUserByName(ctx, store, demoUserName)
	if err != nil {
		return err
	}
	// Keys are stored only hashed: an existing demo user gets a new key on
	// every start, so the printed one always works.
	var key string
	if u == nil {
		u = &coachd.User{Name: demoUserName, TokenBudget: budget}
		if key, err = server.CreateUser(ctx, store, u); err != nil {
			return fmt.Errorf("create demo user: %w", err)
		}
	} else if u.ExternalID != "" {
		// Names are unique, and a user made from a token chose its own:
		// a key for it would let the console's reader act as that person.
		return fmt.Errorf("the user named %q signs in with the identity provider: --demo will not give it an API key (rename it with PATCH /v1/users/%s, or use another database)", demoUserName, u.ID)
	} else {
		key = server.NewAPIKey()
		if err := store.SetUserKey(ctx, u.ID, server.HashAPIKey(key)); err != nil {
			return fmt.Errorf("rotate demo key: %w", err)
		}
	}
	fmt.Fprintf(stdout, "demo user %s\nAPI key: %s\nopen %s/#key=%s to chat in your browser\ntry: curl -H 'Authorization: Bearer %s' %s/v1/me\n",
		u.ID, key, baseURL, key, key, baseURL)
	return nil
}

// demoURL is the URL the demo lines print for a server listening on
// actual (ln.Addr) as addr (--addr) asked: a loopback address when addr
// names no host or an unspecified one (0.0.0.0, ::), which browsers refuse
// to open and Windows cannot connect to.
func demoURL(addr, actual string) string {
	host, _, _ := net.SplitHostPort(addr)
	_, port, err := net.SplitHostPort(actual)
	if ip := net.ParseIP(host); err == nil && (host == "" || ip != nil && ip.IsUnspecified()) {
		loopback := "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			loopback = "::1"
		}
		return "http://" + net.JoinHostPort(loopback, port)
	}
	return "http://" + actual
}

// findUserByName returns the first user called name, or nil. It scans
// every user: the store has no lookup by name, and this runs once, at
// start-up with --demo.
func findUserByName(ctx context.Context, store coachd.UserService, name string) (*coachd.User, error) {
	var found *coachd.User
	err := eachUser(ctx, store, func(u *coachd.User) bool {
		if u.Name == name {
			found = u
		}
		return found == nil
	})
	return found, err
}
