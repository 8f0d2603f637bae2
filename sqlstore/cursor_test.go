package sqlstore

import (
	"strconv"
	"testing"

	"github.com/coachd/coachd"
)

func TestCursorRoundTrip(t *testing.T) {
	tc := timeIDCursor{1767225600123456, "sess_01jgz0m5v8f9p3w4x5y6z7a8b9"}
	got, err := decodeTimeIDCursor(tc.String(), coachd.PrefixSession)
	if err != nil || got != tc {
		t.Fatalf("timeIDCursor round trip = %+v, %v", got, err)
	}
	nc := noteCursor{true, 73, -5, "note_01jgz0m5v8f9p3w4x5y6z7a8b9"}
	gotN, err := decodeNoteCursor(nc.String())
	if err != nil || gotN != nc {
		t.Fatalf("noteCursor round trip = %+v, %v", gotN, err)
	}
	if seq, err := decodeSeqCursor("42"); err != nil || seq != 42 {
		t.Fatalf("seq cursor = %d, %v", seq, err)
	}
}

// FuzzDecodeCursor feeds arbitrary strings to every cursor decoder: none
// may panic, every failure must be EINVALID, and whatever decodes must
// encode back to the same cursor (so a cursor names exactly one position).
func FuzzDecodeCursor(f *testing.F) {
	f.Add("")
	f.Add("17")
	f.Add(timeIDCursor{1767225600123456, "sess_01jgz0m5v8f9p3w4x5y6z7a8b9"}.String())
	f.Add(noteCursor{false, 50, 1767225600123456, "note_01jgz0m5v8f9p3w4x5y6z7a8b9"}.String())
	f.Add(encodeCursor("usr_01jgz0m5v8f9p3w4x5y6z7a8b9"))
	f.Fuzz(func(t *testing.T, s string) {
		check := func(what string, err error, reencoded string) {
			if err != nil {
				if coachd.ErrorCode(err) != coachd.EINVALID {
					t.Fatalf("%s(%q): error %v is not EINVALID", what, s, err)
				}
				return
			}
			if reencoded != s {
				t.Fatalf("%s(%q) re-encodes as %q", what, s, reencoded)
			}
		}
		if seq, err := decodeSeqCursor(s); err == nil && s != "" {
			check("seq", nil, strconv.FormatInt(seq, 10))
		} else if err != nil {
			check("seq", err, "")
		}
		if s == "" {
			return
		}
		tc, err := decodeTimeIDCursor(s, coachd.PrefixSession)
		check("timeID", err, tc.String())
		nc, err := decodeNoteCursor(s)
		check("note", err, nc.String())
		id, err := decodeIDCursor(s, coachd.PrefixUser)
		check("id", err, encodeCursor(id))
	})
}
