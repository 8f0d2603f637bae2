package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

func loadSage(t *testing.T) *agent.Pack {
	t.Helper()
	p, err := agent.LoadPack(filepath.Join("..", "examples", "sage"), agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newPackHarness runs agents resolved by agents over the pack's tools
// (the sage pack's policy) plus the test tools.
func newPackHarness(t *testing.T, p *agent.Pack, agents func(string) (*agent.Agent, bool)) *harness {
	t.Helper()
	if agents == nil {
		agents = p.Agent
	}
	return harnessOver(t, append(tools.ForPack(p, p.FileTypes()), echoTool, failTool), agents)
}

func TestLoadPack(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		p := loadSage(t)
		a, ok := p.Agent("")
		if !ok || a.Name != "sage" || len(a.Skills) != 10 || a.FreePreviewTurns != 3 || a.Reserve != "estimate" {
			t.Fatalf("default agent %+v", a)
		}
		if got := strings.Join(p.WritableTypes("sage", "life_mapping"), ","); !strings.Contains(got, "overview") {
			t.Fatalf("life_mapping writes %s", got)
		}
		if got := strings.Join(p.WritableTypes("sage", ""), ","); strings.Contains(got, "overview") {
			t.Fatalf("default mode writes %s", got)
		}
		if got := strings.Join(p.Arcs("sage"), ","); got != "life_mapping,weekly_checkin" {
			t.Fatalf("arcs %s", got)
		}
		if a.Limits.MaxRounds != 5 || a.Limits.ToolTimeout != 10*time.Second {
			t.Fatalf("limits %+v", a.Limits)
		}
	})
	t.Run("ErrProblems", func(t *testing.T) {
		dir := t.TempDir()
		write := func(name, text string) {
			path := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("agents/coach.md", "---\nname: coach\ndescription: d\ntools: [save_note, nope]\nskills: [ghost]\nbogus: 1\nmax_tokens: lots\n---\nprompt\n")
		write("agents/other.md", "---\nname: wrong\ndescription: d\n---\n")
		write("skills/s1.md", "---\nname: s1\nsummary: hi\nwhen:\n  - time_of_day: brunch\n---\n## Goal\nx\n")
		write("skills/s2.md", "no front matter\n")
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		pe, ok := err.(*agent.PackError)
		if !ok {
			t.Fatalf("err %v", err)
		}
		got := pe.Error()
		for _, want := range []string{
			"agents/coach.md:7: max_tokens: \"lots\" is not an integer", "agents/coach.md:6: unknown key \"bogus\"",
			"agents/other.md:2: name \"wrong\" must match the file name \"other\"", "agents/other.md:5: the system prompt",
			"skills/s1.md:5: time_of_day \"brunch\"", "skills/s1.md:7: missing section \"## Guidance\"",
			"skills/s2.md:1: must start with YAML front matter",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("missing %q in:\n%s", want, got)
			}
		}
	})
}

