package sqlstore_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"testing"

	"github.com/coachd/coachd"
)

// pngBytes is a small valid PNG.
func pngBytes(tb testing.TB) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 3))); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func testUploads(t *testing.T, newDSN func(tb testing.TB) string) {
	ctx := context.Background()
	db := MustOpen(t, newDSN(t), newClock())
	a := MustCreateUser(t, db, "a")
	b := MustCreateUser(t, db, "b")
	img := pngBytes(t)

	t.Run("OK", func(t *testing.T) {
		u := &coachd.Upload{UserID: a.ID, Name: "cat.png", MediaType: coachd.MediaPNG, Data: img}
		if err := db.CreateUpload(ctx, u); err != nil {
			t.Fatal(err)
		}
		if !coachd.ValidID(coachd.PrefixUpload, u.ID) || u.Bytes != len(img) || u.CreatedAt.IsZero() {
			t.Fatalf("created %+v", u)
		}
		got, err := db.FindUpload(ctx, a.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "cat.png" || got.MediaType != coachd.MediaPNG || !bytes.Equal(got.Data, img) || got.Bytes != len(img) {
			t.Fatalf("found %+v", got)
		}
		if err := db.DeleteUpload(ctx, a.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		_, err = db.FindUpload(ctx, a.ID, u.ID)
		wantCode(t, err, coachd.ENOTFOUND)
		wantCode(t, db.DeleteUpload(ctx, a.ID, u.ID), coachd.ENOTFOUND)
	})
	t.Run("ErrSpoofed", func(t *testing.T) {
		u := &coachd.Upload{UserID: a.ID, Name: "cat.jpg", MediaType: coachd.MediaJPEG, Data: img}
		wantCode(t, db.CreateUpload(ctx, u), coachd.EINVALID)
		u = &coachd.Upload{UserID: a.ID, Name: "../../etc/passwd", MediaType: coachd.MediaPNG, Data: img}
		wantCode(t, db.CreateUpload(ctx, u), coachd.EINVALID)
	})
	t.Run("ErrOtherUser", func(t *testing.T) {
		u := &coachd.Upload{UserID: a.ID, Name: "notes.txt", MediaType: coachd.MediaText, Data: []byte("secret")}
		if err := db.CreateUpload(ctx, u); err != nil {
			t.Fatal(err)
		}
		_, err := db.FindUpload(ctx, b.ID, u.ID)
		wantCode(t, err, coachd.ENOTFOUND)
		wantCode(t, db.DeleteUpload(ctx, b.ID, u.ID), coachd.ENOTFOUND)
		if _, err := db.FindUpload(ctx, a.ID, u.ID); err != nil {
			t.Fatalf("owner's upload after another user's delete: %v", err)
		}
	})
	t.Run("ErrCount", func(t *testing.T) {
		c := MustCreateUser(t, db, "c")
		for i := range coachd.MaxUploadsPerUser {
			u := &coachd.Upload{UserID: c.ID, Name: fmt.Sprintf("n%d.txt", i), MediaType: coachd.MediaText, Data: []byte("x")}
			if err := db.CreateUpload(ctx, u); err != nil {
				t.Fatalf("upload %d: %v", i, err)
			}
		}
		u := &coachd.Upload{UserID: c.ID, Name: "one-more.txt", MediaType: coachd.MediaText, Data: []byte("x")}
		wantCode(t, db.CreateUpload(ctx, u), coachd.ECONFLICT)
		if got := rawCount(t, db, `SELECT COUNT(*) FROM uploads WHERE user_id = ?`, c.ID); got != coachd.MaxUploadsPerUser {
			t.Fatalf("uploads = %d, want %d", got, coachd.MaxUploadsPerUser)
		}
	})
	t.Run("ErrBytes", func(t *testing.T) {
		d := MustCreateUser(t, db, "d")
		// One row claims nearly all the room; the bytes column is what
		// the cap sums.
		if err := rawExec(t, db, `INSERT INTO uploads (id, user_id, name, media_type, bytes, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			coachd.NewID(coachd.PrefixUpload, newClock().Now()), d.ID, "big.pdf", coachd.MediaPDF, coachd.MaxUploadBytesPerUser-10, []byte("%PDF-"), rawTime(db, newClock().Now())); err != nil {
			t.Fatal(err)
		}
		u := &coachd.Upload{UserID: d.ID, Name: "cat.png", MediaType: coachd.MediaPNG, Data: img}
		wantCode(t, db.CreateUpload(ctx, u), coachd.ECONFLICT)
		u = &coachd.Upload{UserID: d.ID, Name: "small.txt", MediaType: coachd.MediaText, Data: []byte("0123456789")}
		if err := db.CreateUpload(ctx, u); err != nil {
			t.Fatalf("an upload that fits exactly: %v", err)
		}
	})
	t.Run("ErrNoUser", func(t *testing.T) {
		u := &coachd.Upload{UserID: "usr_00000000000000000000000000", Name: "a.txt", MediaType: coachd.MediaText, Data: []byte("x")}
		wantCode(t, db.CreateUpload(ctx, u), coachd.ENOTFOUND)
	})
}
