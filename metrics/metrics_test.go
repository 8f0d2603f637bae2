package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/metrics"
)

// Each observation lands on its own label's series: the tokens by kind,
// the transactions by kind (read and write, and any other kind a store
// reports).
func TestObservationsByLabel(t *testing.T) {
	m := metrics.New()
	m.TurnEnded("coach", "end_turn", coachd.Usage{InputTokens: 11, OutputTokens: 22, CacheReadInputTokens: 33, CacheCreationInputTokens: 44}, time.Second, time.Millisecond)
	m.TurnEnded("coach", "end_turn", coachd.Usage{InputTokens: 1}, time.Second, 0)
	m.DBTransaction("read", time.Millisecond)
	m.DBTransaction("write", time.Millisecond)
	m.DBTransaction("write", time.Millisecond)
	m.DBTransaction("other", time.Millisecond)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`coachd_tokens_total{kind="input"} 12`,
		`coachd_tokens_total{kind="output"} 22`,
		`coachd_tokens_total{kind="cache_read"} 33`,
		`coachd_tokens_total{kind="cache_write"} 44`,
		`coachd_db_transaction_seconds_count{kind="read"} 1`,
		`coachd_db_transaction_seconds_count{kind="write"} 2`,
		`coachd_db_transaction_seconds_count{kind="other"} 1`,
		`coachd_turns_total{agent="coach",stop_reason="end_turn"} 2`,
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
