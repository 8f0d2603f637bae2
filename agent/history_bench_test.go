package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// BenchmarkTurnHistory is a turn on a session of 10 and of 1,000 stored
// messages, and beside each (floor) the same model call with the same
// history made directly through the adapter, nothing stored: coachd's
// overhead is turn − floor, and a long session should cost it at most
// twice a short one's.
//
//	go test ./agent -run '^$' -bench TurnHistory -benchmem
func BenchmarkTurnHistory(b *testing.B) {
	for _, n := range []int{10, 1000} {
		h := newHarnessB(b)
		h.fake.SetRecording(false)
		h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
			return anthropictest.Text("A short coaching reply.", 8)
		})
		ctx := context.Background()
		var model []coachd.ModelMessage
		history := func() []*coachd.Message {
			var msgs []*coachd.Message
			model = model[:0]
			for i := range n {
				role := coachd.RoleUser
				if i%2 == 1 {
					role = coachd.RoleAssistant
				}
				text := fmt.Sprintf("message %d of a long session about shifts, airports and surge pricing", i)
				msgs = append(msgs, &coachd.Message{Role: role, Blocks: []coachd.Block{coachd.TextBlock(text)}})
				model = append(model, coachd.ModelMessage{Role: role, Blocks: []coachd.Block{coachd.TextBlock(text)}})
			}
			return msgs
		}
		history()
		b.Run(fmt.Sprintf("floor/%d", n), func(b *testing.B) {
			m := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: h.fake.URL(), MaxRetries: -1})
			hist := append(append([]coachd.ModelMessage(nil), model...),
				coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("and now?")}})
			for b.Loop() {
				s := m.Stream(ctx, &coachd.ModelRequest{MaxTokens: 1024, Messages: hist})
				for s.Next() {
				}
				if err := s.Err(); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
		b.Run(fmt.Sprintf("turn/%d", n), func(b *testing.B) {
			// One session of n messages per turn, each already seen by
			// the runner (its history cached), as in a conversation that
			// goes on.
			ids := make([]string, b.N)
			for i := range ids {
				sess := &coachd.Session{UserID: h.user.ID, Agent: agent.DefaultAgent().Name, Title: "long"}
				if err := h.store.CreateSession(ctx, sess); err != nil {
					b.Fatal(err)
				}
				if err := h.store.AppendMessages(ctx, h.user.ID, sess.ID, history()); err != nil {
					b.Fatal(err)
				}
				tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sess.ID, Message: "warm"})
				if err != nil {
					b.Fatal(err)
				}
				tr.Close()
				ids[i] = sess.ID
			}
			b.ResetTimer()
			for i := range b.N {
				tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: ids[i], Message: "and now?"})
				if err != nil {
					b.Fatal(err)
				}
				if res := tr.Run(ctx, &sink{}); res.Err != nil {
					b.Fatal(res.Err)
				}
			}
		})
	}
}

// newHarnessB is a harness for benchmarks: a budget no run exhausts.
func newHarnessB(b *testing.B) *harness {
	h := harnessOver(b, nil, nil)
	budget := int64(1) << 50
	if _, err := h.store.UpdateUser(context.Background(), h.user.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		b.Fatal(err)
	}
	return h
}
