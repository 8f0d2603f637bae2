package openai_test

import (
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/modeltest"
	"github.com/coachd/coachd/openai"
	"github.com/coachd/coachd/openai/openaitest"
)

// backend runs the shared conformance suite against the OpenAI fake.
type backend struct {
	fake  *openaitest.Server
	model *openai.Model
}

func newBackend(t *testing.T) modeltest.Backend {
	fake := MustServer(t)
	return &backend{fake: fake, model: newModel(fake, openai.Config{})}
}

func (b *backend) Model() coachd.Model                    { return b.model }
func (b *backend) ModelNames() (primary, fallback string) { return "gpt-5.1", "llama3.1:8b" }
func (b *backend) Requests() int                          { return len(b.fake.Requests()) }

func (b *backend) LastModel() string {
	reqs := b.fake.Requests()
	return reqs[len(reqs)-1].Model
}

func (b *backend) LastToolResults() map[string]string {
	reqs := b.fake.Requests()
	return reqs[len(reqs)-1].ToolResults()
}

// Enqueue scripts replies with the wire's awkward parts on: 3-byte
// argument fragments, parallel calls interleaved.
func (b *backend) Enqueue(scripts ...modeltest.Script) {
	for _, s := range scripts {
		if s.Status != 0 {
			b.fake.Enqueue(openaitest.Status(s.Status, nil, ""))
			continue
		}
		r := openaitest.Reply{Text: s.Text, Chunk: 3, Interleave: true}
		for _, c := range s.Calls {
			r.Calls = append(r.Calls, openaitest.Call{ID: c.ID, Name: c.Name, Args: c.Input, Split: 3})
		}
		textChunks := 1 + (len([]rune(s.Text))+2)/3 // the role chunk, then the text
		switch {
		case s.MaxTokens:
			r.Finish = "length"
		case s.BusyAfterText:
			r = r.ErrorAfter(textChunks, "server_error", 503) // LiteLLM and vLLM put the status in code
		case s.Stall:
			r = r.StallAfter(textChunks)
		}
		b.fake.Enqueue(r)
	}
}

func TestConformance(t *testing.T) {
	modeltest.Run(t, newBackend)
}
