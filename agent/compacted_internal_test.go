package agent

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/coachd/coachd"
)

// compactedOracle is compacted's selection as it was written before it
// looked at each message once: the latest summary first, then every
// message that is no summary and is past the summary's ThroughSeq (or
// not stored yet).
func compactedOracle(msgs []*coachd.Message) []*coachd.Message {
	var latest *coachd.Message
	var through int64 = -1
	for _, m := range msgs {
		if meta, ok := summaryOf(m); ok && (latest == nil || m.Seq > latest.Seq) {
			latest, through = m, meta.ThroughSeq
		}
	}
	var out []*coachd.Message
	if latest != nil {
		out = append(out, latest)
	}
	for _, m := range msgs {
		if _, ok := summaryOf(m); !ok && (m.Seq > through || m.Seq == 0) {
			out = append(out, m)
		}
	}
	return out
}

// TestCompactedSelection: compacted picks the messages the oracle does,
// in its order, over random histories of summaries (in any order, old
// ones past the latest's reach included), stored and unstored messages.
func TestCompactedSelection(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 500 {
		var msgs []*coachd.Message
		for i := range r.IntN(12) {
			m := &coachd.Message{Seq: int64(r.IntN(10)), Blocks: []coachd.Block{coachd.TextBlock(fmt.Sprint(i))}}
			switch r.IntN(4) {
			case 0:
				meta, _ := json.Marshal(summaryMeta{Kind: KindSummary, ThroughSeq: int64(r.IntN(10))})
				m.Metadata = meta
			case 1:
				m.Metadata = json.RawMessage(`{"model":"m"}`)
			}
			msgs = append(msgs, m)
		}
		before := slices.Clone(msgs)
		got, want := compacted(msgs, nil), compactedOracle(msgs)
		if !slices.Equal(got, want) {
			t.Fatalf("history %d: got %v, want %v", n, seqs(got), seqs(want))
		}
		if !slices.Equal(msgs, before) {
			t.Fatalf("history %d: compacted changed its input", n)
		}
	}
}

func seqs(msgs []*coachd.Message) []string {
	var out []string
	for _, m := range msgs {
		_, s := summaryOf(m)
		out = append(out, fmt.Sprintf("%d%s", m.Seq, map[bool]string{true: "S"}[s]))
	}
	return out
}
