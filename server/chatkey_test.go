package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/internal/cutproxy"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// postChat sends POST /v1/chat to base with an Idempotency-Key (none when
// key is ""); err is the request's failure (no answer heard).
func postChat(ctx context.Context, t *testing.T, base, apiKey, key, body string) (response, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}, err
}

// lookThenGate is the model's first round in the keyed chat tests: a few
// words, then a call of the gate tool, which holds the turn for the test.
func lookThenGate() anthropictest.Reply {
	return anthropictest.Blocks(anthropictest.TextBlock("Let me look. ", 4), anthropictest.ToolUse("toolu_g", "gate", `{}`))
}

// gatedChat is a chat server whose model's first round calls the gate
// tool g (lookThenGate), held until the test releases it, and whose
// reply after it is "All done.".
func gatedChat(t *testing.T) (resendGate, *chatEnv) {
	t.Helper()
	g := resendGate{started: make(chan struct{}), release: make(chan struct{})}
	e := MustChatEnv(t, nil, g)
	e.fake.Enqueue(lookThenGate(), anthropictest.Text("All done.", 4))
	return g, e
}

// postChatLater sends postChat in a goroutine of its own; the function
// it returns waits for the answer (t fails if none was heard).
func postChatLater(t *testing.T, base, apiKey, key, body string) func() response {
	type answer struct {
		r   response
		err error
	}
	c := make(chan answer, 1)
	go func() {
		r, err := postChat(context.Background(), t, base, apiKey, key, body)
		c <- answer{r, err}
	}()
	return func() response {
		t.Helper()
		a := <-c
		if a.err != nil {
			t.Fatal(a.err)
		}
		return a.r
	}
}

// mustPostChat is postChat that must be answered 200.
func mustPostChat(t *testing.T, base, apiKey, key, body string) (response, map[string]any) {
	t.Helper()
	r, err := postChat(context.Background(), t, base, apiKey, key, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var out map[string]any
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatal(err)
	}
	return r, out
}

