package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/tools"
)

// BenchmarkRequestBody is the work from a prepared request to its bytes on
// the wire, through a real SDK client that stops at its middleware: the
// SDK encoding the params (sdk_params, the former path) against coachd's
// body (coachd_body), for a coach's request (system prompt and context,
// every built-in tool) with a history of n tool rounds.
//
//	go test ./anthropic -run '^$' -bench BenchmarkRequestBody -benchmem -count 6
func BenchmarkRequestBody(b *testing.B) {
	for _, rounds := range []int{1, 50} {
		req := coachRequest(rounds)
		b.Run(fmt.Sprintf("sdk_params/rounds=%d", rounds), func(b *testing.B) {
			var n int64
			m := New(Config{})
			client := lengthClient(&n)
			for b.Loop() {
				p, err := sdkParams(m, req)
				if err != nil {
					b.Fatal(err)
				}
				client.Messages.NewStreaming(context.Background(), p)
			}
			b.ReportMetric(float64(n), "bytes/req")
		})
		b.Run(fmt.Sprintf("coachd_body/rounds=%d", rounds), func(b *testing.B) {
			var n int64
			m := New(Config{})
			m.client = lengthClient(&n)
			for b.Loop() {
				m.Stream(context.Background(), req)
			}
			b.ReportMetric(float64(n), "bytes/req")
		})
	}
}

// lengthClient is captureClient that notes only the body's length: the
// benchmark leaves reading the body to the transport it does not have.
func lengthClient(n *int64) sdk.Client {
	return sdk.NewClient(option.WithAPIKey("k"), option.WithBaseURL("http://127.0.0.1:9/"), option.WithMaxRetries(0),
		option.WithMiddleware(func(r *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
			*n = r.ContentLength
			return nil, errCaptured
		}))
}

// coachRequest is a coach's request: a system prompt, a context section,
// the built-in tools, and rounds of save_note calls with their results.
func coachRequest(rounds int) *coachd.ModelRequest {
	var specs []coachd.ToolSpec
	for _, t := range tools.Builtins() {
		d := t.Definition()
		specs = append(specs, coachd.ToolSpec{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema})
	}
	req := &coachd.ModelRequest{MaxTokens: 4096, Tools: specs, UserID: "user_0123456789",
		System: []coachd.Block{
			coachd.TextBlock(strings.Repeat("You are a warm, practical coach. Keep replies short & concrete. ", 30)),
			coachd.TextBlock("## Notes\n- likes running <5k>\n- works nights\n"),
		}}
	for i := range rounds {
		id := fmt.Sprintf("toolu_%03d", i)
		req.Messages = append(req.Messages,
			coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("Remember that I ran 5k today, it felt great.")}},
			coachd.ModelMessage{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Saving that."),
				{Type: coachd.BlockToolUse, ID: id, Name: "save_note", Input: []byte(`{"title":"Run","content":"Ran 5k today, felt great.","type":"progress"}`)}}},
			coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.ToolResultBlock(id, `{"id":"note_01HX","saved":true}`, false)}},
			coachd.ModelMessage{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock(strings.Repeat("Great work! Keep it up. ", 8))}},
		)
	}
	req.Messages = append(req.Messages, coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("What next?"), coachd.TextBlock("time: Monday 09:00")}})
	req.TailBlocks = 1
	return req
}
