package coachd_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"testing"

	"github.com/coachd/coachd"
)

// TestSecurityRecordedMediaBytes: a recorded image or PDF is replayed to
// the Messages API on every later turn of the session, which refuses one
// whose bytes are not what its media type says, that it cannot read, or
// whose side is over 8000 pixels: one such block broke the session for
// good. Recorded media are checked by their bytes, as attachments are.
func TestSecurityRecordedMediaBytes(t *testing.T) {
	pngOf := func(w, h int) string {
		var buf bytes.Buffer
		if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	img := func(mt, data string) string {
		return `[{"type":"image","source":{"type":"base64","media_type":"` + mt + `","data":"` + data + `"}}]`
	}
	webp := base64.StdEncoding.EncodeToString(webpBytes)
	t.Run("OK", func(t *testing.T) {
		for _, raw := range []string{
			img("image/png", pngOf(8, 8)),
			img("image/webp", webp),
			`[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQK"}}]`,
			`[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + pngOf(2, 2) + `"}}]}]`,
		} {
			if errs := coachd.CheckBlocks(coachd.RoleUser, decodeBlocks(t, raw)); len(errs) > 0 {
				t.Errorf("%.120s: %+v", raw, errs)
			}
		}
	})
	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct{ raw, field string }{
			{img("image/png", "iVBORw0KGgo="), "[0].source.data"},              // a PNG signature, no image
			{img("image/jpeg", pngOf(8, 8)), "[0].source.media_type"},          // a PNG said to be a JPEG
			{img("image/png", pngOf(8001, 1)), "[0].source.data"},              // wider than the API takes
			{img("image/webp", "UklGRg=="), "[0].source.media_type"},           // RIFF, no WebP
			{img("image/webp", "UklGRgAAAABXRUJQVlA4IA=="), "[0].source.data"}, // a WebP header, no image
			{`[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + pngOf(8, 8) + `"}}]`, "[0].source.media_type"},
			{`[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lG"}}]}]`, "[0].content[0].source.media_type"},
		} {
			errs := coachd.CheckBlocks(coachd.RoleUser, decodeBlocks(t, tc.raw))
			if len(errs) == 0 || errs[0].Field != tc.field {
				t.Errorf("%.120s: %+v, want %q first", tc.raw, errs, tc.field)
			}
		}
	})
}
