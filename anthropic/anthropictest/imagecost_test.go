package anthropictest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// pngOf encodes a w×h PNG: blank (a few KB whatever its size) or noisy
// (incompressible: its base64 is many times its pixels).
func pngOf(t *testing.T, w, h int, noisy bool) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	if noisy {
		r := rand.New(rand.NewPCG(1, 2))
		for i := range img.Pix {
			img.Pix[i] = uint8(r.UintN(256))
		}
	} else {
		img.Set(0, 0, color.White)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// webpOf is the header of a w×h extended (VP8X) WebP: what the API reads
// its size from.
func webpOf(w, h int) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00")
	var side [4]byte
	binary.LittleEndian.PutUint32(side[:], uint32(w-1))
	b = append(b, side[:3]...)
	binary.LittleEndian.PutUint32(side[:], uint32(h-1))
	b = append(b, side[:3]...)
	return b
}

// TestImageTokens: the fake bills an image as the API does, about
// width×height/750 tokens once scaled to fit 1568 px on its long side
// and about 1,600 tokens, not by the length of its base64.
func TestImageTokens(t *testing.T) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	body := func(media, data string) string {
		img := ""
		if data != "" {
			img = `{"type":"image","source":{"type":"base64","media_type":"` + media + `","data":"` + data + `"}},`
		}
		return `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[` + img + `{"type":"text","text":"what is this?"}]}]}`
	}
	_, _, b := post(t, srv, "/v1/messages", body("", ""), nil)
	text := usageOf(t, b).InputTokens
	for _, tt := range []struct {
		name     string
		media    string
		data     []byte
		min, max int64
	}{
		{"SmallNoisy", "image/png", pngOf(t, 300, 200, true), 80, 80}, // 60,000 px / 750; its base64 is 80 KB
		{"LargeBlank", "image/png", pngOf(t, 3000, 2000, false), 1550, 1600},
		{"LongEdge", "image/png", pngOf(t, 2000, 200, false), 326, 327}, // 1568×156.8 / 750
		{"WebP", "image/webp", webpOf(1000, 600), 800, 800},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, _, b := post(t, srv, "/v1/messages", body(tt.media, base64.StdEncoding.EncodeToString(tt.data)), nil)
			if status != 200 {
				t.Fatalf("%d %.300s", status, b)
			}
			// The block's JSON around the data costs a few tokens more.
			got := usageOf(t, b).InputTokens - text
			if got < tt.min || got > tt.max+25 {
				t.Fatalf("image billed %d tokens, want %d..%d (+ its block's few); its base64 is %d bytes", got, tt.min, tt.max, len(tt.data)*4/3)
			}
		})
	}
	t.Run("CountTokens", func(t *testing.T) {
		count := func(body string) int64 {
			var c struct {
				InputTokens int64 `json:"input_tokens"`
			}
			_, _, b := post(t, srv, "/v1/messages/count_tokens", body, nil)
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			return c.InputTokens
		}
		text := count(body("", ""))
		if got := count(body("image/png", base64.StdEncoding.EncodeToString(pngOf(t, 300, 200, true)))) - text; got < 80 || got > 105 {
			t.Fatalf("count_tokens: image counted %d tokens, want about 80", got)
		}
	})
}
