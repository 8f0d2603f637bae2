package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// sdkMessage is a Messages API answer as the API gives it: its usage
// with the split of the cache writes by lifetime, the server tools'
// requests and the service tier, as the SDK's message.usage then carries
// them.
const sdkMessage = `{"id":"msg_01SdkUsage","type":"message","role":"assistant","model":"claude-sonnet-4-5",
	"content":[{"type":"text","text":"The airport, after 17:00."}],"stop_reason":"end_turn","stop_sequence":null,
	"usage":{"input_tokens":1200,"cache_creation_input_tokens":5000,"cache_read_input_tokens":8000,
	"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":4000},
	"output_tokens":300,"server_tool_use":{"web_search_requests":3,"web_fetch_requests":1},
	"service_tier":"standard"}}`

// TestRecordSDKUsage: an app running its own loop with the official SDK
// forwards the SDK's message.usage to record as it is (its raw JSON, or
// the SDK's struct marshalled, with every field it has). Record takes it
// and, with --budget-unit usd, charges it at what Claude bills: a 1-hour
// cache write at twice the input price, and $10 per 1,000 web searches.
func TestRecordSDKUsage(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	db := filepath.Join(t.TempDir(), "c.db")
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", db, "--demo", "--budget-unit", "usd")
	defer p.kill()
	app := sdk.NewClient(option.WithAPIKey("test"), option.WithBaseURL(fake.URL()), option.WithMaxRetries(0))
	for _, forward := range []string{"raw", "marshalled"} {
		t.Run(forward, func(t *testing.T) {
			var pf struct {
				SessionID     string `json:"session_id"`
				ReservationID string `json:"reservation_id"`
				Model         string `json:"model"`
			}
			if code := call(t, "POST", p.url+"/v1/chat/preflight", p.key, `{"message":"where to tonight?"}`, nil, &pf); code != 200 {
				t.Fatalf("preflight: %d", code)
			}
			fake.Enqueue(anthropictest.Reply{Message: json.RawMessage(sdkMessage)})
			model := pf.Model
			if model == "" { // the demo's agent names none: coachd prices it as Sonnet
				model = "claude-sonnet-4-5"
			}
			msg, err := app.Messages.New(context.Background(), sdk.MessageNewParams{
				Model: sdk.Model(model), MaxTokens: 1024,
				Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("where to tonight?"))},
			})
			if err != nil {
				t.Fatal(err)
			}
			usage := json.RawMessage(msg.Usage.RawJSON())
			if forward == "marshalled" {
				if usage, err = json.Marshal(msg.Usage); err != nil {
					t.Fatal(err)
				}
			}
			body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"usage":%s,
				"messages":[{"role":"user","content_blocks":[{"type":"text","text":"where to tonight?"}]},
				{"role":"assistant","content_blocks":[{"type":"text","text":%q}]}]}`,
				pf.SessionID, pf.ReservationID, usage, msg.Content[0].Text)
			var rec struct {
				TokensCharged int64 `json:"tokens_charged"`
			}
			if code := call(t, "POST", p.url+"/v1/chat/record", p.key, body, nil, &rec); code != 200 {
				t.Fatalf("record with the SDK's usage %s: %d", usage, code)
			}
			pr := coachd.PriceOf(pf.Model)
			tokens := 1200*pr.Input + 300*pr.Output + 8000*pr.CacheRead + 1000*pr.CacheWrite5m + 4000*pr.CacheWrite1h
			want := int64(math.Ceil(tokens + 3*10_000)) // µ$: $10 a million tokens is 10 µ$ a token; a search is 10,000 µ$
			if rec.TokensCharged != want {
				t.Errorf("charged %d µ$, want %d (model %q)", rec.TokensCharged, want, pf.Model)
			}
		})
	}
	bad := `{"session_id":"sess_x","reservation_id":"res_x","usage":{"input_tokens":1,"cache_creation":{"ephemeral_1h_input_tokens":-1}}}`
	if code := call(t, "POST", p.url+"/v1/chat/record", p.key, bad, nil, nil); code != 400 {
		t.Errorf("negative 1-hour cache write: %d, want 400", code)
	}
	p.kill()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "doctor", "--db", db}, getenvFrom(nil), &out, &errb); err != nil {
		t.Fatalf("doctor: %v\n%s", err, out.String())
	}
}
