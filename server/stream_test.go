package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
)

var idLine = regexp.MustCompile(`(?m)^id: (\d+):(\d+)$`)

// TestStreamEventIDs: every event of every dialect carries id turn:seq,
// increasing within the session, across turns.
func TestStreamEventIDs(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	var last [2]int
	for i, protocol := range []string{"", "?protocol=asp", "?protocol=sage"} {
		e.fake.Enqueue(anthropictest.Text("Hello there, driver.", 4))
		s := e.chat(ctx, e.alice.key, protocol, `{"message":"hi","session_id":"`+sess.ID+`"}`)
		if s.status != 200 {
			t.Fatalf("%s: %d %s", protocol, s.status, s.raw)
		}
		ids := idLine.FindAllStringSubmatch(string(s.raw), -1)
		frames := strings.Count(string(s.raw), "data: ")
		if protocol == "?protocol=sage" {
			frames-- // [DONE] is the stream's end, no event
		}
		if len(ids) != frames || len(ids) < 3 {
			t.Fatalf("%s: %d ids for %d frames:\n%s", protocol, len(ids), frames, s.raw)
		}
		for _, m := range ids {
			var turn, seq int
			fmt.Sscan(m[1], &turn)
			fmt.Sscan(m[2], &seq)
			if turn != i+1 || (turn == last[0] && seq <= last[1]) {
				t.Fatalf("%s: id %d:%d after %d:%d", protocol, turn, seq, last[0], last[1])
			}
			last = [2]int{turn, seq}
		}
		if s.header.Get("X-Coachd-Turn") != fmt.Sprint(i+1) {
			t.Errorf("X-Coachd-Turn %q", s.header.Get("X-Coachd-Turn"))
		}
	}
}

// mintStreamToken mints a stream token for key's session sessID and
// returns it and its stream_url.
func (e *chatEnv) mintStreamToken(t *testing.T, key, sessID string) (token, streamURL string) {
	t.Helper()
	r := e.post(key, "/v1/sessions/"+sessID+"/stream-token", ``, nil, nil)
	var tok struct {
		Token     string `json:"token"`
		StreamURL string `json:"stream_url"`
	}
	if err := json.Unmarshal(r.body, &tok); r.status != 201 || err != nil {
		t.Fatalf("mint: %d %s", r.status, r.body)
	}
	return tok.Token, tok.StreamURL
}

// follow opens GET /v1/sessions/{id}/stream and returns the events read
// until one named until (or the stream's end).
func (e *chatEnv) follow(ctx context.Context, t *testing.T, path, key, lastID, until string) ([]client.Event, int) {
	t.Helper()
	return e.followAttached(ctx, t, path, key, lastID, until, nil)
}

// followAttached is follow that closes attached once the stream opened
// (its retry hint read), or when it returns without a stream. It may run
// on any goroutine: it fails the test with t.Errorf, never t.Fatal.
func (e *chatEnv) followAttached(ctx context.Context, t *testing.T, path, key, lastID, until string, attached chan struct{}) ([]client.Event, int) {
	if attached != nil {
		defer func() {
			select {
			case <-attached:
			default:
				close(attached) // no stream: the waiter goes on to see why
			}
		}()
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("GET %s: %v", path, err)
		return nil, 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Logf("GET %s: %d %s", path, resp.StatusCode, b)
		return nil, resp.StatusCode
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry: ") {
		t.Errorf("the stream does not open with a retry hint: %q", line)
	}
	if attached != nil {
		close(attached)
	}
	var out []client.Event
	er := client.NewEventReader(br)
	for {
		ev, err := er.Next()
		if err != nil {
			return out, 200
		}
		out = append(out, ev)
		if ev.Name == until {
			return out, 200
		}
	}
}

func textOf(evs []client.Event) string {
	var sb strings.Builder
	for _, ev := range evs {
		if ev.Name == "content_delta" {
			var d struct{ Text string }
			json.Unmarshal(ev.Data, &d)
			sb.WriteString(d.Text)
		}
	}
	return sb.String()
}

