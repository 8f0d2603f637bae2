package agent_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// billedText is what the API bills for text, as the tokenizer splits it
// (the rates the other dense-text tests take): four ASCII bytes a token,
// a token a CJK character, an emoji's bytes at a token every 1.7.
func billedText(s string) int64 {
	var ascii, cjk, emoji int64
	for _, r := range s {
		switch n := utf8.RuneLen(r); {
		case n == 1:
			ascii++
		case n == 4:
			emoji += 4
		default:
			cjk++
		}
	}
	return (ascii+3)/4 + cjk + (emoji*10+16)/17
}

// TestReserveEstimateDenseDocument: under the default reserve: estimate,
// a turn holds its first request's size / 4 plus max_tokens. A text
// document of CJK or emoji bills far more than a token every 4 bytes
// (100 KiB of emoji, about 58,000 tokens, was held as 26,000; of CJK
// about 35,000), so a one-round turn charged past its hold, and a user
// with just the hold left past their budget. Text that is not ASCII is
// now estimated as dense; plain English as before.
func TestReserveEstimateDenseDocument(t *testing.T) {
	for name, tc := range map[string]struct {
		unit  string
		dense bool
	}{
		"CJK":     {"我每天早上开车去机场接客人，下午去市中心。", true},
		"Emoji":   {"🏃🚴🏊 ", true},
		"English": {"I drive to the airport every morning, downtown after lunch. ", false},
	} {
		t.Run(name, func(t *testing.T) {
			ag := agent.DefaultAgent()
			ag.MaxTokens = 100
			h := harnessOver(t, tools.Builtins(), func(string) (*agent.Agent, bool) { return ag, true })
			doc := []byte(strings.Repeat(tc.unit, coachd.MaxTextAttachmentBytes/len(tc.unit)))
			h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
				// The document as billed, the rest of the request at four bytes a token.
				if !bytes.Contains(r.Raw, doc) {
					t.Errorf("the request does not hold the document as it is")
				}
				in := billedText(string(doc)) + coachd.TokensOfBytes(len(r.Raw)-len(doc))
				return anthropictest.Text("好的。", 1).WithUsage(usage(in, 5))
			})
			res := h.turn(agent.TurnRequest{Message: "read this", Attachments: []coachd.Block{
				coachd.AttachmentBlock(coachd.MediaText, "notes.txt", doc)}}, &sink{})
			if res.StopReason != coachd.TurnEndTurn {
				t.Fatalf("stop %s %v", res.StopReason, res.Err)
			}
			r := h.mustSettled(res, coachd.ReservationFinalized)
			if r.Charged > r.Estimate {
				t.Fatalf("charged %d of a %d hold: %d past it", r.Charged, r.Estimate, r.Charged-r.Estimate)
			}
			// English is held as before: its size / 4 and max_tokens.
			if !tc.dense && r.Estimate > r.Charged+ag.MaxTokens+r.Charged/20 {
				t.Fatalf("held %d for English billed %d", r.Estimate, r.Charged)
			}
		})
	}
}
