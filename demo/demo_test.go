package demo_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/demo"
)

var allTools = []coachd.ToolSpec{
	{Name: "save_note", InputSchema: json.RawMessage(`{"type":"object"}`)},
	{Name: "show_options", InputSchema: json.RawMessage(`{"type":"object"}`)},
	{Name: "complete_session", InputSchema: json.RawMessage(`{"type":"object"}`)},
}

func user(text string) coachd.ModelMessage {
	return coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(text)}}
}

func assistant(blocks ...coachd.Block) coachd.ModelMessage {
	return coachd.ModelMessage{Role: coachd.RoleAssistant, Blocks: blocks}
}

// later is a conversation that already had a reply, so no disclaimer.
func later(msgs ...coachd.ModelMessage) []coachd.ModelMessage {
	return append([]coachd.ModelMessage{user("hi"), assistant(coachd.TextBlock("Hello!"))}, msgs...)
}

// result is what MustRun saw.
type result struct {
	events []coachd.ModelEvent
	resp   *coachd.ModelResponse
	text   string // the text deltas joined
}

// MustRun streams req through a zero-delay demo model and checks the
// events add up to the response.
func MustRun(tb testing.TB, req *coachd.ModelRequest) result {
	tb.Helper()
	s := demo.New(demo.Config{}).Stream(context.Background(), req)
	defer s.Close()
	var r result
	var sb strings.Builder
	inputs := map[int]string{}
	for s.Next() {
		ev := s.Event()
		r.events = append(r.events, ev)
		switch ev.Type {
		case coachd.ModelTextDelta:
			sb.WriteString(ev.Text)
		case coachd.ModelInputJSONDelta:
			inputs[ev.Index] += ev.Text
		}
	}
	if err := s.Err(); err != nil {
		tb.Fatalf("Err: %v", err)
	}
	r.resp = s.Response()
	r.text = sb.String()
	if got := coachd.BlocksText(r.resp.Blocks); got != r.text {
		tb.Errorf("response text %q != streamed text %q", got, r.text)
	}
	for i, b := range r.resp.Blocks {
		if b.Type == coachd.BlockToolUse && string(b.Input) != inputs[i] {
			tb.Errorf("block %d input %s != streamed %s", i, b.Input, inputs[i])
		}
	}
	last := r.events[len(r.events)-1]
	if last.Type != coachd.ModelMessageDelta || last.StopReason != r.resp.StopReason || last.Usage != r.resp.Usage {
		tb.Errorf("last event %+v does not match response %+v", last, r.resp)
	}
	if r.resp.Usage.InputTokens <= 0 || r.resp.Usage.OutputTokens <= 0 {
		tb.Errorf("usage %+v, want positive counts", r.resp.Usage)
	}
	return r
}

// toolCall returns the response's tool_use block, if any.
func toolCall(r result) *coachd.Block {
	for _, b := range r.resp.Blocks {
		if b.Type == coachd.BlockToolUse {
			return &b
		}
	}
	return nil
}