// TestChatResendWithKey: POST /v1/chat, the JSON door, honours the
// Idempotency-Key as the stream does. A client whose answer was lost
// (the connection cut as the answer began) sends its message again with
// its key: it gets the first turn's result, with Idempotent-Replayed,
// and the message is stored once, the model asked once. Without the
// key's support it was a second turn.
func TestChatResendWithKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustChatEnvDepsOn(t, dsn, func(*server.Deps) {}, nil)
		const body = `{"message":"ok"}`

		t.Run("OK", func(t *testing.T) {
			p := cutproxy.New(t, strings.TrimPrefix(e.url, "http://"))
			p.CutOnce("")
			e.fake.Enqueue(anthropictest.Text("Fine, see you tomorrow.", 6))
			if _, err := postChat(context.Background(), t, p.URL(), e.alice.key, "json-1", body); err == nil {
				t.Fatal("the cut answer was heard")
			}
			again, out := mustPostChat(t, e.url, e.alice.key, "json-1", body)
			if got := again.header.Get("Idempotent-Replayed"); got != "true" {
				t.Errorf("Idempotent-Replayed = %q, want true", got)
			}
			if got, want := out["text"], "Fine, see you tomorrow."; got != want {
				t.Errorf("resent: text %v, want %q", got, want)
			}
			sid, _ := out["session_id"].(string)
			if again.header.Get("X-Coachd-Session-Id") != sid || sid == "" {
				t.Errorf("resent: session %q, header %q", sid, again.header.Get("X-Coachd-Session-Id"))
			}
			if n := len(e.fake.Requests()); n != 1 {
				t.Errorf("the model was asked %d times, want 1", n)
			}
			if n := userMessages(t, e, e.alice.ID, sid, "ok"); n != 1 {
				t.Errorf("the message is stored %d times, want 1", n)
			}
		})

		t.Run("SameResult", func(t *testing.T) {
			e.fake.Enqueue(anthropictest.Text("Same again.", 6))
			first, want := mustPostChat(t, e.url, e.alice.key, "json-2", body)
			if first.header.Get("Idempotent-Replayed") != "" {
				t.Error("the first request is marked replayed")
			}
			_, got := mustPostChat(t, e.url, e.alice.key, "json-2", "{\n  \"message\": \"ok\"\n}")
			if !reflect.DeepEqual(got, want) {
				t.Errorf("resent:\n%v\nwant the first answer\n%v", got, want)
			}
		})

		t.Run("ErrKeyOtherBody", func(t *testing.T) {
			before := len(e.fake.Requests())
			e.fake.Enqueue(anthropictest.Text("Sure.", 6))
			mustPostChat(t, e.url, e.alice.key, "json-3", body)
			r, err := postChat(context.Background(), t, e.url, e.alice.key, "json-3", `{"message":"not ok"}`)
			if err != nil {
				t.Fatal(err)
			}
			if r.status != http.StatusConflict || r.errorCode() != "conflict" || !strings.Contains(string(r.body), "Idempotency-Key") {
				t.Errorf("the key with another body: %d %s, want 409 conflict naming Idempotency-Key", r.status, r.body)
			}
			if n := len(e.fake.Requests()) - before; n != 1 {
				t.Errorf("the model was asked %d times, want 1", n)
			}
		})

		t.Run("OtherUsersKey", func(t *testing.T) {
			e.fake.Enqueue(anthropictest.Text("Alice's.", 6), anthropictest.Text("Bob's.", 6))
			_, a := mustPostChat(t, e.url, e.alice.key, "json-shared", body)
			rb, b := mustPostChat(t, e.url, e.bob.key, "json-shared", body)
			if rb.header.Get("Idempotent-Replayed") != "" || a["text"] != "Alice's." || b["text"] != "Bob's." {
				t.Errorf("alice %v, bob %v (replayed %q): want each their own turn", a["text"], b["text"], rb.header.Get("Idempotent-Replayed"))
			}
		})

		// A key is the message's, whichever door it was sent through
		// first: the other door answers with that turn, in its shape.
		t.Run("KeySharedByDoors", func(t *testing.T) {
			before := len(e.fake.Requests())
			e.fake.Enqueue(anthropictest.Text("Streamed.", 6), anthropictest.Text("Returned.", 6))
			evs := postKeyed(context.Background(), t, e.url, e.alice.key, "door-1", "", body).until(t, "")
			if r, out := mustPostChat(t, e.url, e.alice.key, "door-1", body); out["text"] != "Streamed." || r.header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("the streamed turn's key on /v1/chat: %s, want its text, replayed", r.body)
			}
			_, out := mustPostChat(t, e.url, e.alice.key, "door-2", body)
			s := postKeyed(context.Background(), t, e.url, e.alice.key, "door-2", "", body)
			if got := replyText(t, s.until(t, "")); got != "Returned." || out["text"] != "Returned." || s.resp.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("the JSON turn's key on the stream: %q, want Returned., replayed", got)
			}
			if n := len(e.fake.Requests()) - before; n != 2 || replyText(t, evs) != "Streamed." {
				t.Errorf("the model was asked %d times, want 2", n)
			}
		})
	})
}

// TestChatResendWhileRunning: the message sent again to POST /v1/chat
// with its key while its turn still runs waits for that turn and answers
// with its result, instead of a 409 or a second turn.
func TestChatResendWhileRunning(t *testing.T) {
	g, e := gatedChat(t)
	const body = `{"message":"check it"}`
	firstc := postChatLater(t, e.url, e.alice.key, "run-json", body)
	<-g.started
	againc := postChatLater(t, e.url, e.alice.key, "run-json", body)
	// The resend follows the turn: it is on the stream's limits' books
	// (or answered) before the gate opens.
	close(g.release)
	first, again := firstc(), againc()
	if again.status != http.StatusOK || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("resent while running: %d %s, want 200 replayed", again.status, again.body)
	}
	var a, b map[string]any
	json.Unmarshal(first.body, &a)
	json.Unmarshal(again.body, &b)
	if !reflect.DeepEqual(a, b) || b["text"] != "Let me look. All done." {
		t.Errorf("resent:\n%s\nwant the first answer\n%s", again.body, first.body)
	}
	if n := len(e.fake.Requests()); n != 2 {
		t.Errorf("the model was asked %d times, want 2 (the tool round and the reply)", n)
	}
	if n := userMessages(t, e, e.alice.ID, a["session_id"].(string), "check it"); n != 1 {
		t.Errorf("the message is stored %d times, want 1", n)
	}
}

