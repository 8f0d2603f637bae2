package server

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestStreamAuthJWTRevoked: the check a session stream opened with an
// identity provider's token runs before each turn fails once an admin
// revoked the user (whose tokens stop working then), and passes again
// after a rotation gives the user back its access.
func TestStreamAuthJWTRevoked(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "c.db"), coachd.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s := New(Deps{Store: db, AdminKey: "ck_admin_streamauth", JWT: &JWTConfig{JWKSURL: "http://127.0.0.1:1/", Issuer: "i", Audience: "a"}})
	u := &coachd.User{Name: "ada", TokenBudget: 1000, ExternalID: "i|ada"}
	if err := db.CreateUser(ctx, u, HashAPIKey(NewAPIKey())); err != nil {
		t.Fatal(err)
	}
	// The stream's request was authenticated: only its expiry is read again.
	r := httptest.NewRequest("GET", "/v1/sessions/sess_x/stream", nil)
	r.Header.Set("Authorization", "Bearer e30."+base64.RawURLEncoding.EncodeToString([]byte(`{"exp":`+strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)+`}`))+".c2ln")
	check := s.streamAuth(r, u, false)
	if check == nil {
		t.Fatal("a stream opened with a token is never checked again")
	}
	if err := check(ctx); err != nil {
		t.Fatalf("before the revocation: %v", err)
	}
	admin := func(method string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, "/v1/users/"+u.ID+"/key", nil)
		req.Header.Set("Authorization", "Bearer ck_admin_streamauth")
		s.ServeHTTP(rec, req)
		if rec.Code/100 != 2 {
			t.Fatalf("%s key: %d %s", method, rec.Code, rec.Body)
		}
	}
	admin("DELETE")
	if err := check(ctx); coachd.ErrorCode(err) != coachd.EUNAUTHORIZED {
		t.Errorf("after the revocation: %v, want unauthorized", err)
	}
	admin("POST")
	if err := check(ctx); err != nil {
		t.Errorf("after a rotation: %v", err)
	}
}