func TestRules(t *testing.T) {
	t.Run("SaveNote", func(t *testing.T) {
		said := "Please remember that I prefer morning runs before work."
		r := MustRun(t, &coachd.ModelRequest{Messages: later(user(said)), Tools: allTools})
		call := toolCall(r)
		if call == nil || call.Name != "save_note" || r.resp.StopReason != coachd.StopToolUse {
			t.Fatalf("got %+v, stop %s; want a save_note call", r.resp.Blocks, r.resp.StopReason)
		}
		if !strings.HasPrefix(call.ID, "toolu_demo_") {
			t.Errorf("ID = %q", call.ID)
		}
		want := `{"note_type":"preference","title":"I prefer morning runs before work","content":"` + said + `","importance":60}`
		if string(call.Input) != want {
			t.Errorf("input\n got %s\nwant %s", call.Input, want)
		}
	})

	t.Run("SaveNoteLong", func(t *testing.T) {
		said := "remember " + strings.Repeat("x", 300) + " " + strings.Repeat("word ", 2000)
		r := MustRun(t, &coachd.ModelRequest{Messages: later(user(said)), Tools: allTools})
		var in struct{ Title, Content string }
		if err := json.Unmarshal(toolCall(r).Input, &in); err != nil {
			t.Fatal(err)
		}
		if n, m := utf8.RuneCountInString(in.Title), utf8.RuneCountInString(in.Content); n > 200 || m > 5000 {
			t.Errorf("title %d runes, content %d runes: over the save_note limits", n, m)
		}
	})

	t.Run("ShowOptions", func(t *testing.T) {
		r := MustRun(t, &coachd.ModelRequest{Messages: later(user("What should I focus on this week?")), Tools: allTools})
		call := toolCall(r)
		if call == nil || call.Name != "show_options" {
			t.Fatalf("got %+v, want a show_options call", r.resp.Blocks)
		}
		var in struct {
			Prompt  string   `json:"prompt"`
			Options []string `json:"options"`
		}
		if err := json.Unmarshal(call.Input, &in); err != nil || in.Prompt == "" || len(in.Options) != 3 {
			t.Errorf("input %s: want a prompt and 3 options (%v)", call.Input, err)
		}
	})

	t.Run("CompleteSession", func(t *testing.T) {
		r := MustRun(t, &coachd.ModelRequest{Messages: later(user("Thanks, that's all for today. Bye!")), Tools: allTools})
		call := toolCall(r)
		if call == nil || call.Name != "complete_session" {
			t.Fatalf("got %+v, want a complete_session call", r.resp.Blocks)
		}
		var in struct{ Type, Summary string }
		if err := json.Unmarshal(call.Input, &in); err != nil || in.Type != "session" || !strings.Contains(in.Summary, "hi") {
			t.Errorf("input %s (%v)", call.Input, err)
		}
	})

	t.Run("ReflectQuestionToCoach", func(t *testing.T) {
		// The browser UI's own suggestion: "you" is the coach, and
		// mirrors to "I", as "me" does to "you".
		r := MustRun(t, &coachd.ModelRequest{Messages: later(user("What do you remember about me?")), Tools: allTools})
		if !strings.Contains(r.text, "“What do I remember about you?”") {
			t.Errorf("text %q: want the question mirrored both ways", r.text)
		}
		for said, want := range map[string]string{
			"Can you help me with your plan?":     "Can I help you with my plan?",
			"Do you think that you are right?":    "Do I think that I am right?",
			"Why did you tell me that you could?": "Why did I tell you that I could?",
		} {
			r = MustRun(t, &coachd.ModelRequest{Messages: later(user(said)), Tools: allTools})
			if !strings.Contains(r.text, "“"+want+"”") {
				t.Errorf("text %q: want %q, mirrored both ways", r.text, want)
			}
		}
	})

	t.Run("Reflect", func(t *testing.T) {
		r := MustRun(t, &coachd.ModelRequest{Messages: later(user("I keep skipping my workouts when I'm tired.")), Tools: allTools})
		if toolCall(r) != nil || r.resp.StopReason != coachd.StopEndTurn {
			t.Fatalf("got %+v, stop %s; want plain text", r.resp.Blocks, r.resp.StopReason)
		}
		if !strings.Contains(r.text, "you keep skipping your workouts when you're tired") || !strings.HasSuffix(r.text, "?") {
			t.Errorf("text %q: want the words mirrored and a question", r.text)
		}
	})

	t.Run("Greeting", func(t *testing.T) {
		r := MustRun(t, &coachd.ModelRequest{Messages: later(user("Hello coach!")), Tools: allTools})
		if !strings.HasPrefix(r.text, "Hi!") || toolCall(r) != nil {
			t.Errorf("got %q", r.text)
		}
	})

	t.Run("ReflectLong", func(t *testing.T) {
		r := MustRun(t, &coachd.ModelRequest{Messages: later(user(strings.Repeat("I worry about work a lot ", 6)))})
		if !strings.Contains(r.text, "…") || strings.Contains(r.text, "….") {
			t.Errorf("text %q: want the words clipped once", r.text)
		}
	})

	t.Run("ToolResults", func(t *testing.T) {
		tests := []struct {
			name, tool, content string
			isError             bool
			want                string
		}{
			{"SaveNote", "save_note", `{"id":"note_1"}`, false, "Saved — I'll remember that."},
			{"ShowOptions", "show_options", "Plan the rest of my week", false, "You picked “Plan the rest of my week”"},
			{"CompleteSession", "complete_session", "ok", false, "That's a wrap"},
			{"Error", "save_note", "database is down", true, "save_note didn't work (database is down)"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				use := coachd.Block{Type: coachd.BlockToolUse, ID: "toolu_x", Name: tt.tool, Input: json.RawMessage(`{}`)}
				msgs := later(
					user("do it"),
					assistant(coachd.TextBlock("On it."), use),
					coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.ToolResultBlock("toolu_x", tt.content, tt.isError)}},
				)
				r := MustRun(t, &coachd.ModelRequest{Messages: msgs, Tools: allTools})
				if toolCall(r) != nil || r.resp.StopReason != coachd.StopEndTurn {
					t.Fatalf("got %+v, want text only", r.resp.Blocks)
				}
				if !strings.Contains(r.text, tt.want) {
					t.Errorf("text %q, want it to contain %q", r.text, tt.want)
				}
			})
		}
	})

	t.Run("ToolsOnlyWhenOffered", func(t *testing.T) {
		for _, said := range []string{"Remember that I hate mornings", "Give me some options", "Goodbye"} {
			for name, req := range map[string]*coachd.ModelRequest{
				"NoTools":    {Messages: later(user(said))},
				"OtherTools": {Messages: later(user(said)), Tools: []coachd.ToolSpec{{Name: "get_weather"}}},
				"ChoiceNone": {Messages: later(user(said)), Tools: allTools, ToolChoice: &coachd.ToolChoice{Type: "none"}},
			} {
				r := MustRun(t, req)
				if c := toolCall(r); c != nil || r.resp.StopReason != coachd.StopEndTurn {
					t.Errorf("%s %q: called %v (stop %s)", name, said, c, r.resp.StopReason)
				}
			}
		}
	})
}