// TestChatResendOutput: an agent's must_output object is part of the
// turn's answer; resent, the answer is the same, output included (the
// last reply's, after a repaired one).
func TestChatResendOutput(t *testing.T) {
	ag := agent.DefaultAgent()
	if err := ag.Contracts.SetMustOutput(json.RawMessage(`{"type":"object","required":["decision"]}`)); err != nil {
		t.Fatal(err)
	}
	ag.Contracts.MaxRepairs = 1
	e := MustChatEnv(t, ag)
	e.fake.Enqueue(
		anthropictest.Text("Looks fine to me.", 6),
		anthropictest.Text("```json\n{\"decision\": \"approve\"}\n```", 6),
	)
	const body = `{"message":"check it"}`
	_, want := mustPostChat(t, e.url, e.alice.key, "out-1", body)
	if want["output"] == nil {
		t.Fatalf("the first answer has no output: %v", want)
	}
	r, got := mustPostChat(t, e.url, e.alice.key, "out-1", body)
	if !reflect.DeepEqual(got, want) || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("resent:\n%v\nwant the first answer\n%v", got, want)
	}
}

// TestChatFirstMessageRaceWithKeyPG: a conversation's first message (no
// session_id) sent several times at once with one key, as a client
// retrying on a timeout may, through either door. The requests are held
// where each has found no turn under the key and creates its session
// (the sessions table locked), then let go together: each creates a
// session and asks for its admission; one keeps the key, the others roll
// back, drop their session, and answer with the kept turn (or tell their
// client to send again while its commit is not yet seen, which then
// answers it). One session, one stored message, one model call.
func TestChatFirstMessageRaceWithKeyPG(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	e := mustChatEnvDepsOn(t, dsn, func(*server.Deps) {}, nil)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, door := range []string{"stream", "json"} {
		t.Run(door, func(t *testing.T) {
			ctx := context.Background()
			before, _, err := e.db.ListSessions(ctx, e.alice.ID, coachd.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			asked := len(e.fake.Requests())
			reply := "Only once, " + door + "."
			e.fake.Enqueue(anthropictest.Text(reply, 4)) // a second turn: the fake's echo
			body := `{"message":"race ` + door + `"}`
			hold, err := admin.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer hold.Rollback()
			if _, err := hold.Exec(`LOCK TABLE sessions IN SHARE MODE`); err != nil {
				t.Fatal(err)
			}
			const n = 6
			texts := make(chan string, n)
			for range n {
				go func() { texts <- sendUntilAnswered(t, e, door, "race-"+door, body) }()
			}
			for waiting := 0; waiting < n; {
				if err := admin.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
					WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				if len(texts) > 0 {
					t.Fatalf("a request was answered before it created its session: %q", <-texts)
				}
			}
			if err := hold.Commit(); err != nil {
				t.Fatal(err)
			}
			for range n {
				if got := <-texts; got != reply {
					t.Errorf("answered %q, want %q", got, reply)
				}
			}
			after, _, err := e.db.ListSessions(ctx, e.alice.ID, coachd.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(before)+1 {
				t.Fatalf("%d sessions created, want 1", len(after)-len(before))
			}
			if got := userMessages(t, e, e.alice.ID, after[0].ID, "race "+door); got != 1 {
				t.Errorf("the message is stored %d times, want 1", got)
			}
			if got := len(e.fake.Requests()) - asked; got != 1 {
				t.Errorf("the model was asked %d times, want 1", got)
			}
		})
	}
}

// sendUntilAnswered sends a keyed first message through door (stream
// or json) until it is answered 200, sending it again on a retryable
// turn_in_progress, and returns the reply's text ("" after a failure).
func sendUntilAnswered(t *testing.T, e *chatEnv, door, key, body string) string {
	for range 1000 {
		if door == "stream" {
			k := postKeyedNoFatal(t, e.url, e.alice.key, key, body)
			if k == nil {
				return ""
			}
			if k.status == http.StatusConflict && strings.Contains(k.body, "turn_in_progress") {
				continue
			}
			if k.status != http.StatusOK {
				t.Errorf("stream: %d %s", k.status, k.body)
				return ""
			}
			return k.text
		}
		r, err := postChat(context.Background(), t, e.url, e.alice.key, key, body)
		if err != nil {
			t.Error(err)
			return ""
		}
		if r.status == http.StatusConflict && r.errorCode() == "turn_in_progress" {
			continue
		}
		var out struct{ Text string }
		if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil {
			t.Errorf("json: %d %s", r.status, r.body)
			return ""
		}
		return out.Text
	}
	t.Error("still refused after 1000 tries")
	return ""
}

// streamAnswer is a keyed stream request's answer: its status, and its
// reply's text, or its error body.
type streamAnswer struct {
	status     int
	text, body string
}

// postKeyedNoFatal is postKeyed read whole, for other goroutines than
// the test's (no Fatal): nil after a failure, reported.
func postKeyedNoFatal(t *testing.T, base, apiKey, key, body string) *streamAnswer {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/stream", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return &streamAnswer{status: resp.StatusCode, body: string(b)}
	}
	er := client.NewEventReader(resp.Body)
	var sb strings.Builder
	for {
		ev, err := er.Next()
		if errors.Is(err, io.EOF) {
			return &streamAnswer{status: resp.StatusCode, text: sb.String()}
		}
		if err != nil {
			t.Error(err)
			return nil
		}
		if ev.Name == "content_delta" {
			var d struct{ Text string }
			json.Unmarshal(ev.Data, &d)
			sb.WriteString(d.Text)
		}
	}
}

// TestChatKeyedOutlivesClient: a keyed POST /v1/chat whose client lost
// its connection mid-turn comes back with its key for the turn's
// result. The turn stopped with the connection (the JSON door's turn was
// the request's), so the key answered "aborted" and a reply cut short,
// forever: the key says its client will come back, and the turn now
// goes on (as on the stream, on_disconnect: continue) for it to find.
func TestChatKeyedOutlivesClient(t *testing.T) {
	g, e := gatedChat(t)
	const body = `{"message":"check it"}`
	ctx, drop := context.WithCancel(context.Background())
	lost := make(chan error, 1)
	go func() {
		_, err := postChat(ctx, t, e.url, e.alice.key, "gone-1", body)
		lost <- err
	}()
	<-g.started
	drop() // the client's network goes
	if err := <-lost; err == nil {
		t.Fatal("the dropped request was answered")
	}
	againc := make(chan response, 1)
	go func() {
		r, err := postChat(context.Background(), t, e.url, e.alice.key, "gone-1", body)
		if err != nil {
			t.Error(err)
		}
		againc <- r
	}()
	close(g.release)
	again := <-againc
	var out map[string]any
	json.Unmarshal(again.body, &out)
	if again.status != http.StatusOK || out["stop_reason"] != "end_turn" || out["text"] != "Let me look. All done." {
		t.Errorf("resent after the client left: %d %s, want the whole turn", again.status, again.body)
	}
}

// TestChatResendApprovedCall: the turn that answers an approval runs the
// approved call (its tool_calls), though the call was announced in the
// turn that paused. Sent again with its key, the answer is the same,
// the call included; a denied call is in neither.
func TestChatResendApprovedCall(t *testing.T) {
	for _, c := range []struct {
		name, answer string
		calls        int
	}{
		{"Approved", `{"approved":true}`, 1},
		{"Denied", `{"approved":false,"reason":"too much"}`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := mustApprovalEnv(t)
			refundRound(e)
			_, paused := mustPostChat(t, e.url, e.alice.key, "pause-1", `{"message":"refund me"}`)
			sid, _ := paused["session_id"].(string)
			e.fake.Enqueue(anthropictest.Text("Done.", 3))
			body := `{"session_id":"` + sid + `","tool_result":{"tool_use_id":"toolu_r","content":` + c.answer + `}}`
			_, want := mustPostChat(t, e.url, e.alice.key, "answer-1", body)
			if calls, _ := want["tool_calls"].([]any); len(calls) != c.calls {
				t.Fatalf("the first answer's tool_calls: %v, want %d", want["tool_calls"], c.calls)
			}
			r, got := mustPostChat(t, e.url, e.alice.key, "answer-1", body)
			if !reflect.DeepEqual(got, want) || r.header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("resent:\n%s\nwant the first answer\n%v", r.body, want)
			}
		})
	}
}

