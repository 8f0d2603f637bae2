package anthropic_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/modeltest"
)

// platformBackend is the conformance backend behind a platform's wire:
// the Anthropic fake serves the replies, the platform handler checks the
// path, body and credentials and frames the stream.
type platformBackend struct {
	scriptBackend
	primary, fallback string
}

func (b *platformBackend) ModelNames() (string, string) { return b.primary, b.fallback }

func newBedrockBackend(t *testing.T, untraced bool) modeltest.Backend {
	fake := MustServer(t)
	ts := httptest.NewServer(fake.BedrockHandler("AKIDCOACHDTEST", "eu-central-1"))
	t.Cleanup(ts.Close)
	m, err := anthropic.NewBedrock(context.Background(), anthropic.BedrockConfig{
		Config: anthropic.Config{BaseURL: ts.URL, MaxRetries: -1, Untraced: untraced},
		Region: "eu-central-1", AccessKeyID: "AKIDCOACHDTEST", SecretAccessKey: "not-a-secret",
	})
	if err != nil {
		t.Fatal(err)
	}
	return &platformBackend{scriptBackend{fake, m},
		"eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-haiku-4-5-20251001-v1:0"}
}

func newVertexBackend(t *testing.T, untraced bool) modeltest.Backend {
	fake := MustServer(t)
	ts := httptest.NewServer(fake.VertexHandler("coachd-test", "us-east5", "ya29.fake-token"))
	t.Cleanup(ts.Close)
	m, err := anthropic.NewVertex(context.Background(), anthropic.VertexConfig{
		Config: anthropic.Config{BaseURL: ts.URL, MaxRetries: -1, Untraced: untraced},
		Region: "us-east5", Project: "coachd-test",
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29.fake-token", TokenType: "Bearer"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &platformBackend{scriptBackend{fake, m}, "claude-sonnet-4-5@20250929", "claude-haiku-4-5@20251001"}
}

// TestBedrockConformance runs the suite over Bedrock's
// invoke-with-response-stream: SigV4-signed requests, the model in the
// path, and the reply in AWS eventstream framing.
func TestBedrockConformance(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) { modeltest.Run(t, backendOn(untraced, newBedrockBackend)) })
}

// TestVertexConformance runs the suite over Vertex's streamRawPredict.
func TestVertexConformance(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) { modeltest.Run(t, backendOn(untraced, newVertexBackend)) })
}

// TestPlatformWire checks what reached each platform: the path named the
// model, the body lost model (and for Bedrock stream) and gained the
// platform's anthropic_version, and the credentials were the platform's.
func TestPlatformWire(t *testing.T) {
	eachPath(t, platformWire)
}

func platformWire(t *testing.T, untraced bool) {
	for name, newBackend := range map[string]func(*testing.T, bool) modeltest.Backend{
		"Bedrock": newBedrockBackend, "Vertex": newVertexBackend,
	} {
		t.Run(name, func(t *testing.T) {
			b := newBackend(t, untraced).(*platformBackend)
			b.Enqueue(modeltest.Script{Text: "Hi."})
			s := b.Model().Stream(context.Background(), modeltest.Hello(b.primary))
			// Vertex streams text/event-stream; the SDK's Bedrock
			// middleware translates Bedrock's binary event stream to it.
			// coachd decodes both.
			if !anthropic.FastDecode(s) {
				t.Error("the SDK decoded the events")
			}
			// Untraced, Post sent the call: no SDK stream is made.
			if anthropic.SDKStream(s) == untraced {
				t.Errorf("SDK stream made: %v, want %v", untraced, !untraced)
			}
			if _, _, err := modeltest.Drain(s); err != nil {
				t.Fatal(err)
			}
			req := b.fake.Requests()[0]
			if req.Model != b.primary || !req.Stream {
				t.Errorf("rebuilt request: model %q stream %v", req.Model, req.Stream)
			}
			auth := req.Header.Get("Authorization")
			switch name {
			case "Bedrock":
				if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDCOACHDTEST/") {
					t.Errorf("authorization = %q, want SigV4", auth)
				}
			case "Vertex":
				if auth != "Bearer ya29.fake-token" {
					t.Errorf("authorization = %q", auth)
				}
			}
		})
	}
}

// TestEventstreamMessage pins the encoder against a message decoded by
// hand: prelude, CRCs and one string header.
func TestEventstreamMessage(t *testing.T) {
	got := anthropictest.EventstreamMessage(map[string]string{":message-type": "event"}, []byte("{}"))
	// 12 prelude + (1+13+1+2+5) headers + 2 payload + 4 CRC.
	if len(got) != 12+22+2+4 || got[3] != byte(len(got)) || got[7] != 22 {
		t.Fatalf("message = % x", got)
	}
	if string(got[13:26]) != ":message-type" || got[26] != 7 || string(got[29:34]) != "event" {
		t.Errorf("header = % x", got[12:34])
	}
	var _ coachd.Model = (*anthropic.Model)(nil)
}

// BenchmarkBedrockStream is events/s for BenchmarkStream's reply through
// Bedrock's wire: SigV4 signing and the eventstream-to-SSE translation.
func BenchmarkBedrockStream(b *testing.B) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	reply := anthropictest.Text(strings.Repeat("word ", 400), 4)
	fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return reply })
	ts := httptest.NewServer(fake.BedrockHandler("AKIDCOACHDTEST", "eu-central-1"))
	defer ts.Close()
	m, err := anthropic.NewBedrock(context.Background(), anthropic.BedrockConfig{
		Config: anthropic.Config{BaseURL: ts.URL, MaxRetries: -1},
		Region: "eu-central-1", AccessKeyID: "AKIDCOACHDTEST", SecretAccessKey: "not-a-secret",
	})
	if err != nil {
		b.Fatal(err)
	}
	req := modeltest.Hello("anthropic.claude-haiku-4-5-20251001-v1:0")
	events := 0
	for b.Loop() {
		evs, resp, err := modeltest.Drain(m.Stream(context.Background(), req))
		if err != nil || len(resp.Blocks) != 1 {
			b.Fatal(err)
		}
		events += len(evs)
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// TestPlatformDecodeSame: through each platform's wire, coachd's decoder
// and the SDK's make the same of a text reply, a tool call and an
// in-stream overload.
func TestPlatformDecodeSame(t *testing.T) {
	for name, newBackend := range map[string]func(*testing.T, bool) modeltest.Backend{
		"Bedrock": newBedrockBackend, "Vertex": newVertexBackend,
	} {
		t.Run(name, func(t *testing.T) {
			// Untraced: coachd's decoder reads what Post got back, the
			// SDK's what its streaming method did.
			b := newBackend(t, true).(*platformBackend)
			m := b.Model().(*anthropic.Model)
			for _, sc := range []modeltest.Script{{Text: "Hi there, how can I help?"},
				{Text: "Saving.", Calls: []modeltest.Call{{ID: "toolu_1", Name: "save_note", Input: `{"text":"milk"}`}}},
				{Text: "Hi", BusyAfterText: true}} {
				var out [2]decoded
				for i, sdkDecode := range []bool{true, false} {
					anthropic.SetSDKDecode(m, sdkDecode)
					b.Enqueue(sc)
					evs, resp, err := drain(m.Stream(context.Background(), modeltest.Hello(b.primary)))
					if resp != nil {
						resp.ID = "" // the fake numbers its messages
					}
					out[i] = decoded{evs, resp, err}
				}
				anthropic.SetSDKDecode(m, false)
				sameDecoded(t, out[1], out[0])
			}
		})
	}
}
