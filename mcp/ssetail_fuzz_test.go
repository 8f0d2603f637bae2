package mcp

import "testing"

// FuzzSSETail: sseTail reads an event stream in whatever pieces the
// network hands it. Read in two pieces cut anywhere, a stream leaves the
// same state as read whole: whether it is between events, its last id,
// its retry and its count of events with data. No input panics, and a retry stays within maxStreamRetry.
func FuzzSSETail(f *testing.F) {
	f.Add([]byte("id: 7\ndata: {}\n\n"), uint(3))
	f.Add([]byte("retry: 2500\r\nid: a\r\n\r\n: ping\r\n"), uint(9))
	f.Add([]byte("data: half"), uint(4))
	f.Add([]byte("id: x\x00y\nretry: 99999999999\n\n"), uint(0))
	f.Fuzz(func(t *testing.T, data []byte, cut uint) {
		var whole, split sseTail
		whole.scan(data)
		at := int(cut % uint(len(data)+1))
		split.scan(data[:at])
		split.scan(data[at:])
		if whole.between() != split.between() || whole.id != split.id || whole.retry != split.retry || whole.events != split.events {
			t.Fatalf("whole: between %v id %q retry %v events %d; cut at %d: between %v id %q retry %v events %d",
				whole.between(), whole.id, whole.retry, whole.events, at, split.between(), split.id, split.retry, split.events)
		}
		if whole.retry < 0 || whole.retry > maxStreamRetry {
			t.Fatalf("retry %v", whole.retry)
		}
	})
}
