package coachd_test

import (
	"encoding/binary"
	"testing"

	"github.com/coachd/coachd"
)

// webp is a WebP file's RIFF header and first chunk: fourcc and payload.
func webp(fourcc string, payload []byte) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBP" + fourcc)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

func webpVP8X(w, h int) []byte {
	p := make([]byte, 10)
	p[4], p[5], p[6] = byte(w-1), byte((w-1)>>8), byte((w-1)>>16)
	p[7], p[8], p[9] = byte(h-1), byte((h-1)>>8), byte((h-1)>>16)
	return webp("VP8X", p)
}

func webpVP8L(w, h int) []byte {
	return webp("VP8L", binary.LittleEndian.AppendUint32([]byte{0x2f}, uint32(w-1)|uint32(h-1)<<14))
}

func webpVP8(w, h int) []byte {
	p := []byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a}
	p = binary.LittleEndian.AppendUint16(p, uint16(w))
	return binary.LittleEndian.AppendUint16(p, uint16(h))
}

// TestCheckAttachmentWebPSize: the API refuses an image with a side over
// 8000 pixels, or one it cannot read, on the turn it is sent and on every
// later one. PNG, JPEG and GIF were checked for both; a WebP only by its
// magic, so a 9000-pixel-wide WebP, or a WebP header with no image, was
// stored and broke its session. A WebP's size is read from its VP8, VP8L
// or VP8X chunk.
func TestCheckAttachmentWebPSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"VP8X", webpVP8X(8000, 600), true},
		{"VP8L", webpVP8L(1, 1), true},
		{"VP8", webp("VP8 ", webpVP8(640, 8000)), true},
		{"ErrVP8XWide", webpVP8X(8001, 10), false},
		{"ErrVP8LTall", webpVP8L(20, 9000), false},
		{"ErrVP8Wide", webp("VP8 ", webpVP8(9000, 10)), false},
		{"ErrVP8Empty", webp("VP8 ", webpVP8(0, 10)), false},
		{"ErrHeaderOnly", []byte("RIFF\x00\x00\x00\x00WEBPVP8 "), false},
		{"ErrVP8LSignature", webp("VP8L", []byte{0x00, 0, 0, 0, 0}), false},
		{"ErrOtherChunk", webp("ALPH", make([]byte, 10)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := coachd.CheckAttachment(coachd.MediaWebP, tc.data)
			if tc.ok && fe != nil {
				t.Fatalf("CheckAttachment = %+v, want accepted", fe)
			}
			if !tc.ok && (fe == nil || fe.Field != "data" || fe.Code != "format") {
				t.Fatalf("CheckAttachment = %+v, want a format error on data", fe)
			}
		})
	}
}
