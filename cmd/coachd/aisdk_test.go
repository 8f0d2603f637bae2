package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	pngpkg "image/png"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAISDKClients plays the Vercel AI SDK against the real binary:
// streamText through @ai-sdk/openai-compatible, and useChat's transport
// (DefaultChatTransport + readUIMessageStream) on ?protocol=ai-sdk with a
// tool round, a paused turn and its answer through addToolResult.
func TestAISDKClients(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "aisdkclient"), "ai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	fake.Enqueue(
		anthropictest.Text("Hello from coachd.", 4),
		anthropictest.Blocks(anthropictest.TextBlock("Checking your notes.", 4), anthropictest.ToolUse("toolu_n", "list_notes", `{}`)),
		anthropictest.Text("No notes yet: start at the airport.", 4),
		anthropictest.Blocks(anthropictest.TextBlock("Let me ask.", 4),
			anthropictest.ToolUse("toolu_o", "show_options", `{"prompt":"Pick a zone","options":["Airport","Downtown"]}`)),
		anthropictest.Text("Downtown it is.", 4),
	)
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), p.url, p.key)
	cmd.Dir = dir
	raw, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	type part struct {
		Type, State, Text, ToolCallID string
		Output                        any
		Input                         map[string]any
	}
	var out struct {
		StreamText struct{ Text, FinishReason string }
		First      []part
		Paused     []part
		Resumed    []part
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if out.StreamText.Text != "Hello from coachd." || out.StreamText.FinishReason != "stop" {
		t.Errorf("streamText: %+v", out.StreamText)
	}
	texts := func(parts []part) string {
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				sb.WriteString(p.Text + "|")
			}
		}
		return sb.String()
	}
	find := func(parts []part, typ string) *part {
		for i := range parts {
			if parts[i].Type == typ {
				return &parts[i]
			}
		}
		return nil
	}
	if got := texts(out.First); got != "Checking your notes.|No notes yet: start at the airport.|" {
		t.Errorf("first texts %q (%+v)", got, out.First)
	}
	if tool := find(out.First, "tool-list_notes"); tool == nil || tool.State != "output-available" {
		t.Errorf("first tool part: %+v", out.First)
	}
	if tool := find(out.Paused, "tool-show_options"); tool == nil || tool.State != "input-available" || tool.ToolCallID != "toolu_o" || tool.Input["prompt"] != "Pick a zone" {
		t.Errorf("paused tool part: %+v", out.Paused)
	}
	if !strings.Contains(texts(out.Resumed), "Downtown it is.") {
		t.Errorf("resumed: %+v", out.Resumed)
	}
	reqs := fake.Requests()
	if res := reqs[len(reqs)-1].ToolResults(); len(res) != 1 || res[0].ResultText() != "Downtown" {
		t.Errorf("the paused tool's result: %+v", res)
	}
}

// TestAISDKApproval plays useChat's approval flow against the real binary
// serving a pack whose important notes need approval: the paused tool part
// is approval-requested with the call's reason, and the part answered as
// addToolApprovalResponse leaves it runs the call (approved) or gets
// tool-output-denied (denied).
func TestAISDKApproval(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "aisdkclient"), "ai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo", "--pack", filepath.Join("testdata", "approvalpack"))
	save := func(id string) anthropictest.Reply {
		return anthropictest.Blocks(anthropictest.TextBlock("Saving.", 2),
			anthropictest.ToolUse(id, "save_note", `{"note_type":"preference","title":"Morning runs","content":"Runs early","importance":9}`))
	}
	fake.Enqueue(save("toolu_a"), anthropictest.Text("Saved.", 2), save("toolu_d"), anthropictest.Text("Not saved.", 2))
	cmd := exec.Command(node, filepath.Join(dir, "approval.mjs"), p.url, p.key)
	cmd.Dir = dir
	raw, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	type part struct {
		Type, State, Text, ToolCallID string
		Approval                      map[string]any
	}
	type flow struct {
		Paused, Resumed []part
		Sends           bool
	}
	var out struct{ Approve, Deny flow }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	tool := func(parts []part) *part {
		for i := range parts {
			if parts[i].Type == "tool-save_note" {
				return &parts[i]
			}
		}
		return nil
	}
	for name, f := range map[string]flow{"approve": out.Approve, "deny": out.Deny} {
		pt := tool(f.Paused)
		if pt == nil || pt.State != "approval-requested" || pt.Approval["requestReason"] != "save_note needs your approval when importance ≥ 5" || !f.Sends {
			t.Errorf("%s: paused %+v (sends %v)", name, f.Paused, f.Sends)
		}
	}
	if pt := tool(out.Approve.Resumed); pt == nil || pt.State != "output-available" {
		t.Errorf("approved: %+v", out.Approve.Resumed)
	}
	if pt := tool(out.Deny.Resumed); pt == nil || pt.State != "output-denied" {
		t.Errorf("denied: %+v", out.Deny.Resumed)
	}
	reqs := fake.Requests()
	if res := reqs[1].ToolResults(); len(res) != 1 || res[0].IsError {
		t.Errorf("approved call's result: %+v", res)
	}
	if res := reqs[3].ToolResults(); len(res) != 1 || res[0].ResultText() != "The user denied this call: not now" {
		t.Errorf("denied call's result: %+v", res)
	}
}

