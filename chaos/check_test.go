package chaos

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
)

type checkInput struct {
	cfg     config
	dsn     string
	cl      *cluster
	logs    []*turnLog
	budgets map[string]int64
	fake    *anthropictest.Server
}

type result struct {
	outcomes                                             string
	lost, unpaired, drift, overBudget, staleHolds, hangs int
	repaired, truncated                                  int
}

// staleGrace is how long past its expiry an active hold may wait for the
// sweeper (it runs every reservation-expiry/4 = 7.5 s here).
const staleGrace = 10 * time.Second

// check asserts the invariants of a run and returns its figures. A broken
// invariant is reported with the session, user and the event sequences of
// the session's turns.
func check(t *testing.T, ctx context.Context, in checkInput) result {
	var r result
	bySession := map[string][]*turnLog{}
	byUser := map[string][]*turnLog{}
	outcomes := map[string]int{}
	for _, l := range in.logs {
		bySession[l.sess] = append(bySession[l.sess], l)
		byUser[l.user] = append(byUser[l.user], l)
		switch {
		case l.hang:
			outcomes["hang"]++
		case l.silent:
			outcomes["silent_end"]++
		case l.connErr != "":
			outcomes["connection_error"]++
		case l.terminal && l.errType != "":
			outcomes["error:"+l.errType]++
		case l.terminal:
			outcomes["message_end"]++
		default:
			outcomes["client_left"]++
		}
	}
	keys := make([]string, 0, len(outcomes))
	for k := range outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, outcomes[k]))
	}
	r.outcomes = strings.Join(parts, " ")
	dump := func(logs []*turnLog) string {
		var b strings.Builder
		for _, l := range logs {
			b.WriteString("\n    ")
			b.WriteString(l.String())
		}
		return b.String()
	}

	// Every client saw a terminal event or a connection error, never a hang.
	for _, l := range in.logs {
		if l.hang || l.silent {
			r.hangs++
			t.Errorf("INVARIANT no-hang: %s", l)
		}
	}

	db, err := sqlstore.Open(ctx, in.dsn, coachd.SystemClock{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	defer db.Close()

	// Every acknowledged user message is stored; every stored history is
	// valid for the API once repaired on read.
	for sess, logs := range bySession {
		msgs, err := db.History(ctx, logs[0].user, sess)
		if err != nil {
			t.Errorf("history of %s: %v", sess, err)
			continue
		}
		stored := map[string]bool{}
		for _, m := range msgs {
			if m.Role == coachd.RoleUser {
				stored[m.Content] = true
			}
		}
		for _, l := range logs {
			if l.acked && !stored[l.message] {
				r.lost++
				t.Errorf("INVARIANT acked-is-stored: session %s user %s lost %q%s", sess, l.user, l.message, dump(logs))
			}
		}
		if len(msgs) == 0 {
			continue // every turn on it was refused or cut before it began
		}
		if err := anthropictest.ValidateHistory(agent.History(msgs, nil)); err != nil {
			r.unpaired++
			t.Errorf("INVARIANT valid-history: session %s user %s: %v%s", sess, logs[0].user, err, dump(logs))
		}
		r.repaired += rawGaps(msgs)
	}
	bad, truncated, first := validRequests(in.fake.Requests())
	r.truncated = truncated
	if truncated > 0 && in.cl.kills.Load() == 0 {
		t.Errorf("INVARIANT valid-request: %d request bodies that are not JSON with no kill to cut them", truncated)
	}
	if bad > 0 {
		r.unpaired += bad
		t.Errorf("INVARIANT valid-history: coachd sent %d requests the API would refuse, first: %s", bad, first)
	}

	// No user charged above budget.
	for id, budget := range in.budgets {
		st, err := db.BudgetStatus(ctx, id)
		if err != nil {
			t.Errorf("budget of %s: %v", id, err)
			continue
		}
		if st.TokensUsed > budget {
			r.overBudget++
			t.Errorf("INVARIANT within-budget: user %s used %d of %d%s", id, st.TokensUsed, budget, dump(byUser[id]))
		}
	}

	// No reservation active past its expiry (with the sweeper's grace).
	r.staleHolds = staleHolds(t, ctx, db)

	// coachd doctor balances every ledger.
	out, err := run(t, "doctor", "--db", in.dsn)
	if err != nil {
		r.drift = strings.Count(out, "DRIFT")
		t.Errorf("INVARIANT ledger: coachd doctor: %v\n%s", err, out)
	}
	return r
}

// rawGaps counts stored assistant tool_use blocks not answered in the next
// stored message: rounds a SIGKILL cut, which History answers on read.
func rawGaps(msgs []*coachd.Message) int {
	gaps := 0
	for i, m := range msgs {
		if m.Role != coachd.RoleAssistant {
			continue
		}
		answered := map[string]bool{}
		if i+1 < len(msgs) {
			for _, b := range msgs[i+1].Blocks {
				if b.Type == coachd.BlockToolResult {
					answered[b.ToolUseID] = true
				}
			}
		}
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockToolUse && !answered[b.ID] {
				gaps++
			}
		}
	}
	return gaps
}

// staleHolds reports active reservations whose expiry passed longer ago
// than the sweeper's grace.
func staleHolds(t *testing.T, ctx context.Context, db *sqlstore.DB) int {
	rows, err := db.SQL().QueryContext(ctx, `SELECT id, user_id, expires_at FROM reservations WHERE state = 'active'`)
	if err != nil {
		t.Errorf("reservations: %v", err)
		return 0
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, user string
		var exp any
		if err := rows.Scan(&id, &user, &exp); err != nil {
			t.Errorf("reservations: %v", err)
			return n
		}
		var at time.Time
		switch v := exp.(type) {
		case int64:
			at = time.UnixMicro(v)
		case time.Time:
			at = v
		default:
			t.Errorf("reservation %s: expires_at %T", id, exp)
			continue
		}
		if time.Since(at) > staleGrace {
			n++
			t.Errorf("INVARIANT no-stale-hold: reservation %s of user %s active, expired %s ago", id, user, time.Since(at).Round(time.Millisecond))
		}
	}
	return n
}
