package anthropic

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkDecode decodes recorded streams, from memory, with the SDK's
// decoder and with coachd's, and reports the cost per event (an event is
// one SSE frame, pings included).
//
//	go test ./anthropic -run '^$' -bench BenchmarkDecode -benchmem -count 6
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"01-basic-text-ping", "11-real-thinking-signature-text", "09-real-parallel-tool-use-add-multiply"} {
		body, err := os.ReadFile(filepath.Join("testdata", "fixtures", name+".sse"))
		if err != nil {
			b.Fatal(err)
		}
		events := bytes.Count(body, []byte("\nevent:")) + 1
		for _, path := range []struct {
			name string
			fast bool
		}{{"sdk", false}, {"fast", true}} {
			b.Run(name[:2]+"/"+path.name, func(b *testing.B) {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					if _, _, err := decodeBody(b, body, path.fast); err != nil {
						b.Fatal(err)
					}
				}
				runtime.ReadMemStats(&after)
				n := float64(b.N * events)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/event")
			})
		}
	}
}