func TestWhenRules(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	morning := time.Date(2026, 3, 2, 8, 0, 0, 0, paris)
	evening := time.Date(2026, 3, 2, 19, 0, 0, 0, paris)
	files := []*coachd.File{
		{Type: "day-plan", UpdatedAt: morning.Add(-time.Hour)},
		{Type: "daily-log", UpdatedAt: morning.Add(-24 * time.Hour)},
		{Type: "domain", Name: "health", Attributes: coachd.FileAttributes{Status: "in_crisis"}, UpdatedAt: morning},
	}
	yes, no := true, false
	for _, tc := range []struct {
		name string
		rule agent.Rule
		f    agent.Facts
		want bool
	}{
		{"MissingFileOverview", agent.Rule{MissingFile: []string{"overview"}}, agent.Facts{Files: files, Now: morning}, true},
		{"MissingFileHeld", agent.Rule{MissingFile: []string{"day-plan"}}, agent.Facts{Files: files, Now: morning}, false},
		{"HasFile", agent.Rule{HasFile: []string{"day-plan", "domain"}}, agent.Facts{Files: files, Now: morning}, true},
		{"MorningBracket", agent.Rule{TimeOfDay: []string{"morning"}}, agent.Facts{Now: morning}, true},
		{"EveningNotMorning", agent.Rule{TimeOfDay: []string{"morning"}}, agent.Facts{Now: evening}, false},
		{"FileToday", agent.Rule{FileToday: []string{"day-plan"}}, agent.Facts{Files: files, Now: evening}, true},
		{"FileTodayYesterday", agent.Rule{FileToday: []string{"daily-log"}}, agent.Facts{Files: files, Now: evening}, false},
		{"NoFileToday", agent.Rule{NoFileToday: []string{"daily-log"}}, agent.Facts{Files: files, Now: evening}, true},
		{"CloseDayCombo", agent.Rule{TimeOfDay: []string{"evening"}, FileToday: []string{"day-plan"}, NoFileToday: []string{"daily-log"}}, agent.Facts{Files: files, Now: evening}, true},
		{"CheckinDue", agent.Rule{CheckinDue: &yes}, agent.Facts{CheckinDue: true, Now: morning}, true},
		{"CheckinNotDue", agent.Rule{CheckinDue: &yes}, agent.Facts{CheckinDue: false, Now: morning}, false},
		{"CheckinDueFalse", agent.Rule{CheckinDue: &no}, agent.Facts{CheckinDue: false, Now: morning}, true},
		{"FileStatus", agent.Rule{FileStatus: []string{"needs_attention", "in_crisis"}}, agent.Facts{Files: files, Now: morning}, true},
		{"FileStatusOtherType", agent.Rule{FileStatus: []string{"in_crisis"}, StatusType: "overview"}, agent.Facts{Files: files, Now: morning}, false},
		{"FileStatusNone", agent.Rule{FileStatus: []string{"thriving"}}, agent.Facts{Files: files, Now: morning}, false},
		{"Mode", agent.Rule{Mode: []string{"life_mapping"}}, agent.Facts{Mode: "life_mapping", Now: morning}, true},
		{"ModeOther", agent.Rule{Mode: []string{"life_mapping"}}, agent.Facts{Mode: "", Now: morning}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rule.Match(&tc.f); got != tc.want {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("SkillAnyRule", func(t *testing.T) {
		s := &agent.Skill{When: []agent.Rule{{Mode: []string{"x"}}, {TimeOfDay: []string{"morning"}}}}
		if !s.Matches(&agent.Facts{Now: morning}) || s.Matches(&agent.Facts{Now: evening}) {
			t.Fatal("a skill loads when any rule holds")
		}
	})
}

func TestLoadSkillTool(t *testing.T) {
	h := newPackHarness(t, loadSage(t), nil)
	h.fake.Enqueue(
		anthropictest.Blocks(use("s1", "load_skill", `{"name":"decision-helper"}`), use("s2", "load_skill", `{"name":"nope"}`)),
		anthropictest.Text("Let's weigh it.", 5),
	)
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "should I take the job?"}, s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	r := s.of(coachd.EventToolResult)
	if len(r) != 2 || r[0].IsError || !strings.Contains(r[0].Result, `<skill name="decision-helper">`) || !strings.Contains(r[0].Result, "## Guidance") {
		t.Fatalf("load_skill result %+v", r)
	}
	if !r[1].IsError || !strings.Contains(r[1].Result, "available: [open-day") {
		t.Fatalf("unknown skill result %+v", r[1])
	}
	// Summaries are always in the prompt, as the first, stable block.
	sys, _ := json.Marshal(h.fake.Requests()[0].Body["system"])
	if !strings.Contains(string(sys), "decision-helper: Values-based help") {
		t.Fatalf("system %s", sys)
	}
}

func TestSaveFilePermissions(t *testing.T) {
	h := newPackHarness(t, loadSage(t), nil)
	h.fake.Enqueue(
		anthropictest.Blocks(use("f1", "save_file", `{"file_type":"overview","content":"# Map"}`)),
		anthropictest.Blocks(use("a1", "enter_structured_arc", `{"arc":"life_mapping"}`)),
		anthropictest.Blocks(use("f2", "save_file", `{"file_type":"overview","content":"# Map","attributes":{"status":"good"}}`),
			use("f3", "save_file", `{"file_type":"day-plan","file_name":"../etc","content":"x"}`)),
		anthropictest.Text("Saved.", 5),
	)
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "map my life"}, s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	r := s.of(coachd.EventToolResult)
	if len(r) != 4 || !r[0].IsError || !strings.Contains(r[0].Result, "may not be written in default mode") {
		t.Fatalf("forbidden write %+v", r)
	}
	if r[2].IsError || !strings.Contains(r[2].Result, `"path":"overview/overview"`) {
		t.Fatalf("allowed write %+v", r[2])
	}
	if !r[3].IsError {
		t.Fatalf("day-plan is not writable in life_mapping, and ../etc is not a name: %+v", r[3])
	}
	if ch := s.of(coachd.EventSessionChanged); len(ch) != 1 || ch[0].Mode != "life_mapping" {
		t.Fatalf("session_changed %+v", ch)
	}
	f, err := h.store.FindFile(context.Background(), h.user.ID, "overview", "overview")
	if err != nil || f.Content != "# Map" || f.Attributes.Status != "good" {
		t.Fatalf("file %+v %v", f, err)
	}
	// Re-sent history carries the content truncated.
	last := h.fake.Requests()[3].Messages()
	for _, m := range last {
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockToolUse && b.ID == "f2" && !strings.Contains(string(b.Input), "[saved: 5 chars]") {
				t.Fatalf("re-sent input %s", b.Input)
			}
		}
	}
}

// TestTurnContextOncePerRequest: every request of a turn carries the
// turn's context (the time bracket and date, TailBlocks) once, as the
// last block of its last user message and nowhere else, over two turns
// of a session and both rounds of a tool turn, each with its whole
// history. The first round reuses the history the reservation's estimate
// built (historySent): were that shared rather than copied, the context
// would be added to it twice; were it kept past the history's growth, a
// request would miss the tool round.
func TestTurnContextOncePerRequest(t *testing.T) {
	h := newPackHarness(t, loadSage(t), nil)
	h.fake.Enqueue(
		anthropictest.Blocks(use("s1", "load_skill", `{"name":"decision-helper"}`)),
		anthropictest.Text("Let's weigh it.", 5),
		anthropictest.Text("Sleep on it.", 5),
	)
	res := h.turn(agent.TurnRequest{Message: "should I take the job?"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	if res = h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "and then?"}, &sink{}); res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("second turn: stop %s %v", res.StopReason, res.Err)
	}
	reqs := h.fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		msgs := r.Messages()
		// Each request sends the whole history so far: the first round's
		// user message, then the tool round, then the second turn's.
		if want := []int{1, 3, 5}[i]; len(msgs) != want {
			t.Errorf("request %d sends %d messages, want %d", i, len(msgs), want)
			continue
		}
		var at []string
		for j, m := range msgs {
			for k, b := range m.Blocks {
				if strings.Contains(b.Text, "Time: ") {
					at = append(at, fmt.Sprintf("message %d block %d", j, k))
				}
			}
		}
		last := msgs[len(msgs)-1]
		want := fmt.Sprintf("message %d block %d", len(msgs)-1, len(last.Blocks)-1)
		if len(at) != 1 || at[0] != want || last.Role != coachd.RoleUser {
			t.Errorf("request %d: the turn's context at %v, want once at %s", i, at, want)
		}
	}
}