// TestResendEndedTurnTakesNoStreamSlot: a turn that ended, sent again
// with its key, is answered from the log at once: it holds none of the
// user's stream slots (--max-streams-per-user), as its first request
// held none. A client with its session streams open (one here, the
// limit) that resends a lost answer gets it, on either door, not 429
// "too many open streams".
func TestResendEndedTurnTakesNoStreamSlot(t *testing.T) {
	g := resendGate{started: make(chan struct{}), release: make(chan struct{})}
	e := mustChatEnvDeps(t, func(d *server.Deps) { d.MaxStreamsPerUser = 1 }, nil, g)
	const body = `{"message":"ok"}`
	e.fake.Enqueue(anthropictest.Text("Answered.", 6))
	_, want := mustPostChat(t, e.url, e.alice.key, "slot-1", body)
	sid, _ := want["session_id"].(string)

	req, _ := http.NewRequest(http.MethodGet, e.url+"/v1/sessions/"+sid+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+e.alice.key)
	req.Header.Set("Accept", "text/event-stream")
	follow, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer follow.Body.Close()
	if follow.StatusCode != http.StatusOK {
		t.Fatalf("the session stream: %d", follow.StatusCode)
	}
	// The slot is taken: a second session stream is refused.
	second, err := http.DefaultClient.Do(req.Clone(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a second session stream: %d, want 429 (the limit is 1)", second.StatusCode)
	}

	r, got := mustPostChat(t, e.url, e.alice.key, "slot-1", body)
	if !reflect.DeepEqual(got, want) || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("resent to /v1/chat:\n%s\nwant the first answer\n%v", r.body, want)
	}
	s := postKeyedNoFatal(t, e.url, e.alice.key, "slot-1", body)
	if s == nil || s.status != http.StatusOK || s.text != "Answered." {
		t.Errorf("resent to /v1/chat/stream: %+v, want 200 and its reply", s)
	}

	// A resend of a turn still running follows it, as a session stream
	// does, and counts as one.
	e.fake.Enqueue(
		lookThenGate(),
		anthropictest.Text("All done.", 4),
	)
	running := `{"session_id":"` + sid + `","message":"check it"}`
	firstc := make(chan error, 1)
	go func() {
		_, err := postChat(context.Background(), t, e.url, e.alice.key, "slot-2", running)
		firstc <- err
	}()
	<-g.started
	r, err = postChat(context.Background(), t, e.url, e.alice.key, "slot-2", running)
	close(g.release)
	if err != nil || r.status != http.StatusTooManyRequests {
		t.Errorf("resent while its turn runs, the slot taken: %d %s %v, want 429", r.status, r.body, err)
	}
	if err := <-firstc; err != nil {
		t.Fatal(err)
	}
}
