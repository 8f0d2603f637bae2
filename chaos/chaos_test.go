package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

const adminKey = "ck_admin_chaos_suite_0123456789abcdef"

// config sizes a run. CHAOS_TURNS=1000 is the full run (50 users, 200
// sessions); the default is CI-sized.
type config struct {
	turns, users, sessions, workers, kills int
	seed                                   uint64
}

func chaosConfig(t *testing.T, ciTurns int) config {
	c := config{turns: ciTurns, seed: 18}
	if v := os.Getenv("CHAOS_TURNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_TURNS=%q: want a positive number", v)
		}
		c.turns = n
	}
	if v := os.Getenv("CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED=%q: %v", v, err)
		}
		c.seed = n
	}
	c.users = min(50, max(4, c.turns/20))
	c.sessions = min(200, max(c.users*2, c.turns/5))
	c.workers = min(16, max(4, c.turns/25))
	c.kills = max(2, c.turns/100)
	return c
}

// TestChaosSQLite: one process on a SQLite file, SIGKILLed and restarted
// at random moments.
func TestChaosSQLite(t *testing.T) {
	cfg := chaosConfig(t, 80)
	db := filepath.Join(t.TempDir(), "coachd.db")
	runChaos(t, cfg, db, 1)
}

// TestChaosPostgres: two replicas on one Postgres, each SIGKILLed and
// restarted at random moments while the other serves.
func TestChaosPostgres(t *testing.T) {
	cfg := chaosConfig(t, 60)
	dsn := pgtest.NewDatabase(t)
	runChaos(t, cfg, dsn, 2)
}

// turnLog is what one client saw of one turn.
type turnLog struct {
	n          int
	user, sess string
	replica    int
	message    string
	events     []string // name#id, in order
	acked      bool     // message_start arrived
	terminal   bool     // message_end or error event arrived, or an error body
	connErr    string   // the stream broke (a kill, a reset)
	leftAt     int      // the client left after this many events (0: read to the end)
	hang       bool     // the deadline passed with neither
	silent     bool     // a clean end without a terminal event
	errType    string
	refused    int // tries that found the replica down
}

func (l *turnLog) String() string {
	return fmt.Sprintf("turn %d user %s session %s replica %d message %q: events [%s] acked=%v terminal=%v conn_err=%q left_at=%d",
		l.n, l.user, l.sess, l.replica, l.message, strings.Join(l.events, " "), l.acked, l.terminal, l.connErr, l.leftAt)
}

type user struct{ id, key string }

// cluster is the replicas of one run, restarted in place after a kill.
type cluster struct {
	t     *testing.T
	env   []string
	args  []string
	mu    sync.Mutex
	up    *sync.Cond // signalled when a replica is back
	procs []*proc
	kills atomic.Int64
}

// awaitRestart waits until replica i no longer listens at url.
func (c *cluster) awaitRestart(i int, url string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.procs[i].url == url {
		c.up.Wait()
	}
}

func (c *cluster) url(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[i].url
}

// killRestart SIGKILLs replica i and starts it again on the same database.
func (c *cluster) killRestart(i int) {
	c.mu.Lock()
	p := c.procs[i]
	c.mu.Unlock()
	p.kill()
	c.kills.Add(1)
	np := mustStart(c.t, c.env, c.args...)
	c.mu.Lock()
	c.procs[i] = np
	c.up.Broadcast()
	c.mu.Unlock()
}