func TestDisclaimer(t *testing.T) {
	first := MustRun(t, &coachd.ModelRequest{Messages: []coachd.ModelMessage{user("Hello coach")}})
	if !strings.HasPrefix(first.text, demo.Disclaimer) || !strings.Contains(first.text, "ANTHROPIC_API_KEY") {
		t.Errorf("first reply %q: want the disclaimer first", first.text)
	}
	second := MustRun(t, &coachd.ModelRequest{Messages: later(user("Hello coach"))})
	if strings.Contains(second.text, "demo model") {
		t.Errorf("later reply %q repeats the disclaimer", second.text)
	}
}

func TestDeterministic(t *testing.T) {
	req := func() *coachd.ModelRequest {
		return &coachd.ModelRequest{Messages: []coachd.ModelMessage{user("Remember: I run on Tuesdays")}, Tools: allTools}
	}
	a, b := MustRun(t, req()), MustRun(t, req())
	ja, _ := json.Marshal(a.resp)
	jb, _ := json.Marshal(b.resp)
	if string(ja) != string(jb) || !reflect.DeepEqual(a.events, b.events) {
		t.Errorf("same request, different replies:\n%s\n%s", ja, jb)
	}
	other := MustRun(t, &coachd.ModelRequest{Messages: later(user("Remember: I run on Tuesdays")), Tools: allTools})
	if toolCall(other).ID == toolCall(a).ID {
		t.Errorf("different conversations share tool ID %s", toolCall(a).ID)
	}
	// Text streams in small chunks, not all at once.
	if n := countType(a.events, coachd.ModelTextDelta); n < 5 {
		t.Errorf("%d text chunks, want several", n)
	}
}

func countType(evs []coachd.ModelEvent, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

func TestCancel(t *testing.T) {
	t.Run("MidStream", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := demo.New(demo.Config{}).Stream(ctx, &coachd.ModelRequest{Messages: []coachd.ModelMessage{user("Hello")}})
		defer s.Close()
		var got string
		for range 2 {
			if !s.Next() {
				t.Fatalf("Next = false early: %v", s.Err())
			}
			got += s.Event().Text
		}
		cancel()
		if s.Next() {
			t.Fatal("Next = true after cancel")
		}
		if !errors.Is(s.Err(), context.Canceled) {
			t.Errorf("Err = %v, want context.Canceled", s.Err())
		}
		resp := s.Response()
		if text := coachd.BlocksText(resp.Blocks); text != got || text == "" {
			t.Errorf("partial text %q, want %q", text, got)
		}
		if resp.StopReason != "" || resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
			t.Errorf("partial response %+v: want no stop reason and the usage so far", resp)
		}
	})

	t.Run("WhileWaiting", func(t *testing.T) {
		// With an hour per chunk, Next can only return because of the
		// cancel.
		ctx, cancel := context.WithCancel(context.Background())
		s := demo.New(demo.Config{Delay: time.Hour}).Stream(ctx, &coachd.ModelRequest{Messages: []coachd.ModelMessage{user("Hello")}})
		defer s.Close()
		done := make(chan bool)
		go func() { done <- s.Next() }()
		cancel()
		select {
		case ok := <-done:
			if ok || !errors.Is(s.Err(), context.Canceled) {
				t.Errorf("Next = %v, Err = %v; want false, context.Canceled", ok, s.Err())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Next ignored the cancel")
		}
	})
}

func TestClose(t *testing.T) {
	s := demo.New(demo.Config{}).Stream(context.Background(), &coachd.ModelRequest{Messages: []coachd.ModelMessage{user("Hello")}})
	s.Next()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Close() != nil || s.Next() {
		t.Error("stream usable after Close")
	}
}

func TestAttachments(t *testing.T) {
	img := coachd.AttachmentBlock(coachd.MediaPNG, "", make([]byte, 12*1024))
	doc := coachd.AttachmentBlock(coachd.MediaText, "notes.txt", []byte("hello"))
	req := &coachd.ModelRequest{Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{img, doc, coachd.TextBlock("what do you think?")}}}}
	s := demo.New(demo.Config{}).Stream(context.Background(), req)
	for s.Next() {
	}
	got := coachd.BlocksText(s.Response().Blocks)
	if want := "I see 1 image (image/png, 12 KB) and 1 document (“notes.txt”, text/plain, 1 KB)."; !strings.Contains(got, want) {
		t.Fatalf("reply %q does not contain %q", got, want)
	}
	if in := s.Response().Usage.InputTokens; in > 5000 {
		t.Fatalf("input tokens = %d: the image's base64 was counted as text", in)
	}
}
