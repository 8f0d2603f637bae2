package agent_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/tools"
)

// TestPulseBaselineDayIsTheUsers: the pulse check's baseline was dated
// from the wall clock in UTC, while the context (which tells Sage the
// date) reads the injected clock in the user's zone; a user in Los
// Angeles answering at 19:00 on March 1st had a baseline "of 2026-03-02",
// and a test's clock did not count at all.
func TestPulseBaselineDayIsTheUsers(t *testing.T) {
	ctx := context.Background()
	clock := &manualClock{t: time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)} // 19:00 on March 1st in Los Angeles
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "coachd.db"), clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u := &coachd.User{Name: "ada", TokenBudget: 1_000_000}
	if err := db.CreateUser(ctx, u, "hash-"+t.Name()); err != nil {
		t.Fatal(err)
	}
	// The user's zone, as Sage keeps it: a profile file's attribute.
	if err := db.SaveFile(ctx, &coachd.File{UserID: u.ID, Type: "profile", Name: "profile", Content: "Ada",
		Attributes: coachd.FileAttributes{Timezone: "America/Los_Angeles"}}); err != nil {
		t.Fatal(err)
	}
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	h := &harness{t: t, store: db, fake: fake, user: u}
	ag := agent.DefaultAgent()
	ag.Tools = append(ag.Tools, "show_pulse_check")
	ag.Context = &agent.ContextSpec{Timezone: "UTC", Sections: []string{agent.SectionHeader}}
	agents := func(string) (*agent.Agent, bool) { return ag, true }
	h.runner = h.newRunner(tools.Builtins(), agents, func(c *agent.Config) { c.Clock = clock })

	fake.Enqueue(anthropictest.Blocks(use("p1", "show_pulse_check", `{"context":"How was your week?"}`)))
	res := h.turn(agent.TurnRequest{Message: "check in"}, &sink{})
	if res.StopReason != coachd.TurnAwaitingInput {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	if sys := string(fake.Requests()[0].Raw); !strings.Contains(sys, "2026-03-01 (America/Los_Angeles)") {
		t.Fatalf("the context does not date the turn March 1st:\n%s", sys)
	}
	fake.Enqueue(anthropictest.Text("Thanks.", 2))
	tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: u, SessionID: res.SessionID,
		Answer: &agent.Answer{ToolUseID: "p1", Content: json.RawMessage(`{"ratings":[{"domain":"health","rating":2}]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if res := tr.Run(ctx, &sink{}); res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("resume: %s %v", res.StopReason, res.Err)
	}
	f, err := db.FindFile(ctx, u.ID, tools.PulseBaselineType, tools.PulseBaselineType)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Pulse check of 2026-03-01: health 2/5."; f.Content != want {
		t.Fatalf("baseline %q, want %q", f.Content, want)
	}
}
