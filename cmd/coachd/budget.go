package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore"
)

// defaultBudget is the token budget of users created without one (by
// users create, POST /v1/users and --demo), so that a fresh install works
// out of the box. A budget of 0 means no budget: every turn is refused
// with 402 unless the agent grants a free preview.
const defaultBudget = 1_000_000

// budgetConfig is the budget and limit part of coachd serve's config.
type budgetConfig struct {
	RateLimit       string
	ToolRateLimit   string
	MonthlyMessages int64
	ReservationTTL  time.Duration
	Period          string
	DefaultBudget   int64
	Unit            string

	rate, toolRate coachd.RateLimit
}

func (c *budgetConfig) register(fs *flag.FlagSet, env *envDefaults) {
	getenv := env.getenv
	fs.StringVar(&c.RateLimit, "rate-limit", envOr(getenv, "COACHD_RATE_LIMIT", "20/60s"), "per-user turn rate: N/DURATION, or off (env COACHD_RATE_LIMIT)")
	fs.StringVar(&c.ToolRateLimit, "tool-rate-limit", envOr(getenv, "COACHD_TOOL_RATE_LIMIT", "120/60s"), "per-user rate of POST /v1/tools/execute: N/DURATION, or off (env COACHD_TOOL_RATE_LIMIT)")
	fs.Int64Var(&c.MonthlyMessages, "monthly-messages", env.Int("COACHD_MONTHLY_MESSAGES", 0), "per-user messages per calendar month; 0 is no limit (env COACHD_MONTHLY_MESSAGES)")
	fs.DurationVar(&c.ReservationTTL, "reservation-expiry", env.Duration("COACHD_RESERVATION_EXPIRY", coachd.DefaultReservationTTL), "how long an unsettled budget reservation holds tokens (env COACHD_RESERVATION_EXPIRY)")
	fs.StringVar(&c.Period, "budget-period", envOr(getenv, "COACHD_BUDGET_PERIOD", "none"), "when token budgets reset: none or monthly (env COACHD_BUDGET_PERIOD)")
	fs.StringVar(&c.Unit, "budget-unit", envOr(getenv, "COACHD_BUDGET_UNIT", "tokens"), "what budgets count: tokens (every token once), weighted (tokens-equivalent: priced as Claude bills them relative to an input token) or usd (micro-dollars at list prices) (env COACHD_BUDGET_UNIT)")
	defaultBudgetFlag(fs, &c.DefaultBudget, env)
}

// defaultBudgetFlag adds --default-budget.
func defaultBudgetFlag(fs *flag.FlagSet, v *int64, env *envDefaults) {
	fs.Int64Var(v, "default-budget", env.Int("COACHD_DEFAULT_BUDGET", defaultBudget), "token budget of users created without one (env COACHD_DEFAULT_BUDGET)")
}

// check validates the flags.
func (c *budgetConfig) check() error {
	r, err := coachd.ParseRateLimit(c.RateLimit)
	if err != nil {
		return fmt.Errorf("--rate-limit: %s", coachd.ErrorMessage(err))
	}
	c.rate = r
	if _, err := coachd.ParseBudgetUnit(c.Unit); err != nil {
		return fmt.Errorf("--budget-unit: %s", coachd.ErrorMessage(err))
	}
	if c.toolRate, err = coachd.ParseRateLimit(c.ToolRateLimit); err != nil {
		return fmt.Errorf("--tool-rate-limit: %s", coachd.ErrorMessage(err))
	}
	switch {
	case c.Period != string(coachd.PeriodNone) && c.Period != string(coachd.PeriodMonthly):
		return fmt.Errorf("--budget-period must be none or monthly, not %q", c.Period)
	case c.MonthlyMessages < 0, c.DefaultBudget < 0:
		return fmt.Errorf("--monthly-messages and --default-budget must be 0 or more")
	case c.ReservationTTL <= 0:
		return fmt.Errorf("--reservation-expiry must be positive")
	}
	return nil
}

func (c budgetConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("rate_limit", c.RateLimit), slog.String("tool_rate_limit", c.ToolRateLimit), slog.Int64("monthly_messages", c.MonthlyMessages),
		slog.Duration("reservation_expiry", c.ReservationTTL), slog.String("period", c.Period),
		slog.Int64("default_budget", c.DefaultBudget), slog.String("unit", c.Unit),
	)
}

func (c budgetConfig) limits() server.Limits {
	return server.Limits{Rate: c.rate, ToolRate: c.toolRate, MonthlyMessages: c.MonthlyMessages, DefaultBudget: c.DefaultBudget}
}

func (c budgetConfig) store() coachd.BudgetConfig {
	unit, _ := coachd.ParseBudgetUnit(c.Unit)
	return coachd.BudgetConfig{Period: coachd.BudgetPeriod(c.Period), TTL: c.ReservationTTL, Unit: unit}
}

// sweep releases expired reservations and old limit windows until ctx
// ends: every quarter of the expiry window (at most every 30 s), so a hold
// left by a crashed process comes back within 1.25 × the expiry.
// sessionExpiry maps an agent to how long its sessions may stay idle.
type sessionExpiry map[string]time.Duration

func sweep(ctx context.Context, store *sqlstore.DB, ttl time.Duration, expiry sessionExpiry, retention time.Duration, logger *slog.Logger) {
	every := min(max(ttl/4, 50*time.Millisecond), 30*time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := store.ExpireReservations(ctx)
		if err != nil && ctx.Err() == nil {
			logger.Error("expire reservations", "err", err)
		} else if n > 0 {
			logger.Info("expired reservations", "count", n)
		}
		for agent, idle := range expiry {
			if n, err := store.ExpireSessions(ctx, agent, idle); err != nil && ctx.Err() == nil {
				logger.Error("expire sessions", "agent", agent, "err", err)
			} else if n > 0 {
				logger.Info("expired idle sessions", "agent", agent, "count", n)
			}
		}
		// Turns' event logs older than the retention (and stream tokens
		// that expired).
		if n, err := store.PruneEvents(ctx, time.Now().Add(-retention)); err != nil && ctx.Err() == nil {
			logger.Error("prune event log", "err", err)
		} else if n > 0 {
			logger.Info("pruned event logs", "turns", n)
		}
		// Limit windows that have ended. Not by age: a rate window may be
		// weeks long and the monthly one counts all month, so only a
		// window a later one of the same limit followed goes.
		if err := store.SweepLimits(ctx, time.Now()); err != nil && ctx.Err() == nil {
			logger.Error("sweep limits", "err", err)
		}
	}
}
