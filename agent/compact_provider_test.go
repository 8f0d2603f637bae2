package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestCompactionUsesAgentsProvider: an agent that names its own provider
// is served by Config.ModelFor's model for every call of its turns, the
// compaction's summary too, not the runner's default model (another
// account, endpoint or vendor). A review found the summary sent to the
// default model.
func TestCompactionUsesAgentsProvider(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	own := anthropictest.NewServer() // the agent's provider
	t.Cleanup(own.Close)
	ag := agent.DefaultAgent()
	ag.Provider = agent.Provider{Name: "anthropic", BaseURL: own.URL()}
	ag.Compaction = &agent.Compaction{ShortenAfter: 100, SummarizeAfter: 200, KeepTurns: 1, ShortenOver: 100000}
	ownModel := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: own.URL(), MaxRetries: -1, Untraced: true})
	r := h.newRunner(nil, func(string) (*agent.Agent, bool) { return ag, true }, func(c *agent.Config) {
		c.ModelFor = func(a *agent.Agent) coachd.Model {
			if a.Provider != (agent.Provider{}) {
				return ownModel
			}
			return nil
		}
	})
	ctx := context.Background()
	sess := &coachd.Session{UserID: h.user.ID, Agent: ag.Name, Title: "long"}
	if err := h.store.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("words of an old turn ", 100)
	var msgs []*coachd.Message
	for range 4 {
		msgs = append(msgs,
			&coachd.Message{Role: coachd.RoleUser, Content: long, Blocks: []coachd.Block{coachd.TextBlock(long)}},
			&coachd.Message{Role: coachd.RoleAssistant, Content: long, Blocks: []coachd.Block{coachd.TextBlock(long)}})
	}
	if err := h.store.AppendMessages(ctx, h.user.ID, sess.ID, msgs); err != nil {
		t.Fatal(err)
	}
	own.Enqueue(anthropictest.Text("A summary of the old turns.", 8), anthropictest.Text("The reply.", 4))
	h.fake.Enqueue(anthropictest.Text("A summary from the wrong account.", 8))

	tr, err := r.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sess.ID, Message: "and now?"})
	if err != nil {
		t.Fatal(err)
	}
	res := tr.Run(ctx, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	if n := len(h.fake.Requests()); n != 0 {
		t.Errorf("the runner's default model got %d request(s) of a turn of an agent with its own provider (the compaction summary)", n)
	}
	if n := len(own.Requests()); n != 2 {
		t.Errorf("the agent's provider got %d requests, want 2 (the summary and the reply)", n)
	}
}
