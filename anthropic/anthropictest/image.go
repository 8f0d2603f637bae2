package anthropictest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"image"
	"io"
	"math"
	"strings"

	"github.com/coachd/coachd"
)

// How the API bills an image (docs.claude.com/en/docs/vision, "Calculate
// image costs"): about width×height/750 tokens, after an image whose
// long edge is over 1568 px or that would cost over about 1,600 tokens
// is scaled down, aspect kept, until it fits both.
const (
	pixelsPerToken   = 750
	maxImageEdge     = 1568
	maxImageTokenCap = 1600
)

// imageSize is the size an image block weighs in the fake's tokenizer
// (four bytes a token): its JSON without its data, plus four bytes for
// each token the API bills the picture. ok is false for any other block.
func imageSize(block []byte) (n int, ok bool) {
	if !bytes.Contains(block, []byte(`"image"`)) {
		return 0, false
	}
	var b struct {
		Type   string      `json:"type"`
		Source mediaSource `json:"source"`
	}
	if json.Unmarshal(block, &b) != nil || b.Type != coachd.BlockImage {
		return 0, false
	}
	data := ""
	if b.Source.Data != nil {
		data = *b.Source.Data
	}
	return len(block) - len(data) + 4*int(imageTokens(b.Source.Type, data)), true
}

// imageTokens is what the API bills an image with a base64 source of
// data; an image it cannot size (a URL or file source) is billed the
// most.
func imageTokens(typ, data string) int64 {
	if typ != "base64" {
		return maxImageTokenCap
	}
	w, h, ok := imageDims(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	if !ok {
		return maxImageTokenCap
	}
	fw, fh := float64(w), float64(h)
	if long := max(fw, fh); long > maxImageEdge {
		fw, fh = fw*maxImageEdge/long, fh*maxImageEdge/long
	}
	if px := fw * fh; px > maxImageTokenCap*pixelsPerToken {
		s := math.Sqrt(maxImageTokenCap * pixelsPerToken / px)
		fw, fh = fw*s, fh*s
	}
	fw, fh = max(1, math.Floor(fw)), max(1, math.Floor(fh))
	return max(1, int64(math.Ceil(fw*fh/pixelsPerToken)))
}

// imageDims reads an image's size from its header: PNG, JPEG and GIF by
// the standard library, WebP (which it has no decoder for) by its
// VP8, VP8L or VP8X chunk.
func imageDims(r io.Reader) (w, h int, ok bool) {
	head := make([]byte, 30)
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	if n >= 30 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP" {
		return webpDims(head)
	}
	cfg, _, err := image.DecodeConfig(io.MultiReader(bytes.NewReader(head), r))
	if err != nil || cfg.Width < 1 || cfg.Height < 1 {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}

// webpDims reads a WebP's size from the first 30 bytes of its file.
func webpDims(b []byte) (w, h int, ok bool) {
	u24 := func(p []byte) int { return int(p[0]) | int(p[1])<<8 | int(p[2])<<16 }
	switch string(b[12:16]) {
	case "VP8X": // canvas width-1 and height-1, 24 bits each
		return u24(b[24:]) + 1, u24(b[27:]) + 1, true
	case "VP8L": // signature 0x2f, then width-1 and height-1, 14 bits each
		if b[20] != 0x2f {
			return 0, 0, false
		}
		bits := binary.LittleEndian.Uint32(b[21:25])
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, true
	case "VP8 ": // a key frame's start code, then 14-bit width and height
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0, false
		}
		return int(binary.LittleEndian.Uint16(b[26:]) & 0x3fff), int(binary.LittleEndian.Uint16(b[28:]) & 0x3fff), true
	}
	return 0, 0, false
}
