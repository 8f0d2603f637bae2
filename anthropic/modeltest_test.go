package anthropic_test

import (
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/modeltest"
)

// scriptBackend runs the shared conformance suite (modeltest) against a
// fake speaking the Anthropic stream; the Bedrock and Vertex backends
// reuse it with the fake behind their own wire.
type scriptBackend struct {
	fake  *anthropictest.Server
	model *anthropic.Model
}

func newScriptBackend(t *testing.T, untraced bool) modeltest.Backend {
	srv := MustServer(t)
	return &scriptBackend{fake: srv, model: newModel(srv, anthropic.Config{Untraced: untraced})}
}

// backendOn is newBackend for one way of sending calls (eachPath).
func backendOn(untraced bool, newBackend func(*testing.T, bool) modeltest.Backend) func(*testing.T) modeltest.Backend {
	return func(t *testing.T) modeltest.Backend { return newBackend(t, untraced) }
}

func (b *scriptBackend) Model() coachd.Model { return b.model }
func (b *scriptBackend) ModelNames() (primary, fallback string) {
	return "claude-opus-5-5", "claude-haiku-5-5"
}
func (b *scriptBackend) Requests() int { return len(b.fake.Requests()) }

func (b *scriptBackend) LastModel() string {
	reqs := b.fake.Requests()
	return reqs[len(reqs)-1].Model
}

func (b *scriptBackend) LastToolResults() map[string]string {
	reqs := b.fake.Requests()
	out := map[string]string{}
	for _, r := range reqs[len(reqs)-1].ToolResults() {
		out[r.ToolUseID] = r.ResultText()
	}
	return out
}

func (b *scriptBackend) Enqueue(scripts ...modeltest.Script) {
	for _, s := range scripts {
		b.fake.Enqueue(anthropicReply(s))
	}
}

// anthropicReply turns a neutral script into the fake's reply.
func anthropicReply(s modeltest.Script) anthropictest.Reply {
	if s.Status != 0 {
		return anthropictest.Status(s.Status, nil, "")
	}
	var blocks []anthropictest.BlockSpec
	if s.Text != "" {
		blocks = append(blocks, anthropictest.TextBlock(s.Text, 3))
	}
	for _, c := range s.Calls {
		blocks = append(blocks, anthropictest.ToolUse(c.ID, c.Name, c.Input, 3, 9))
	}
	r := anthropictest.Blocks(blocks...)
	// message_start, content_block_start, ping, then a delta per 3 runes.
	textEvents := 3 + (len([]rune(s.Text))+2)/3
	switch {
	case s.MaxTokens:
		r = r.WithStop(coachd.StopMaxTokens)
	case s.BusyAfterText:
		r = r.ErrorAfter(textEvents, "overloaded_error", "Overloaded")
	case s.Stall:
		r = r.StallAfter(textEvents)
	}
	return r
}

func TestModelConformance(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) { modeltest.Run(t, backendOn(untraced, newScriptBackend)) })
}
