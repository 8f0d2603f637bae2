package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// pngFile is a small valid PNG.
func pngFile(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var pdfFile = []byte("%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF\n")

// upload posts one file to /v1/uploads as multipart/form-data.
func (e *env) upload(key, name string, data []byte) response {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(data)
	mw.Close()
	return e.do(request{method: "POST", path: "/v1/uploads", key: key, body: body.String(),
		header: map[string]string{"Content-Type": mw.FormDataContentType()}})
}

func (e *env) mustUpload(key, name string, data []byte) coachd.Upload {
	e.t.Helper()
	r := e.upload(key, name, data)
	if r.status != http.StatusCreated {
		e.t.Fatalf("upload %s: %d %s", name, r.status, r.body)
	}
	var u coachd.Upload
	mustUnmarshal(e.t.(*testing.T), r.body, &u)
	return u
}

func inline(typ, mediaType string, data []byte) string {
	return fmt.Sprintf(`{"type":%q,"media_type":%q,"data":%q,"name":"x"}`, typ, mediaType, base64.StdEncoding.EncodeToString(data))
}

// sources returns the type and media type of each block, and the data of
// each source, in order.
func sources(t *testing.T, blocks []coachd.Block) (kinds []string, data []string) {
	t.Helper()
	for _, b := range blocks {
		if b.Type != coachd.BlockImage && b.Type != coachd.BlockDocument {
			kinds = append(kinds, b.Type)
			continue
		}
		var s struct{ Type, MediaType, Data string }
		var raw map[string]string
		if err := json.Unmarshal(b.Source, &raw); err != nil {
			t.Fatal(err)
		}
		s.Type, s.MediaType, s.Data = raw["type"], raw["media_type"], raw["data"]
		kinds = append(kinds, b.Type+":"+s.Type+":"+s.MediaType)
		data = append(data, s.Data)
	}
	return kinds, data
}

func TestChatAttachments(t *testing.T) {
	e := MustChatEnv(t, nil)
	img := pngFile(t)
	doc := e.mustUpload(e.alice.key, "../../report.pdf", pdfFile)
	if doc.Name != "report.pdf" || doc.MediaType != coachd.MediaPDF {
		t.Fatalf("upload = %+v", doc)
	}

	e.fake.Enqueue(anthropictest.Text("Nice picture.", 3), anthropictest.Text("Still here.", 3))
	r := e.do(request{method: "POST", path: "/v1/chat", key: e.alice.key,
		body: `{"message":"what is this?","attachments":[` + inline("image", "image/png", img) + `,{"upload_id":"` + doc.ID + `"}]}`})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var res struct {
		SessionID string `json:"session_id"`
	}
	mustUnmarshal(t, r.body, &res)

	wantKinds := []string{"image:base64:image/png", "document:base64:application/pdf", "text"}
	wantData := []string{base64.StdEncoding.EncodeToString(img), base64.StdEncoding.EncodeToString(pdfFile)}
	reqs := e.fake.Requests()
	msgs := reqs[len(reqs)-1].Messages()
	kinds, data := sources(t, msgs[len(msgs)-1].Blocks)
	if !reflect.DeepEqual(kinds, wantKinds) || !reflect.DeepEqual(data, wantData) {
		t.Fatalf("the model got %v", kinds)
	}

	// The upload goes; the message keeps its copy, and the next turn's
	// history (with no attachments from the client) comes from the store.
	if r := e.do(request{method: "DELETE", path: "/v1/uploads/" + doc.ID, key: e.alice.key}); r.status != 204 {
		t.Fatalf("delete upload: %d %s", r.status, r.body)
	}
	r = e.do(request{method: "POST", path: "/v1/chat", key: e.alice.key, body: `{"message":"and now?","session_id":"` + res.SessionID + `"}`})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	reqs = e.fake.Requests()
	msgs = reqs[len(reqs)-1].Messages()
	if len(msgs) != 3 {
		t.Fatalf("second turn sent %d messages, want 3", len(msgs))
	}
	kinds, data = sources(t, msgs[0].Blocks)
	if !reflect.DeepEqual(kinds, wantKinds) || !reflect.DeepEqual(data, wantData) {
		t.Fatalf("history re-sent %v", kinds)
	}

	// The listing shows the stored blocks.
	r = e.do(request{method: "GET", path: "/v1/sessions/" + res.SessionID + "/messages", key: e.alice.key})
	if r.status != 200 || !strings.Contains(string(r.body), `"type":"image"`) || !strings.Contains(string(r.body), `"title":"report.pdf"`) {
		t.Fatalf("messages: %d %.500s", r.status, r.body)
	}

	t.Run("TextDocumentOnly", func(t *testing.T) {
		e.fake.Enqueue(anthropictest.Text("Read it.", 3))
		st := e.chat(t.Context(), e.alice.key, "", `{"attachments":[`+inline("document", "text/plain", []byte("shift notes\n"))+`]}`)
		if st.status != 200 || len(st.named("message_end")) != 1 {
			t.Fatalf("%d %s", st.status, st.raw)
		}
		reqs := e.fake.Requests()
		msgs := reqs[len(reqs)-1].Messages()
		kinds, data := sources(t, msgs[len(msgs)-1].Blocks)
		if !reflect.DeepEqual(kinds, []string{"document:text:text/plain"}) || data[0] != "shift notes\n" {
			t.Fatalf("the model got %v %q", kinds, data)
		}
	})
}

func TestChatAttachmentsRefused(t *testing.T) {
	e := MustChatEnv(t, nil)
	img := pngFile(t)
	bobs := e.mustUpload(e.bob.key, "bob.png", img)
	six := strings.Repeat(inline("image", "image/png", img)+",", 5) + inline("image", "image/png", img)
	big := bytes.Repeat([]byte("a"), coachd.MaxAttachmentBytes+1)
	three := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("b"), coachd.MaxAttachmentBytesPerMessage/4+1024)...)
	four := strings.Repeat(inline("document", "application/pdf", three)+",", 3) + inline("document", "application/pdf", three)
	// Text is read as tokens: 3 MiB of it is far past the model's context,
	// and two documents within the limit are past it together.
	text3MiB := bytes.Repeat([]byte("c"), coachd.MaxAttachmentBytes)
	half := []byte(strings.Repeat("漢", coachd.MaxTextAttachmentBytes/3/2+1))
	halfUpload := e.mustUpload(e.alice.key, "half.txt", half)
	before := e.dump()
	for _, tt := range []struct {
		name, attachments, field string
		status                   int
	}{
		{"ErrSpoofed", inline("image", "image/jpeg", img), "attachments[0].media_type", 400},
		{"ErrScriptAsImage", inline("image", "image/png", []byte("<script>alert(1)</script>")), "attachments[0].media_type", 400},
		{"ErrKind", inline("document", "image/png", img), "attachments[0].media_type", 400},
		{"ErrBase64", `{"type":"image","media_type":"image/png","data":"!!!"}`, "attachments[0].data", 400},
		{"ErrCount", six, "attachments", 400},
		{"ErrOversize", inline("document", "text/plain", big), "attachments[0].data", 400},
		{"ErrTotal", four, "attachments", 400},
		{"ErrText3MiB", inline("document", "text/plain", text3MiB), "attachments[0].data", 400},
		{"ErrTextTotal", inline("document", "text/plain", half) + "," + inline("document", "text/plain", half), "attachments", 400},
		{"ErrTextTotalUpload", `{"upload_id":"` + halfUpload.ID + `"},` + inline("document", "text/plain", half), "attachments", 400},
		{"ErrOtherUsersUpload", `{"upload_id":"` + bobs.ID + `"}`, "attachments[0].upload_id", 400},
		{"ErrUploadAndInline", `{"upload_id":"` + bobs.ID + `","data":"aGk="}`, "attachments[0].upload_id", 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/v1/chat", "/v1/chat/stream"} {
				r := e.do(request{method: "POST", path: path, key: e.alice.key, header: map[string]string{"Accept": "application/json"},
					body: `{"message":"look","attachments":[` + tt.attachments + `]}`})
				var body struct {
					Error struct {
						Code    string              `json:"code"`
						Details []coachd.FieldError `json:"details"`
					} `json:"error"`
				}
				mustUnmarshal(t, r.body, &body)
				if r.status != tt.status || body.Error.Code != coachd.EINVALID || len(body.Error.Details) == 0 || body.Error.Details[0].Field != tt.field {
					t.Fatalf("%s: %d %.400s, want %d on %s", path, r.status, r.body, tt.status, tt.field)
				}
			}
		})
	}
	t.Run("ErrBodyTooLarge", func(t *testing.T) {
		pad := strings.Repeat("A", server.ChatMaxBodyBytes)
		r := e.do(request{method: "POST", path: "/v1/chat", key: e.alice.key, body: `{"message":"` + pad + `"}`})
		if r.status != 413 || r.errorCode() != coachd.ETOOLARGE {
			t.Fatalf("%d %.300s", r.status, r.body)
		}
	})
	if len(e.fake.Requests()) != 0 {
		t.Fatalf("the model was called %d times", len(e.fake.Requests()))
	}
	if after := e.dump(); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused request changed the database")
	}
	// Bob's upload is still his alone.
	if r := e.do(request{method: "GET", path: "/v1/uploads/" + bobs.ID, key: e.alice.key}); r.status != 404 {
		t.Fatalf("alice reads bob's upload: %d", r.status)
	}
}