// TestStreamContinueAndResume: the client leaves after the first delta;
// the turn goes on (on_disconnect: continue, the coachd default), is
// stored whole and settled; re-attaching after the last id seen gives the
// rest: the two parts are the stored reply, with nothing twice.
func TestStreamContinueAndResume(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	reply := "Start at the airport at five, then work downtown until the lunch rush is over."
	e.fake.Enqueue(anthropictest.Text(reply, 6).Paced(0, 5*time.Millisecond))
	cctx, cancel := context.WithCancel(ctx)
	var first []client.Event
	sid, _ := e.alice.c.ChatStream(cctx, client.ChatRequest{Message: "plan"}, client.StreamOptions{}, func(ev client.Event) error {
		first = append(first, ev)
		if ev.Name == "content_delta" {
			cancel()
		}
		return nil
	})
	if sid == "" || len(first) == 0 {
		t.Fatalf("first part: %q %v", sid, first)
	}
	lastID := first[len(first)-1].ID
	rest, status := e.follow(ctx, t, "/v1/sessions/"+sid+"/stream", e.alice.key, lastID, "message_end")
	if status != 200 || len(rest) == 0 || rest[len(rest)-1].Name != "message_end" {
		t.Fatalf("resume: %d %v", status, rest)
	}
	if got := textOf(first) + textOf(rest); got != reply {
		t.Errorf("reassembled %q, want %q", got, reply)
	}
	var end struct {
		StopReason string `json:"stop_reason"`
	}
	json.Unmarshal(rest[len(rest)-1].Data, &end)
	if end.StopReason != "end_turn" {
		t.Errorf("stop reason %q", end.StopReason)
	}
	msgs, _, _ := e.alice.c.Messages(ctx, sid, coachd.Page{})
	if len(msgs) != 2 || msgs[1].Partial || msgs[1].Content != reply {
		t.Fatalf("stored %+v", msgs)
	}
	waitFor(t, func() bool {
		st, err := e.db.BudgetStatus(ctx, e.alice.ID)
		return err == nil && st.TokensReserved == 0 && st.TokensUsed > 0
	})
	// From the start of the session: both the past turn and nothing more.
	all, _ := e.follow(ctx, t, "/v1/sessions/"+sid+"/stream?last_event_id=0:0", e.alice.key, "", "message_end")
	if textOf(all) != reply || all[0].Name != "message_start" || all[0].ID != "1:1" {
		t.Errorf("replay from 0:0: %q", textOf(all))
	}
}

