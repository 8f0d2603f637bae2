package server_test

import (
	"net/http"
	"testing"

	"github.com/coachd/coachd"
)

// TestListCursorMalformedDetails: a cursor of URL-safe characters that no
// store handed out (?cursor=zzz) was answered "cursor: malformed" with no
// details, where every other bad query parameter names its field and a
// code: each listing route answers it in the one shape.
func TestListCursorMalformedDetails(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := MustEnv(t, dsn)
		sess := e.MustSession(e.alice)
		for _, route := range []struct{ name, path, key string }{
			{"Users", "/v1/users", adminKey},
			{"Sessions", "/v1/sessions", e.alice.key},
			{"Messages", "/v1/sessions/" + sess.ID + "/messages", e.alice.key},
			{"Notes", "/v1/notes", e.alice.key},
			{"Uploads", "/v1/uploads", e.alice.key},
			{"Reviews", "/v1/reviews/TASK-1/history", e.alice.key},
		} {
			for _, cursor := range []string{"zzz", "bm90LWEtY3Vyc29y", "0", "MTIz"} {
				t.Run(route.name+"/"+cursor, func(t *testing.T) {
					r := e.do(request{method: "GET", path: route.path + "?cursor=" + cursor, key: route.key})
					if r.status != http.StatusBadRequest || r.errorCode() != coachd.EINVALID {
						t.Fatalf("%d %s, want 400 %s", r.status, r.body, coachd.EINVALID)
					}
					var body struct {
						Error struct {
							Message string
							Details []coachd.FieldError
						}
					}
					mustUnmarshal(t, r.body, &body)
					want := coachd.FieldError{Field: "cursor", Message: "is not a cursor this server returned", Code: "format"}
					if len(body.Error.Details) != 1 || body.Error.Details[0] != want || body.Error.Message != want.String() {
						t.Errorf("error %s, want the one detail %+v", r.body, want)
					}
				})
			}
		}
	})
}
