package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestSecurityNoteCapHTTP: issue 20 finding 8 (caps). POST /v1/notes
// beyond the user's note cap answers 409 with a message that says what to
// do, on both backends; another user is not affected.
func TestSecurityNoteCapHTTP(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := MustEnv(t, dsn)
		for i := range coachd.MaxNotesPerUser {
			if err := e.db.CreateNote(context.Background(), &coachd.Note{UserID: e.alice.ID, Type: "tip", Title: fmt.Sprint(i), Content: "c"}); err != nil {
				t.Fatal(err)
			}
		}
		body := `{"note_type":"tip","title":"one more","content":"c"}`
		r := e.do(request{method: "POST", path: "/v1/notes", key: e.alice.key, body: body})
		if r.status != http.StatusConflict || r.errorCode() != coachd.ECONFLICT ||
			!strings.Contains(string(r.body), "note limit reached (1000 notes): delete some first") {
			t.Fatalf("POST /v1/notes at the cap = %d %s", r.status, r.body)
		}
		if r := e.do(request{method: "POST", path: "/v1/notes", key: e.bob.key, body: body}); r.status != http.StatusCreated {
			t.Fatalf("another user's note = %d %s", r.status, r.body)
		}
	})
}