// TestStreamAttachWaitsForTurn: without Last-Event-ID the stream waits for
// the next turn and follows it; another user's session is not found.
func TestStreamAttachWaitsForTurn(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	if _, status := e.follow(ctx, t, "/v1/sessions/"+sess.ID+"/stream", e.bob.key, "", ""); status != 404 {
		t.Errorf("bob following alice's session: %d", status)
	}
	if _, status := e.follow(ctx, t, "/v1/sessions/"+sess.ID+"/stream", "", "", ""); status != 401 {
		t.Errorf("no key: %d", status)
	}
	if _, status := e.follow(ctx, t, "/v1/sessions/"+sess.ID+"/stream", e.alice.key, "one", ""); status != 400 {
		t.Errorf("bad Last-Event-ID: %d", status)
	}
	got := make(chan []client.Event, 1)
	attached := make(chan struct{})
	go func() {
		evs, _ := e.followAttached(ctx, t, "/v1/sessions/"+sess.ID+"/stream", e.alice.key, "", "message_end", attached)
		got <- evs
	}()
	<-attached
	e.fake.Enqueue(anthropictest.Text("A new turn, followed live.", 5))
	s := e.chat(ctx, e.alice.key, "", `{"message":"go","session_id":"`+sess.ID+`"}`)
	if s.status != 200 {
		t.Fatal(s.status)
	}
	select {
	case evs := <-got:
		if textOf(evs) != "A new turn, followed live." {
			t.Errorf("follower read %q", textOf(evs))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the follower saw no turn")
	}
}

// TestStreamToken: an EventSource client that cannot send headers
// follows with a minted token, for that session only.
func TestStreamToken(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess, other := e.MustSession(e.alice), e.MustSession(e.alice)
	e.fake.Enqueue(anthropictest.Text("Token holders see this.", 5))
	if s := e.chat(ctx, e.alice.key, "", `{"message":"go","session_id":"`+sess.ID+`"}`); s.status != 200 {
		t.Fatal(s.status)
	}
	token, streamURL := e.mintStreamToken(t, e.alice.key, sess.ID)
	if !strings.HasPrefix(token, "st_") {
		t.Fatalf("minted %q", token)
	}
	evs, status := e.follow(ctx, t, streamURL+"&last_event_id=0:0", "", "", "message_end")
	if status != 200 || textOf(evs) != "Token holders see this." {
		t.Errorf("with the token: %d %q", status, textOf(evs))
	}
	if _, status := e.follow(ctx, t, "/v1/sessions/"+other.ID+"/stream?token="+token, "", "", ""); status != 401 {
		t.Errorf("the token on another session: %d", status)
	}
	if _, status := e.follow(ctx, t, "/v1/sessions/"+sess.ID+"/stream?token=st_forged", "", "", ""); status != 401 {
		t.Errorf("a forged token: %d", status)
	}
	if r := e.post(e.bob.key, "/v1/sessions/"+sess.ID+"/stream-token", ``, nil, nil); r.status != 404 {
		t.Errorf("bob minting for alice's session: %d", r.status)
	}
}

// TestStreamStop: POST /v1/sessions/{id}/stop ends a running turn as
// aborted, its partial reply stored and its reservation settled.
func TestStreamStop(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	if r := e.post(e.alice.key, "/v1/sessions/"+sess.ID+"/stop", ``, nil, nil); r.status != 404 {
		t.Errorf("stop with no turn: %d %s", r.status, r.body)
	}
	e.fake.Enqueue(anthropictest.Text("This answer never ends on its own", 4).StallAfter(5))
	done := make(chan stream, 1)
	go func() { done <- e.tryChat(ctx, e.alice.key, "", `{"message":"go","session_id":"`+sess.ID+`"}`) }()
	waitFor(t, func() bool { return len(e.fake.Requests()) == 1 })
	// Stopped once text has come: the partial reply then has some to
	// store (a stop before the first delta leaves nothing to store).
	if evs, status := e.follow(ctx, t, "/v1/sessions/"+sess.ID+"/stream", e.alice.key, "", "content_delta"); status != 200 || textOf(evs) == "" {
		t.Fatalf("following the turn to its first text: %d, %d events", status, len(evs))
	}
	if r := e.post(e.bob.key, "/v1/sessions/"+sess.ID+"/stop", ``, nil, nil); r.status != 404 {
		t.Errorf("bob stopping alice's turn: %d", r.status)
	}
	var r response
	waitFor(t, func() bool {
		r = e.post(e.alice.key, "/v1/sessions/"+sess.ID+"/stop", ``, nil, nil)
		return r.status != 404 // the turn's log row is written as it starts
	})
	if r.status != 202 {
		t.Fatalf("stop: %d %s", r.status, r.body)
	}
	var s stream
	select {
	case s = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the stopped turn's stream did not end")
	}
	if s.err != nil {
		t.Fatalf("the stopped turn: %v", s.err)
	}
	if end := s.data(t, "message_end"); end["stop_reason"] != coachd.TurnAborted {
		t.Errorf("message_end %v", end)
	}
	msgs, _, _ := e.alice.c.Messages(ctx, sess.ID, coachd.Page{})
	// MustSession's three, the user's message and the partial reply.
	if len(msgs) != 5 || !msgs[4].Partial || msgs[4].Content == "" {
		t.Errorf("stored %d messages", len(msgs))
	}
	if st, _ := e.db.BudgetStatus(ctx, e.alice.ID); st.TokensReserved != 0 {
		t.Errorf("reserved after stop: %d", st.TokensReserved)
	}
}
