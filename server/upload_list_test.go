package server_test

import (
	"fmt"
	"testing"

	"github.com/coachd/coachd"
)

// TestUploadList: at the per-user cap an upload is refused with "delete
// some first", so a client must be able to find its uploads again: GET
// /v1/uploads lists the caller's own, newest first, without their bytes,
// in pages. Before, the route did not exist (405), and a client that had
// not kept every id could never upload again.
func TestUploadList(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := MustEnv(t, dsn)
		img := pngFile(t)
		var ids []string
		for i := range coachd.MaxUploadsPerUser {
			ids = append(ids, e.mustUpload(e.alice.key, fmt.Sprintf("p%d.png", i), img).ID)
		}
		e.mustUpload(e.bob.key, "bobs.png", img)
		if r := e.upload(e.alice.key, "one-more.png", img); r.status != 409 {
			t.Fatalf("past the cap: %d %s, want 409", r.status, r.body)
		}
		type page struct {
			Uploads []struct {
				ID     string `json:"id"`
				UserID string `json:"user_id"`
				Name   string `json:"name"`
				Bytes  int    `json:"bytes"`
				Data   any    `json:"data"`
			} `json:"uploads"`
			NextCursor string `json:"next_cursor"`
		}
		var got []string
		cursor := ""
		for {
			r := e.do(request{method: "GET", path: "/v1/uploads?limit=30&cursor=" + cursor, key: e.alice.key})
			if r.status != 200 {
				t.Fatalf("list: %d %s", r.status, r.body)
			}
			var p page
			mustUnmarshal(t, r.body, &p)
			for _, u := range p.Uploads {
				if u.UserID != e.alice.ID || u.Bytes != len(img) || u.Data != nil {
					t.Fatalf("listed %+v", u)
				}
				got = append(got, u.ID)
			}
			if cursor = p.NextCursor; cursor == "" {
				break
			}
		}
		if len(got) != len(ids) || got[0] != ids[len(ids)-1] || got[len(got)-1] != ids[0] {
			t.Fatalf("listed %d uploads (first %s), want alice's %d, newest first", len(got), got[0], len(ids))
		}
		// Found, one is deleted, and there is room again.
		if r := e.do(request{method: "DELETE", path: "/v1/uploads/" + got[len(got)-1], key: e.alice.key}); r.status != 204 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		e.mustUpload(e.alice.key, "one-more.png", img)
		if r := e.do(request{method: "GET", path: "/v1/uploads?cursor=bogus", key: e.alice.key}); r.status != 400 || r.errorCode() != coachd.EINVALID {
			t.Fatalf("bad cursor: %d %s", r.status, r.body)
		}
	})
}
