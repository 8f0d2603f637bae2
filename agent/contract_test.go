package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// validator is the validator coach of the adversarial loop: it must record
// its decision and answer with a structured verdict.
func validator(t *testing.T) *agent.Agent {
	t.Helper()
	a := &agent.Agent{
		Name: "validator", Prompt: "Validate independently.", Tools: []string{"echo", "save_note", "fail"},
		Contracts: agent.Contracts{MustCall: []string{"echo"}, MustNotCall: []string{"fail"}, MaxRepairs: 1},
	}
	if err := a.Contracts.SetMustOutput(json.RawMessage(`{"type":"object","properties":{"decision":{"enum":["approve","feedback"]}},"required":["decision"]}`)); err != nil {
		t.Fatal(err)
	}
	return a
}

func contractHarness(t *testing.T) *harness {
	a := validator(t)
	return newPackHarness(t, loadSage(t), func(string) (*agent.Agent, bool) { return a, true })
}

func TestContracts(t *testing.T) {
	t.Run("Met", func(t *testing.T) {
		h := contractHarness(t)
		h.fake.Enqueue(
			anthropictest.Blocks(use("e1", "echo", `{}`)),
			anthropictest.Text("```json\n{\"decision\":\"approve\"}\n```", 6),
		)
		res := h.turn(agent.TurnRequest{Message: "check it"}, &sink{})
		if res.StopReason != coachd.TurnEndTurn || len(h.fake.Requests()) != 2 {
			t.Fatalf("stop %s %v after %d requests", res.StopReason, res.Err, len(h.fake.Requests()))
		}
	})
	t.Run("Repaired", func(t *testing.T) {
		h := contractHarness(t)
		h.fake.Enqueue(
			anthropictest.Text("Looks fine to me.", 6),
			anthropictest.Blocks(use("e1", "echo", `{}`)),
			anthropictest.Text(`{"decision":"feedback"}`, 6),
		)
		res := h.turn(agent.TurnRequest{Message: "check it"}, &sink{})
		if res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("stop %s %v", res.StopReason, res.Err)
		}
		repair := h.fake.Requests()[1].LastUserText()
		if !strings.Contains(repair, "must_call: echo was not called") || !strings.Contains(repair, "not a single JSON object") {
			t.Fatalf("repair message %q", repair)
		}
		h.assertValidHistory(res.SessionID)
	})
	t.Run("ViolationEndsTurn", func(t *testing.T) {
		h := contractHarness(t)
		h.fake.Enqueue(anthropictest.Text("Approved.", 6), anthropictest.Text(`{"decision":"maybe"}`, 6))
		s := &sink{}
		res := h.turn(agent.TurnRequest{Message: "check it"}, s)
		if res.StopReason != coachd.TurnContractViolation || len(h.fake.Requests()) != 2 {
			t.Fatalf("stop %s after %d requests", res.StopReason, len(h.fake.Requests()))
		}
		errs := s.of(coachd.EventError)
		if len(errs) != 1 || errs[0].Err.Code != agent.EContractViolation || !strings.Contains(errs[0].Err.Message, "echo was not called") {
			t.Fatalf("error events %+v", errs)
		}
		fields := map[string]bool{}
		for _, d := range errs[0].Err.Details {
			fields[d.Field] = true
		}
		if !fields["must_call"] || !fields["must_output.decision"] {
			t.Fatalf("details %+v", errs[0].Err.Details)
		}
		if end := s.of(coachd.EventTurnEnded); end[0].StopReason != coachd.TurnContractViolation {
			t.Fatalf("turn_ended %+v", end)
		}
		h.assertValidHistory(res.SessionID)
	})
	t.Run("MustNotCall", func(t *testing.T) {
		h := contractHarness(t)
		h.fake.Enqueue(
			anthropictest.Blocks(use("x1", "fail", `{}`)),
			anthropictest.Blocks(use("x2", "fail", `{}`)),
		)
		s := &sink{}
		res := h.turn(agent.TurnRequest{Message: "check it"}, s)
		if res.StopReason != coachd.TurnContractViolation {
			t.Fatalf("stop %s", res.StopReason)
		}
		r := s.of(coachd.EventToolResult)
		if len(r) != 2 || !r[0].IsError || !strings.Contains(r[0].Result, "contract forbids") {
			t.Fatalf("results %+v", r)
		}
		h.assertValidHistory(res.SessionID)
	})
}

func TestActionTagsTurn(t *testing.T) {
	a := &agent.Agent{Name: "driver", Prompt: "Coach drivers.", Tools: []string{"save_note"}, ActionTags: true}
	h := newPackHarness(t, loadSage(t), func(string) (*agent.Agent, bool) { return a, true })
	text := `Noted! [SAVE_NOTE: {"note_type": "preference", "title": "Mornings", "content": "Likes 5-10am [airport]"}] See you. [ZONE_INTEL: {"zone_name": "x"}][SAVE_NOTE: {"title": 5}]`
	h.fake.Enqueue(anthropictest.Text(text, 4)) // tags arrive split across many deltas
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "I like mornings"}, s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	var seen strings.Builder
	for _, e := range s.of(coachd.EventTextDelta) {
		seen.WriteString(e.Text)
	}
	if seen.String() != "Noted!  See you. " || res.Text != "Noted!  See you. " {
		t.Fatalf("client saw %q, result %q", seen.String(), res.Text)
	}
	r := s.of(coachd.EventToolResult)
	if len(r) != 3 || r[0].IsError || !r[1].IsError || !strings.Contains(r[1].Result, "no tool \"zone_intel\"") || !r[2].IsError {
		t.Fatalf("results %+v", r)
	}
	notes, _, _ := h.store.ListNotes(context.Background(), h.user.ID, coachd.NoteFilter{}, coachd.Page{})
	if len(notes) != 1 || notes[0].Content != "Likes 5-10am [airport]" {
		t.Fatalf("notes %+v", notes)
	}
	msgs := h.history(res.SessionID)
	last := msgs[len(msgs)-1]
	if strings.Contains(last.Content, "SAVE_NOTE") || strings.Contains(coachd.BlocksText(last.Blocks), "[SAVE_NOTE") {
		t.Fatalf("stored %q", last.Content)
	}
	var meta struct {
		ToolCalls []struct{ Name, Source string } `json:"tool_calls"`
		Actions   []struct {
			Name    string
			IsError bool `json:"is_error"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(last.Metadata, &meta); err != nil || len(meta.Actions) != 3 || meta.ToolCalls[0].Source != "action_tag" {
		t.Fatalf("metadata %s", last.Metadata)
	}
}
