package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// pdfPages is a PDF of n pages.
func pdfPages(n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%%PDF-1.4\n1 0 obj << /Type /Pages /Count %d >> endobj\n", n)
	for i := range n {
		fmt.Fprintf(&b, "%d 0 obj << /Type /Page /Parent 1 0 R >> endobj\n", i+2)
	}
	b.WriteString("%%EOF\n")
	return b.Bytes()
}

// TestChatPDFPages: the Messages API takes at most 100 PDF pages in a
// request. A longer PDF is refused at the edge (the API would refuse
// this turn and, from the history, every later one); PDFs that fit one
// by one are re-sent only as far as the request stays within 100 pages,
// older ones become notes. Before, a 150-page PDF was stored and the
// session's every turn failed, and so did the turn after two 60-page
// PDFs.
func TestChatPDFPages(t *testing.T) {
	e := MustChatEnv(t, nil)

	t.Run("ErrTooManyPages", func(t *testing.T) {
		before := e.dump()
		long := pdfPages(101)
		if r := e.upload(e.alice.key, "long.pdf", long); r.status != 400 || !strings.Contains(string(r.body), "pages") {
			t.Fatalf("upload of 101 pages: %d %.300s", r.status, r.body)
		}
		r := e.do(request{method: "POST", path: "/v1/chat", key: e.alice.key,
			body: `{"message":"summarise","attachments":[` + inline("document", coachd.MediaPDF, long) + `]}`})
		var body struct {
			Error struct {
				Details []coachd.FieldError `json:"details"`
			} `json:"error"`
		}
		mustUnmarshal(t, r.body, &body)
		if r.status != 400 || len(body.Error.Details) == 0 || body.Error.Details[0].Field != "attachments[0].data" {
			t.Fatalf("chat with 101 pages: %d %.300s", r.status, r.body)
		}
		if n := len(e.fake.Requests()); n != 0 {
			t.Fatalf("the model was called %d times", n)
		}
		if !reflect.DeepEqual(before, e.dump()) {
			t.Fatal("a refused PDF changed the database")
		}
	})

	t.Run("HistoryWithinPages", func(t *testing.T) {
		budget := int64(10_000_000) // a 60-page PDF is about 150,000 tokens
		_, key, err := e.admin.CreateUser(t.Context(), "reader", &budget)
		if err != nil {
			t.Fatal(err)
		}
		e.fake.Enqueue(anthropictest.Text("Read it.", 3), anthropictest.Text("Read that too.", 3), anthropictest.Text("Sure.", 3))
		r := e.do(request{method: "POST", path: "/v1/chat", key: key,
			body: `{"message":"the first report","attachments":[` + inline("document", coachd.MediaPDF, pdfPages(60)) + `]}`})
		if r.status != 200 {
			t.Fatalf("first turn: %d %.300s", r.status, r.body)
		}
		var res struct {
			SessionID string `json:"session_id"`
		}
		mustUnmarshal(t, r.body, &res)
		for i, body := range []string{
			`{"message":"the second report","session_id":"` + res.SessionID + `","attachments":[` + inline("document", coachd.MediaPDF, pdfPages(60)) + `]}`,
			`{"message":"and now?","session_id":"` + res.SessionID + `"}`,
		} {
			if r := e.do(request{method: "POST", path: "/v1/chat", key: key, body: body}); r.status != http.StatusOK {
				t.Fatalf("turn %d: %d %.300s", i+2, r.status, r.body)
			}
			reqs := e.fake.Requests()
			var docs []string
			for _, m := range reqs[len(reqs)-1].Messages() {
				kinds, _ := sources(t, m.Blocks)
				for _, k := range kinds {
					if strings.HasPrefix(k, "document") {
						docs = append(docs, k)
					}
				}
			}
			if len(docs) != 1 {
				t.Fatalf("turn %d re-sent %d PDFs, want the newest only", i+2, len(docs))
			}
		}
	})
}
