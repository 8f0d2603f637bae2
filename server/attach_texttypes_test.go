package server_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// textFiles are text documents as browsers type them: what a user of
// useChat or Open WebUI attaches as notes.md, data.csv or config.json.
var textFiles = []struct{ name, mediaType, data string }{
	{"notes.md", "text/markdown", "# Shift\n\n- airport at 6\n"},
	{"data.csv", "text/csv", "day,km\nmon,120\n"},
	{"config.json", "application/json", `{"goal":"5k"}`},
}

// textDoor sends one user message of text and files (name, declared
// type, data URL) through one of the doors that take data: URLs.
type textDoor struct {
	name string
	send func(e *chatEnv, files [][3]string) (status int, body string)
}

func textDoors(t *testing.T) []textDoor {
	return []textDoor{
		{"AISDK", func(e *chatEnv, files [][3]string) (int, string) {
			parts := []string{`{"type":"text","text":"Read these."}`}
			for _, f := range files {
				parts = append(parts, `{"type":"file","mediaType":`+jsonText(f[1])+`,"filename":`+jsonText(f[0])+`,"url":`+jsonText(f[2])+`}`)
			}
			s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-text", parts...))
			if s.status != 200 {
				return s.status, string(s.errBody.body)
			}
			return s.status, string(s.raw)
		}},
		{"Coachd", func(e *chatEnv, files [][3]string) (int, string) {
			var list []string
			for _, f := range files {
				_, b64, _ := strings.Cut(f[2], ";base64,")
				list = append(list, `{"type":"document","media_type":`+jsonText(f[1])+`,"name":`+jsonText(f[0])+`,"data":`+jsonText(b64)+`}`)
			}
			r := e.do(request{method: "POST", path: "/v1/chat", key: e.alice.key, body: `{"message":"Read these.","attachments":[` + strings.Join(list, ",") + `]}`})
			return r.status, string(r.body)
		}},
		{"OpenAI", func(e *chatEnv, files [][3]string) (int, string) {
			parts := []any{map[string]any{"type": "text", "text": "Read these."}}
			for _, f := range files {
				parts = append(parts, map[string]any{"type": "file", "file": map[string]string{"filename": f[0], "file_data": f[2]}})
			}
			r := e.post(e.alice.key, "/v1/chat/completions", mustJSON(t, map[string]any{"model": "default",
				"messages": []any{map[string]any{"role": "user", "content": parts}}}), nil, nil)
			return r.status, string(r.body)
		}},
	}
}

// TestTextTypesAcrossDoors: the upload door takes any file whose bytes
// are text (notes.md, data.csv, config.json) as a text document; the AI
// SDK's and the OpenAI door took only files declared text/plain, so a
// useChat user's notes.md was a 400. They now take a file declared as
// text (text/*, JSON, XML, YAML) as a text document (text/plain, its
// name its title), with the same checks on its bytes and the same
// limits: bytes that are not text, or more than 100 KiB of text, are a
// 400 naming the file, and nothing reaches the model.
func TestTextTypesAcrossDoors(t *testing.T) {
	for _, door := range textDoors(t) {
		t.Run(door.name, func(t *testing.T) {
			t.Run("OK", func(t *testing.T) {
				e := MustChatEnv(t, nil)
				e.fake.Enqueue(anthropictest.Text("Read them.", 4))
				var files [][3]string
				for _, f := range textFiles {
					files = append(files, [3]string{f.name, f.mediaType, "data:" + f.mediaType + ";base64," + base64.StdEncoding.EncodeToString([]byte(f.data))})
				}
				if status, body := door.send(e, files); status != 200 {
					t.Fatalf("%d %s", status, body)
				}
				reqs := e.fake.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%d model requests", len(reqs))
				}
				msgs := reqs[0].Messages()
				blocks := msgs[len(msgs)-1].Blocks
				kinds, data := sources(t, blocks)
				if strings.Join(kinds, ",") != "document:text:text/plain,document:text:text/plain,document:text:text/plain,text" {
					t.Fatalf("the user message's blocks: %v", kinds)
				}
				for i, f := range textFiles {
					var title string
					json.Unmarshal(blocks[i].Extra["title"], &title)
					if data[i] != f.data || title != f.name {
						t.Errorf("%s: %q titled %q", f.name, data[i], title)
					}
				}
				// The upload door agrees: the same bytes are a text document.
				for _, f := range textFiles {
					if u := e.mustUpload(e.alice.key, f.name, []byte(f.data)); u.MediaType != coachd.MediaText {
						t.Errorf("upload %s: %s", f.name, u.MediaType)
					}
				}
			})
			for _, tc := range []struct {
				name      string
				file      [3]string
				wantParts []string
			}{
				{"ErrNotText", [3]string{"notes.md", "text/markdown", "data:text/markdown;base64," + base64.StdEncoding.EncodeToString(pngFile(t))}, []string{"text/markdown", "but the content is image/png"}},
				{"ErrTooLong", [3]string{"notes.md", "text/markdown", "data:text/markdown;base64," + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("notes ", 20<<10)))}, []string{"100 KiB"}},
				{"ErrBinaryJSON", [3]string{"config.json", "application/json", "data:application/json;base64," + base64.StdEncoding.EncodeToString([]byte("{\x00}"))}, []string{"not a supported file"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					e := MustChatEnv(t, nil)
					status, body := door.send(e, [][3]string{tc.file})
					if status != 400 {
						t.Fatalf("%d %s", status, body)
					}
					for _, want := range tc.wantParts {
						if !strings.Contains(body, want) {
							t.Errorf("the error %q does not say %q", body, want)
						}
					}
					if door.name == "AISDK" && !strings.Contains(body, `"`+tc.file[0]+`"`) {
						t.Errorf("the error %q does not name the file", body)
					}
					if n := len(e.fake.Requests()); n != 0 {
						t.Errorf("%d model requests", n)
					}
				})
			}
		})
	}
}
