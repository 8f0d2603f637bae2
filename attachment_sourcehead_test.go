package coachd

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzSourceHead: readSourceHead's fast path for AttachmentBlock's
// sources reads what a decode of the whole source does.
func FuzzSourceHead(f *testing.F) {
	for _, s := range []string{
		string(AttachmentBlock(MediaPNG, "", []byte("\x89PNG\r\n\x1a\nxx")).Source),
		string(AttachmentBlock(MediaText, "a.txt", []byte("line\n\"quoted\" é")).Source),
		`{"data":"QUJD","media_type":"image/png","type":"base64","data":"QQ=="}`,
		`{"data":"QUJD"}`,
		`{"data":"QUJD","DATA":"QQ=="}`,
		`{"data":"QUJD","d\u0061ta":null}`,
		`{"data":"QUJD",}`,
		`{"data":"QU\u0000JD","type":"base64"}`,
		`{"data":"QUJD","type":"base64"} x`,
		`{"data":"QUJD"`,
		`{"data":"","media_type":null,"type":"base64"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var want sourceHead
		wantOK := json.Unmarshal([]byte(src), &want) == nil
		got, ok := readSourceHead([]byte(src))
		if ok != wantOK || (ok && got != want) {
			t.Fatalf("readSourceHead = %+v, %v; decoded %+v, %v", got, ok, want, wantOK)
		}
	})
}

// BenchmarkAttachmentInfo is a turn's question of one stored 3 MiB
// photo: its media type and size (asked several times a round for each
// photo the turn re-sends).
func BenchmarkAttachmentInfo(b *testing.B) {
	photo := AttachmentBlock(MediaJPEG, "", []byte("\xff\xd8\xff"+strings.Repeat("x", 3<<20)))
	b.SetBytes(int64(base64.StdEncoding.EncodedLen(3 << 20)))
	for b.Loop() {
		if typ, n, ok := AttachmentInfo(photo); !ok || typ != MediaJPEG || n != 3<<20+3 {
			b.Fatal(typ, n, ok)
		}
	}
}

// TestPlainJSONString checks the eight-at-a-time scan at every position
// of a long run against the byte-at-a-time rule.
func TestPlainJSONString(t *testing.T) {
	for _, c := range []byte{0, 0x1f, 0x20, '"', '\\', 'A', '=', 0x7f, 0x80, 0xff} {
		want := !(c < 0x20 || c == '\\' || c >= 0x80)
		for i := range 19 {
			b := []byte(strings.Repeat("QUJD", 5))[:19]
			b[i] = c
			if got := plainJSONString(b); got != want {
				t.Errorf("byte %#x at %d: %v", c, i, got)
			}
		}
	}
}
