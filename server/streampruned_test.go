package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
)

// TestStreamResumePastRetention: a client resuming a session stream from
// a Last-Event-ID whose following events the log no longer has (pruned by
// age) is told so before the stream goes on with what is left: in the
// coachd dialect an events_missed event naming its id, in the AI SDK's a
// transient data-coachd-events-missed part, in every dialect the
// X-Coachd-Events-Missed header. A resume the log still covers, and a
// stream opened without an id, carry neither.
func TestStreamResumePastRetention(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustChatEnvOn(t, dsn)
		ctx := context.Background()
		sess := e.MustSession(e.alice)
		for _, text := range []string{"One.", "Two."} {
			e.fake.Enqueue(anthropictest.Text(text, 2))
			if s := e.chat(ctx, e.alice.key, "", `{"message":"go","session_id":"`+sess.ID+`"}`); s.status != 200 {
				t.Fatalf("turn: %d %s", s.status, s.raw)
			}
		}
		path := "/v1/sessions/" + sess.ID + "/stream"
		if missed, evs := e.resume(t, path, "1:1", ""); missed != "" || len(evs) == 0 || evs[0].Name == "events_missed" || textOf(evs) != "One." {
			t.Errorf("a resume the log covers: header %q, events %v", missed, names(evs))
		}
		// The sweeper prunes both turns by age; a third follows.
		if n, err := e.db.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 2 {
			t.Fatalf("prune: %d %v", n, err)
		}
		// Nothing left to send: the notice comes before the stream waits.
		if evs, _ := e.follow(ctx, t, path, e.alice.key, "1:1", "events_missed"); len(evs) != 1 || evs[0].Name != "events_missed" {
			t.Errorf("a resume past the log, the session idle: %v", names(evs))
		}
		e.fake.Enqueue(anthropictest.Text("Three.", 2))
		if s := e.chat(ctx, e.alice.key, "", `{"message":"go","session_id":"`+sess.ID+`"}`); s.status != 200 {
			t.Fatalf("turn: %d %s", s.status, s.raw)
		}
		missed, evs := e.resume(t, path, "1:1", "")
		if missed == "" || len(evs) == 0 || evs[0].Name != "events_missed" {
			t.Fatalf("a resume past the log: header %q, events %v", missed, names(evs))
		}
		var notice struct {
			LastEventID string `json:"last_event_id"`
			Message     string `json:"message"`
		}
		if err := json.Unmarshal(evs[0].Data, &notice); err != nil || notice.LastEventID != "1:1" || !strings.Contains(notice.Message, "/messages") {
			t.Errorf("events_missed: %s", evs[0].Data)
		}
		if textOf(evs) != "Three." {
			t.Errorf("after the notice: %q, want what the log has left", textOf(evs))
		}
		for _, p := range []string{"asp", "sage"} {
			missed, evs := e.resume(t, path, "1:1", p)
			if missed == "" || len(evs) == 0 || strings.Contains(string(evs[0].Data), "events_missed") {
				t.Errorf("%s: header %q, first frame %s", p, missed, evs[0].Data)
			}
		}
		// useChat's transport hides the header: the AI SDK dialect opens
		// with a transient data part, which onData gets.
		missed, evs = e.resume(t, path, "1:1", "ai-sdk")
		var part struct {
			Type      string
			Transient bool
			Data      struct {
				LastEventID string `json:"last_event_id"`
				Message     string
			}
		}
		if missed == "" || len(evs) == 0 || json.Unmarshal(evs[0].Data, &part) != nil || part.Type != "data-coachd-events-missed" ||
			!part.Transient || part.Data.LastEventID != "1:1" || !strings.Contains(part.Data.Message, "/messages") {
			t.Errorf("ai-sdk: header %q, first frame %s", missed, evs[0].Data)
		}
		if missed, evs := e.resume(t, path, "3:1", ""); missed != "" || len(evs) == 0 || evs[0].Name == "events_missed" {
			t.Errorf("a resume within the kept turn: header %q, events %v", missed, names(evs))
		}
	})
}

// resume opens the session stream at path after lastID in the dialect
// protocol ("" for coachd) and returns its X-Coachd-Events-Missed header
// and its frames up to the end of the first turn it sends (for sage, whose
// session stream marks no turn's end, up to the text "Three.").
func (e *chatEnv) resume(t *testing.T, path, lastID, protocol string) (string, []client.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if protocol != "" {
		path += "?protocol=" + protocol
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.alice.key)
	req.Header.Set("Last-Event-ID", lastID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	var out []client.Event
	var sage strings.Builder
	er := client.NewEventReader(bufio.NewReader(resp.Body))
	for {
		ev, err := er.Next()
		if err != nil {
			return resp.Header.Get("X-Coachd-Events-Missed"), out
		}
		out = append(out, ev)
		var f struct{ Text string }
		if protocol == "sage" && json.Unmarshal(ev.Data, &f) == nil {
			sage.WriteString(f.Text)
		}
		if d := string(ev.Data); strings.HasSuffix(sage.String(), "Three.") || ev.Name == "message_end" || d == "[DONE]" || strings.Contains(d, `"message_stop"`) {
			return resp.Header.Get("X-Coachd-Events-Missed"), out
		}
	}
}

func names(evs []client.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Name)
	}
	return out
}
