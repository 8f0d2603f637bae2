package anthropictest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

func TestMediaValidation(t *testing.T) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	pngB64 := base64.StdEncoding.EncodeToString(buf.Bytes())
	body := func(block string) string {
		return `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[` + block + `,{"type":"text","text":"what is this?"}]}]}`
	}
	src := func(typ, mt, data string) string {
		return `{"type":"` + typ + `","media_type":"` + mt + `","data":"` + data + `"}`
	}
	big := strings.Repeat("A", 5<<20+4)
	for _, tt := range []struct {
		name, body, want string
		status           int
	}{
		{"OKImage", body(`{"type":"image","source":` + src("base64", "image/png", pngB64) + `}`), `"type":"message"`, 200},
		{"OKPDF", body(`{"type":"document","source":` + src("base64", "application/pdf", "JVBERi0xLjQ=") + `,"title":"a.pdf"}`), `"type":"message"`, 200},
		{"OKText", body(`{"type":"document","source":` + src("text", "text/plain", "hello") + `}`), `"type":"message"`, 200},
		{"ErrImageType", body(`{"type":"image","source":` + src("base64", "image/bmp", pngB64) + `}`), "Input should be 'image/jpeg'", 400},
		{"ErrMismatch", body(`{"type":"image","source":` + src("base64", "image/jpeg", pngB64) + `}`), "does not match the provided media type", 400},
		{"ErrBase64", body(`{"type":"image","source":` + src("base64", "image/png", "not base64!") + `}`), "not valid base64", 400},
		{"ErrImageSize", body(`{"type":"image","source":` + src("base64", "image/png", big) + `}`), "image exceeds 5 MB maximum", 400},
		{"ErrPDF", body(`{"type":"document","source":` + src("base64", "application/pdf", pngB64) + `}`), "PDF specified was not valid", 400},
		{"ErrDocType", body(`{"type":"document","source":` + src("base64", "text/plain", "aGk=") + `}`), "Input should be 'application/pdf'", 400},
		{"ErrTextType", body(`{"type":"document","source":` + src("text", "text/html", "hi") + `}`), "Input should be 'text/plain'", 400},
		{"ErrSourceType", body(`{"type":"image","source":` + src("upload", "image/png", pngB64) + `}`), "does not match any of the expected tags", 400},
		{"ErrAssistant", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"image","source":` + src("base64", "image/png", pngB64) + `}]}]}`, "can only be in user messages", 400},
		{"ErrRequestSize", body(`{"type":"document","source":` + src("text", "text/plain", strings.Repeat("a", 32<<20)) + `}`), "request_too_large", 413},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, _, got := post(t, srv, "/v1/messages", tt.body, nil)
			if status != tt.status || !strings.Contains(string(got), tt.want) {
				t.Fatalf("%d %.300s, want %d containing %q", status, got, tt.status, tt.want)
			}
			if status != 200 {
				var e struct {
					Type  string `json:"type"`
					Error struct{ Type, Message string }
				}
				if json.Unmarshal(got, &e) != nil || e.Type != "error" || e.Error.Type == "" {
					t.Errorf("error body %.300s does not have the API's shape", got)
				}
			}
		})
	}
}