func TestUploads(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := MustEnv(t, dsn)
		img := pngFile(t)
		u := e.mustUpload(e.alice.key, "../photos/\u202Ecat.png", img)
		if !coachd.ValidID(coachd.PrefixUpload, u.ID) || u.Name != "cat.png" || u.MediaType != coachd.MediaPNG || u.Bytes != len(img) {
			t.Fatalf("upload = %+v", u)
		}

		t.Run("Get", func(t *testing.T) {
			req, _ := http.NewRequest("GET", e.url+"/v1/uploads/"+u.ID, nil)
			req.Header.Set("Authorization", "Bearer "+e.alice.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			h := resp.Header
			if resp.StatusCode != 200 || !bytes.Equal(got, img) || h.Get("Content-Type") != "image/png" ||
				h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox") {
				t.Fatalf("%d %v", resp.StatusCode, h)
			}
		})
		t.Run("ErrOtherUser", func(t *testing.T) {
			for _, m := range []string{"GET", "DELETE"} {
				if r := e.do(request{method: m, path: "/v1/uploads/" + u.ID, key: e.bob.key}); r.status != 404 || r.errorCode() != coachd.ENOTFOUND {
					t.Fatalf("bob %s: %d %s", m, r.status, r.body)
				}
			}
		})
		t.Run("ErrRefused", func(t *testing.T) {
			before := e.dump()
			for name, tc := range map[string]struct {
				r      response
				status int
				code   string
			}{
				"Unsupported":  {e.upload(e.alice.key, "a.exe", []byte("\x7fELF\x02\x01\x01\x00")), 400, coachd.EINVALID},
				"Oversize":     {e.upload(e.alice.key, "a.txt", bytes.Repeat([]byte("a"), coachd.MaxAttachmentBytes+1)), 413, coachd.ETOOLARGE},
				"TextTooLong":  {e.upload(e.alice.key, "a.txt", bytes.Repeat([]byte("a"), coachd.MaxAttachmentBytes)), 400, coachd.EINVALID},
				"NotMultipart": {e.do(request{method: "POST", path: "/v1/uploads", key: e.alice.key, body: `{}`}), 415, coachd.EUNSUPPORTED},
				"Anonymous":    {e.upload("", "a.png", img), 401, coachd.EUNAUTHORIZED},
			} {
				if tc.r.status != tc.status || tc.r.errorCode() != tc.code {
					t.Errorf("%s: %d %s, want %d %s", name, tc.r.status, tc.r.body, tc.status, tc.code)
				}
			}
			if after := e.dump(); !reflect.DeepEqual(before, after) {
				t.Fatal("a refused upload changed the database")
			}
		})
		t.Run("Delete", func(t *testing.T) {
			if r := e.do(request{method: "DELETE", path: "/v1/uploads/" + u.ID, key: e.alice.key}); r.status != 204 {
				t.Fatalf("delete: %d %s", r.status, r.body)
			}
			if r := e.do(request{method: "GET", path: "/v1/uploads/" + u.ID, key: e.alice.key}); r.status != 404 {
				t.Fatalf("get after delete: %d", r.status)
			}
		})
	})
}