// TestAISDKFileParts: streamText's file parts through the
// openai-compatible provider, a photo (image_url) and a PDF (a file part
// with file_data), reach the model as an image and a document block
// before the text, as coachd's own attachments do.
func TestAISDKFileParts(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "aisdkclient"), "ai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	fake.Enqueue(anthropictest.Text("Seen both.", 4))
	var png bytes.Buffer
	if err := pngpkg.Encode(&png, image.NewRGBA(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "files.mjs"), p.url, p.key, base64.StdEncoding.EncodeToString(png.Bytes()))
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	var out struct{ Text string }
	if err := json.Unmarshal(raw, &out); err != nil || out.Text != "Seen both." {
		t.Fatalf("%s: %v", raw, err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	msgs := reqs[0].Messages()
	var kinds []string
	for _, b := range msgs[len(msgs)-1].Blocks {
		kinds = append(kinds, b.Type)
	}
	if got := strings.Join(kinds, ","); got != "image,document,text" {
		t.Errorf("the user message's blocks: %s", got)
	}
}

// TestAISDKEventsMissed plays useChat's resume (DefaultChatTransport's
// reconnectToStream) against the real binary, from an event id whose turn
// the log pruned (it keeps a session's last 20 turns): the transport hides
// X-Coachd-Events-Missed, so the stream opens with a transient
// data-coachd-events-missed part (useChat's onData gets it), which the
// AI SDK's own parser takes, and then goes on with what the log kept.
func TestAISDKEventsMissed(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "aisdkclient"), "ai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo", "--rate-limit", "off")
	session := ""
	for i := range 21 {
		fake.Enqueue(anthropictest.Text("Reply "+strconv.Itoa(i+1)+".", 2))
		body := `{"message":"go"}`
		if session != "" {
			body = `{"message":"go","session_id":"` + session + `"}`
		}
		req, _ := http.NewRequest("POST", p.url+"/v1/chat", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+p.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			SessionID string `json:"session_id"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil || out.SessionID == "" {
			t.Fatalf("turn %d: %d %v", i+1, resp.StatusCode, err)
		}
		session = out.SessionID
	}
	cmd := exec.Command(node, filepath.Join(dir, "missed.mjs"), p.url, p.key, session, "1:1")
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	var out struct {
		Chunks []struct {
			Type      string
			Transient bool
			Delta     string
			Data      struct {
				LastEventID string `json:"last_event_id"`
				Message     string
			}
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Chunks) == 0 {
		t.Fatalf("%s: %v", raw, err)
	}
	first := out.Chunks[0]
	if first.Type != "data-coachd-events-missed" || !first.Transient || first.Data.LastEventID != "1:1" || !strings.Contains(first.Data.Message, "/messages") {
		t.Errorf("the first chunk: %+v", first)
	}
	var text strings.Builder
	for _, c := range out.Chunks {
		text.WriteString(c.Delta)
	}
	if text.String() != "Reply 2." {
		t.Errorf("after the notice: %q, want the oldest turn the log kept", text.String())
	}
}

// TestAISDKChatToolOutput plays useChat's own state (AbstractChat) through
// a paused tool answered with addToolOutput: the turn that goes on
// continues the assistant message the client sent, so the chat keeps one
// assistant message, under the id it had, not a copy of it beside it.
func TestAISDKChatToolOutput(t *testing.T) {
	node, dir, fake, p := startAISDK(t)
	fake.Enqueue(
		anthropictest.Blocks(anthropictest.TextBlock("Let me ask.", 4),
			anthropictest.ToolUse("toolu_o", "show_options", `{"prompt":"Pick a zone","options":["Airport","Downtown"]}`)),
		anthropictest.Text("Downtown it is.", 4),
	)
	raw := runAISDKScript(t, node, dir, p, "chat.mjs")
	var out struct {
		Error    *string
		Messages []struct {
			ID, Role string
			Parts    []string
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if out.Error != nil {
		t.Fatalf("chat error: %s", *out.Error)
	}
	var roles []string
	for _, m := range out.Messages {
		roles = append(roles, m.Role)
	}
	if got, want := strings.Join(roles, ","), "user,assistant"; got != want {
		t.Fatalf("roles %s, want %s: %s", got, want, raw)
	}
	if got := strings.Join(out.Messages[1].Parts, ","); strings.Count(got, "tool-show_options") != 1 || !strings.HasSuffix(got, "text") {
		t.Errorf("assistant parts %s", got)
	}
}

// TestAISDKResume plays useChat's resume (resumeStream, what resume: true
// does on mount) with DefaultChatTransport's default reconnect URL,
// {api}/{chatId}/stream: a chat whose turn ended and a chat coachd never
// saw resume nothing and show no error (204), and a chat whose turn still
// runs gets that turn's reply in full.
func TestAISDKResume(t *testing.T) {
	node, dir, fake, p := startAISDK(t)
	slow := anthropictest.Text("Once upon a time a driver found the best corner in town.", 4)
	slow.EventDelay = 50 * time.Millisecond
	fake.Enqueue(anthropictest.Text("Hello.", 4), slow)
	raw := runAISDKScript(t, node, dir, p, "resume.mjs")
	type chat struct {
		Error, Status string
		Messages      []struct{ ID, Role, Text string }
	}
	var out struct{ Ended, Unknown, Running chat }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	for name, c := range map[string]chat{"ended": out.Ended, "unknown": out.Unknown, "running": out.Running} {
		if c.Error != "" || c.Status != "ready" {
			t.Errorf("%s: error %q, status %q", name, c.Error, c.Status)
		}
	}
	if n := len(out.Ended.Messages); n != 2 || out.Ended.Messages[1].Text != "Hello." {
		t.Errorf("ended: %+v", out.Ended.Messages)
	}
	if n := len(out.Unknown.Messages); n != 0 {
		t.Errorf("unknown: %+v", out.Unknown.Messages)
	}
	if m := out.Running.Messages; len(m) != 2 || m[1].Role != "assistant" || m[1].Text != "Once upon a time a driver found the best corner in town." {
		t.Errorf("running: %+v", m)
	}
}

// TestAISDKResumeAnswer: a page reloaded while the turn that went on
// from a paused tool's answer runs resumes it into the assistant message
// the client sent (the id the live stream's start carried), not into a
// second assistant message under the turn's own id.
func TestAISDKResumeAnswer(t *testing.T) {
	node, dir, fake, p := startAISDK(t)
	slow := anthropictest.Text("Downtown it is: the bars close at two and the rides pile up.", 4)
	slow.EventDelay = 50 * time.Millisecond
	fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Let me ask.", 4),
		anthropictest.ToolUse("toolu_o", "show_options", `{"prompt":"Pick a zone","options":["Airport","Downtown"]}`)), slow)
	raw := runAISDKScript(t, node, dir, p, "resumeanswer.mjs")
	var out struct {
		Answered, Error, Status string
		Messages                []struct {
			ID, Role, Text string
			Parts          []string
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if out.Error != "" || out.Status != "ready" {
		t.Errorf("error %q, status %q", out.Error, out.Status)
	}
	m := out.Messages
	if len(m) != 2 || m[1].ID != out.Answered {
		t.Fatalf("messages %+v, want the user's and the answered one (%s)", m, out.Answered)
	}
	// AI SDK 7 takes a resumed stream for a replay of the whole message
	// (resumeStreamIsReplay) and rebuilds it from the stream: the parts
	// before the pause are not in this turn's log.
	if !strings.HasSuffix(m[1].Text, "the rides pile up.") {
		t.Errorf("the answered message: parts %v, text %q", m[1].Parts, m[1].Text)
	}
}

// TestAISDKRegenerate plays useChat's Retry button after the model
// failed: busy before it said anything, or overloaded mid-reply after
// some text (stored partial). The chat shows the error, and regenerate()
// (trigger regenerate-message) runs the stored message again, once,
// without the broken text in the model's history, then or on the next
// turn; an answer the chat has is regenerated in a new session holding
// the chat up to its question (as an edit is: TestAISDKEditAndRegenerate).
func TestAISDKRegenerate(t *testing.T) {
	// x-should-retry: the SDK gives up at once, as after its last retry.
	busy := anthropictest.Status(529, http.Header{"X-Should-Retry": {"false"}}, "")
	broken := anthropictest.Text("Start at the airport because the flights land late and", 2)
	broken.Fault = anthropictest.Fault{Kind: anthropictest.FaultError, After: 8}
	for _, tc := range []struct {
		name  string
		first anthropictest.Reply
	}{{"BusyBeforeText", busy}, {"FailedMidReply", broken}} {
		t.Run(tc.name, func(t *testing.T) {
			node, dir, fake, p := startAISDK(t)
			fake.Enqueue(tc.first, anthropictest.Text("Start at the airport.", 4), anthropictest.Text("Or start downtown.", 4))
			raw := runAISDKScript(t, node, dir, p, "retry.mjs")
			var out struct {
				First, Error, Again string
				Messages            []struct{ Role, Text string }
			}
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			if out.First == "" || out.Error != "" {
				t.Fatalf("first error %q, then %q", out.First, out.Error)
			}
			if m := out.Messages; len(m) != 2 || m[0].Role != "user" || m[1].Role != "assistant" || m[1].Text != "Start at the airport." {
				t.Errorf("messages: %+v", m)
			}
			reqs := fake.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model calls", len(reqs))
			}
			for _, i := range []int{1, 2} {
				if msgs := reqs[i].Messages(); len(msgs) != 1 || msgs[0].Role != "user" {
					t.Errorf("regenerated turn %d sent %+v, want the one user message", i, msgs)
				}
			}
			if out.Again != "" {
				t.Errorf("regenerating the answer: %q", out.Again)
			}
		})
	}
}

// TestAISDKAutoSend plays useChat with sendAutomaticallyWhen:
// lastAssistantMessageIsCompleteWithToolCalls (an app that sends its
// paused tools' answers by itself) through turns that end on a tool round
// coachd ran: a call the reply was cut in, and max_rounds reached. The
// chat must not send them back as answers (coachd refuses those, 409,
// and the page shows the error): no error, no second request.
func TestAISDKAutoSend(t *testing.T) {
	node, dir, fake, p := startAISDK(t)
	fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Checking.", 4),
		anthropictest.ToolUse("toolu_x", "list_notes", `{"a`)).WithStop("max_tokens"))
	for i := range 10 {
		fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_r"+strconv.Itoa(i), "list_notes", `{}`)))
	}
	raw := runAISDKScript(t, node, dir, p, "autosend.mjs", "2")
	var out []struct {
		Error    string
		Status   string
		Messages int
		Tools    []struct{ Type, State string }
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != 2 {
		t.Fatalf("%s: %v", raw, err)
	}
	for i, want := range []string{"output-error", "output-available"} {
		turn := out[i]
		if turn.Error != "" || turn.Status != "ready" || turn.Messages != 2*(i+1) {
			t.Errorf("turn %d: error %q, status %s, %d messages", i+1, turn.Error, turn.Status, turn.Messages)
		}
		if n := len(turn.Tools); n == 0 || turn.Tools[n-1].State != want {
			t.Errorf("turn %d: tool parts %+v, the last one %s", i+1, turn.Tools, want)
		}
	}
	if n := len(fake.Requests()); n != 11 {
		t.Errorf("%d model requests, want 11", n)
	}
}

// startAISDK starts serve --demo on a new SQLite file with the fake
// Anthropic API as its model, and finds node with the ai package for the
// scripts in testdata/aisdkclient (skipping the test without them).
func startAISDK(t *testing.T) (node, dir string, fake *anthropictest.Server, p *proc) {
	t.Helper()
	node, dir = needNodePackage(t, filepath.Join("testdata", "aisdkclient"), "ai")
	fake = anthropictest.NewServer()
	t.Cleanup(fake.Close)
	p = MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	return node, dir, fake, p
}

// runAISDKScript runs script with the server's URL and key and returns
// what it printed; a script that fails fails the test, with the server's
// log.
func runAISDKScript(t *testing.T, node, dir string, p *proc, script string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(node, append([]string{filepath.Join(dir, script), p.url, p.key}, args...)...)
	cmd.Dir = dir
	raw, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s\n%s", script, err, raw, p.stderr)
	}
	return raw
}

// TestAISDKChatBadPart: a chat whose history holds a value of the wrong
// type (a text part's text a number) is refused naming that field, which
// is what useChat shows as its error.
func TestAISDKChatBadPart(t *testing.T) {
	node, dir, _, p := startAISDK(t)
	raw := runAISDKScript(t, node, dir, p, "badpart.mjs")
	var out struct{ Error *string }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if out.Error == nil || !strings.HasPrefix(*out.Error, "messages[0].parts[0].text: must be a string") {
		t.Errorf("useChat shows %s, want the field named", raw)
	}
}
