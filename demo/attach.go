package demo

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coachd/coachd"
)

// seen acknowledges the images and documents of a message: "I see 1 image
// (image/png, 12 KB)." The demo cannot look at them; it says what it got.
func seen(blocks []coachd.Block) string {
	var images, docs []string
	for _, b := range blocks {
		typ, size, ok := coachd.AttachmentInfo(b)
		if !ok {
			continue
		}
		desc := fmt.Sprintf("%s, %s", typ, kb(size))
		if title := docTitle(b); title != "" {
			desc = fmt.Sprintf("“%s”, %s", title, desc)
		}
		if b.Type == coachd.BlockImage {
			images = append(images, desc)
		} else {
			docs = append(docs, desc)
		}
	}
	var parts []string
	if len(images) > 0 {
		parts = append(parts, count(len(images), "image")+" ("+strings.Join(images, "; ")+")")
	}
	if len(docs) > 0 {
		parts = append(parts, count(len(docs), "document")+" ("+strings.Join(docs, "; ")+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "I see " + strings.Join(parts, " and ") + "."
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func kb(n int) string { return fmt.Sprintf("%d KB", (n+1023)/1024) }

func docTitle(b coachd.Block) string {
	var t string
	if raw, ok := b.Extra["title"]; ok {
		_ = json.Unmarshal(raw, &t)
	}
	return t
}

// mediaChars is what the images and documents of msgs add to the
// request's size as base64, and what they count as instead: a model reads
// an image as about 1,600 tokens, not as its base64.
func mediaChars(msgs []coachd.ModelMessage) (data, instead int) {
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if _, _, ok := coachd.AttachmentInfo(b); !ok {
				continue
			}
			var s struct {
				Data string `json:"data"`
			}
			_ = json.Unmarshal(b.Source, &s)
			data += len(s.Data)
			instead += 1600 * 4
		}
	}
	return data, instead
}