func runChaos(t *testing.T, cfg config, dsn string, replicas int) {
	ctx := context.Background()
	start := time.Now()
	fake := anthropictest.NewServer()
	defer fake.Close()
	chaos := anthropictest.DefaultChaos(cfg.seed)
	fake.SetChaos(&chaos)
	sc := newScript(cfg.seed)
	fake.SetScript(sc.reply)
	tools := newToolServer(cfg.seed)
	defer tools.Close()
	pack, _ := filepath.Abs("testdata/pack")

	cl := &cluster{t: t,
		env: []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "CHAOS_TOOL_URL=" + tools.URL,
			"COACHD_TURN_LEASE=2s", "COACHD_MODEL_TIMEOUT=3s", "COACHD_LOG_LEVEL=warn"},
		args: []string{"--db", dsn, "--admin-key", adminKey, "--rate-limit", "off", "--pack", pack,
			"--webhook-allow", "127.0.0.1/32", "--reservation-expiry", "30s"},
	}
	cl.up = sync.NewCond(&cl.mu)
	for range replicas {
		cl.procs = append(cl.procs, mustStart(t, cl.env, cl.args...))
	}

	// Users (every fourth on a tight budget) and their sessions.
	users := make([]user, cfg.users)
	budgets := map[string]int64{}
	for i := range users {
		budget := int64(5_000_000)
		if i%4 == 3 {
			budget = 30_000
		}
		var u struct {
			ID     string `json:"id"`
			APIKey string `json:"api_key"`
		}
		mustCall(t, cl.url(0), adminKey, "POST", "/v1/users", fmt.Sprintf(`{"name":"chaos-%d","token_budget":%d}`, i, budget), 201, &u)
		users[i] = user{u.ID, u.APIKey}
		budgets[u.ID] = budget
	}
	type session struct {
		id string
		u  user
	}
	sessions := make([]session, cfg.sessions)
	for i := range sessions {
		u := users[i%len(users)]
		var s struct{ ID string }
		mustCall(t, cl.url(i%replicas), u.key, "POST", "/v1/sessions", `{"title":"chaos"}`, 201, &s)
		sessions[i] = session{s.ID, u}
	}

	// Kill points: turn numbers at whose start a kill is scheduled a
	// random moment later.
	rng := mrand.New(mrand.NewPCG(cfg.seed, 0xc1))
	killAt := map[int]time.Duration{}
	for len(killAt) < min(cfg.kills, cfg.turns) {
		killAt[rng.IntN(cfg.turns)] = time.Duration(rng.IntN(400)) * time.Millisecond
	}
	type plan struct {
		n, sess, replica, leaveAfter int
		onDisconnect                 string
	}
	plans := make([]plan, cfg.turns)
	for n := range plans {
		p := plan{n: n, sess: rng.IntN(len(sessions)), replica: rng.IntN(replicas)}
		if rng.IntN(100) < 12 { // the client leaves after a few events
			p.leaveAfter = 1 + rng.IntN(6)
			p.onDisconnect = []string{"cancel", "continue"}[rng.IntN(2)]
		}
		plans[n] = p
	}

	logs := make([]*turnLog, cfg.turns)
	var kills sync.WaitGroup
	var killMu sync.Mutex // one kill at a time, so a replica is always coming back
	work := make(chan plan)
	var wg sync.WaitGroup
	for range cfg.workers {
		wg.Go(func() {
			for p := range work {
				if d, ok := killAt[p.n]; ok {
					victim := p.n % replicas
					kills.Add(1)
					time.AfterFunc(d, func() {
						defer kills.Done()
						killMu.Lock()
						defer killMu.Unlock()
						cl.killRestart(victim)
					})
				}
				s := sessions[p.sess]
				l := &turnLog{n: p.n, user: s.u.id, sess: s.id, replica: p.replica, message: fmt.Sprintf("chaos turn %d (%s)", p.n, s.id), leftAt: p.leaveAfter}
				logs[p.n] = l
				// A client that finds the replica down (connection
				// refused, nothing sent) tries again once it is back.
				for try := 0; ; try++ {
					url := cl.url(p.replica)
					oneTurn(url, s.u.key, l, p.leaveAfter, p.onDisconnect)
					if try == 3 || len(l.events) > 0 || !strings.Contains(l.connErr, "connection refused") {
						break
					}
					l.refused++
					l.connErr = ""
					cl.awaitRestart(p.replica, url)
				}
			}
		})
	}
	for _, p := range plans {
		work <- p
	}
	close(work)
	wg.Wait()
	kills.Wait()

	r := check(t, ctx, checkInput{cfg: cfg, dsn: dsn, cl: cl, logs: logs, budgets: budgets, fake: fake})
	t.Logf("chaos %s: %d turns, %d users, %d sessions, %d replicas, seed %d, %s",
		map[int]string{1: "sqlite", 2: "postgres"}[replicas], cfg.turns, cfg.users, cfg.sessions, replicas, cfg.seed, time.Since(start).Round(time.Second))
	t.Logf("  outcomes: %s", r.outcomes)
	t.Logf("  model faults: %s (of %d model requests)", anthropictest.FaultSummary(fake.Faults()), len(fake.Requests()))
	t.Logf("  tool faults: %s", anthropictest.FaultSummary(tools.Counts()))
	refused := 0
	for _, l := range logs {
		refused += l.refused
	}
	t.Logf("  retries after connection refused (replica down): %d", refused)
	t.Logf("  kills=%d lost=%d unpaired=%d drift=%d over_budget=%d stale_holds=%d hangs=%d repaired_on_read=%d requests_cut_by_kill=%d",
		cl.kills.Load(), r.lost, r.unpaired, r.drift, r.overBudget, r.staleHolds, r.hangs, r.repaired, r.truncated)
}

// oneTurn runs one chat turn as a client and logs what it saw. Its
// deadline is what tells a hang from a slow turn.
func oneTurn(url, key string, l *turnLog, leaveAfter int, onDisconnect string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tctx, leave := context.WithCancel(ctx)
	defer leave()
	errLeft := errors.New("client left")
	_, err := client.New(url, key, nil).ChatStream(tctx, client.ChatRequest{SessionID: l.sess, Message: l.message},
		client.StreamOptions{WaitBusy: true, OnDisconnect: onDisconnect}, func(ev client.Event) error {
			l.events = append(l.events, ev.Name+"#"+ev.ID)
			switch ev.Name {
			case "message_start":
				l.acked = true
			case "message_end":
				l.terminal = true
			case "error":
				l.terminal = true
				var e struct{ Type string }
				json.Unmarshal(ev.Data, &e)
				l.errType = e.Type
			}
			if leaveAfter > 0 && len(l.events) >= leaveAfter && !l.terminal {
				return errLeft
			}
			return nil
		})
	var cerr *coachd.Error
	switch {
	case err == nil:
		l.silent = !l.terminal
	case errors.Is(err, errLeft):
	case ctx.Err() != nil:
		l.hang = true
	case errors.As(err, &cerr):
		l.terminal = true // refused with an error body (busy, budget...)
		l.errType = string(cerr.Code)
	default:
		l.connErr = err.Error()
	}
}
