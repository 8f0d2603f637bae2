package coachd

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// PrefixReservation starts reservation IDs.
const PrefixReservation = "res"

// ReservationState is the lifecycle state of a reservation.
type ReservationState string

const (
	ReservationActive    ReservationState = "active"    // holding tokens
	ReservationFinalized ReservationState = "finalized" // settled with real usage
	ReservationAborted   ReservationState = "aborted"   // settled with the usage seen before an abort
	ReservationExpired   ReservationState = "expired"   // the hold was released by the sweeper
)

// DefaultReservationTTL is how long a reservation holds tokens before the
// sweeper (or the user's next Reserve) releases them.
const DefaultReservationTTL = 5 * time.Minute

// RoundHoldTTL is how long the hold of a turn that an app's own loop
// keeps open lasts from its record of a tool round (at most the store's
// expiry): the loop sends the round's results to the model next and
// records again within a round, one model request (coachd's own loop
// gives one up after 2 minutes) and its tools. A loop that stopped
// there (seed 000 at MAX_STEPS) never records again, and its hold gives
// the budget back then rather than after the whole expiry; a later
// record still charges what the turn spent.
const RoundHoldTTL = 2 * time.Minute

// MaxTurnTokens bounds the tokens of one turn: an estimate to reserve and
// a turn's cumulative usage. A 1M-token context for 50 rounds still fits
// under it, and sums of such values stay far from int64 overflow, which a
// client-reported tokens_used of 2^63-1 used to reach (issue 20 finding
// 7). The API refuses a larger tokens_used; the store counts at most this
// many tokens, and charges at most what they can cost (BudgetUnit.MaxTurn).
const MaxTurnTokens int64 = 100_000_000

// RemainingTokens is what is left of a budget, budget - used - reserved,
// and 0 when nothing is; it saturates instead of wrapping around, so even
// totals corrupted before MaxTurnTokens existed read as an exhausted
// budget, never as a huge one.
func RemainingTokens(budget, used, reserved int64) int64 {
	return max(subSat(subSat(budget, used), reserved), 0)
}

// SetRemaining sets r.Remaining and r.Deficit from the user's row.
func (r *Reservation) SetRemaining(budget, used, reserved int64) {
	r.Remaining = RemainingTokens(budget, used, reserved)
	r.Deficit = max(subSat(0, subSat(subSat(budget, used), reserved)), 0)
}

// subSat is a-b clamped to the int64 range.
func subSat(a, b int64) int64 {
	d := a - b
	if (d < a) != (b > 0) { // wrapped around
		if b > 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return d
}

// Reservation holds part of a user's token budget for one turn.
//
// While active it holds max(Estimate-Charged, 0) tokens (Held); charges are
// cumulative: Charged is the real usage charged so far, and a settle with a
// total no larger than Charged changes nothing. A reservation is charged to
// the budget period it was made in.
type Reservation struct {
	ID          string           `json:"id"`
	UserID      string           `json:"user_id"`
	SessionID   string           `json:"session_id"`
	Agent       string           `json:"agent"`
	Estimate    int64            `json:"estimated_tokens"`
	Held        int64            `json:"held_tokens"`
	Charged     int64            `json:"charged_tokens"`
	State       ReservationState `json:"state"`
	FreePreview bool             `json:"is_free_preview"`
	PeriodStart time.Time        `json:"period_start"`
	CreatedAt   time.Time        `json:"created_at"`
	ExpiresAt   time.Time        `json:"expires_at"`
	// Remaining is the user's budget left (budget - used - reserved) right
	// after the operation that returned the reservation.
	Remaining int64 `json:"budget_remaining"`
	// Deficit is how far used + reserved exceeded the budget then (an
	// operator cut it below what the user held); Remaining clamps it away.
	Deficit int64 `json:"-"`
	// ChargedRaw is the raw token count behind Charged (which counts the
	// budget's unit; the same number when the unit is tokens).
	ChargedRaw int64 `json:"charged_raw_tokens"`
}

// LedgerEntry is one append-only change to a user's token accounts: Used
// moves tokens_used (in PeriodStart's period), Reserved moves
// tokens_reserved.
type LedgerEntry struct {
	ID            int64     `json:"id"`
	UserID        string    `json:"user_id"`
	ReservationID string    `json:"reservation_id"`
	Used          int64     `json:"used_delta"`
	Reserved      int64     `json:"reserved_delta"`
	Reason        string    `json:"reason"` // reserve, charge, finalize, abort, expire
	PeriodStart   time.Time `json:"period_start"`
	CreatedAt     time.Time `json:"created_at"`
	// RawTokens is the raw token count Used stands for; Unit is what Used
	// and Reserved count (BudgetUnit).
	RawTokens int64      `json:"raw_tokens"`
	Unit      BudgetUnit `json:"unit"`
}

// BudgetStatus is a user's token account in the current period.
type BudgetStatus struct {
	TokenBudget    int64     `json:"token_budget"`
	TokensUsed     int64     `json:"tokens_used"`
	TokensReserved int64     `json:"tokens_reserved"`
	Remaining      int64     `json:"remaining"`
	PeriodStart    time.Time `json:"period_start"`
	// Unit is what the budget and the totals above count (BudgetUnit);
	// RawTokensUsed is the raw token count behind TokensUsed.
	Unit          BudgetUnit `json:"unit"`
	RawTokensUsed int64      `json:"raw_tokens_used"`
	// In dollars, when the unit is money.
	BudgetUSD    *float64 `json:"budget_usd,omitempty"`
	UsedUSD      *float64 `json:"used_usd,omitempty"`
	RemainingUSD *float64 `json:"remaining_usd,omitempty"`
}

// SetUSD fills the dollar fields when the status counts money.
func (st *BudgetStatus) SetUSD() {
	usd := func(n int64) *float64 {
		v, ok := st.Unit.USD(n)
		if !ok {
			return nil
		}
		return &v
	}
	st.BudgetUSD, st.UsedUSD, st.RemainingUSD = usd(st.TokenBudget), usd(st.TokensUsed), usd(st.Remaining)
}

// BudgetPeriod says when budgets reset.
type BudgetPeriod string

const (
	PeriodNone    BudgetPeriod = "none"    // a budget is for the account's lifetime
	PeriodMonthly BudgetPeriod = "monthly" // resets at 00:00 UTC on the 1st of each month
)

// Start returns the start of the period containing t: the Unix epoch for
// PeriodNone, the first of the month (UTC) for PeriodMonthly.
func (p BudgetPeriod) Start(t time.Time) time.Time {
	if p == PeriodMonthly {
		t = t.UTC()
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Unix(0, 0).UTC()
}

// BudgetConfig configures the budget store.
type BudgetConfig struct {
	Period BudgetPeriod
	// TTL is how long a reservation holds (DefaultReservationTTL when 0).
	TTL time.Duration
	// Unit is what budgets, reservations and the ledger count (UnitTokens
	// when empty); the store only labels ledger rows with it, callers
	// convert usage with Unit.Charge.
	Unit BudgetUnit
}

// Spend is a turn's cumulative use so far: Amount in the budget's unit
// (what is checked against the budget and summed by the ledger) and the
// raw token count it stands for.
type Spend struct {
	Amount int64
	Tokens int64
}

// SettleMode says what a settle does to a reservation.
type SettleMode int

const (
	SettleCharge   SettleMode = iota // charge and keep the rest held
	SettleFinalize                   // charge and release the hold
	SettleAbort                      // charge what was used before an abort and release
)

// ReserveRequest asks for a hold of Estimate tokens for one turn.
type ReserveRequest struct {
	UserID    string
	SessionID string
	Agent     string
	Estimate  int64
	// FreePreviewTurns lets a user without a budget (token_budget 0) run
	// this many turns of Agent free: nothing is held or charged.
	FreePreviewTurns int
	// Lasts is how long the hold lasts at least, when longer than the
	// store's expiry: a turn's own time limit, so that no hold expires
	// under a turn still running (a round with a long tool).
	Lasts time.Duration
	// Supersede, for a new turn of an app's own loop (preflight), first
	// finalizes the session's reservations that an earlier turn left
	// open after it recorded spend, at what it recorded, unless a turn
	// holds the session's lease: the loop stopped without a final record
	// (seed 000 at MAX_STEPS), and its hold would otherwise stay until
	// it expired. A later record of that turn still charges what it adds.
	Supersede bool
}

// TurnRecord is what an app that runs its own loop reports: messages to
// append and the cumulative tokens of the turn so far.
type TurnRecord struct {
	SessionID     string
	ReservationID string
	Messages      []*Message
	TokensUsed    int64 // raw tokens, every kind once
	// Amount is TokensUsed in the budget's unit, as Runner.RecordSpend
	// prices it; 0 charges TokensUsed as is (a budget of tokens).
	Amount int64
	Final  bool // settle the reservation (release what is left)
	Abort  bool // settle as aborted
	// Answered says the model may have answered although the record
	// reports no spend: an abort that does not say what it spent (seed
	// 000's never does) or that stores what the model said. A free
	// preview turn so recorded counts as used, at its estimate (which a
	// free turn charges no one), rather than given back.
	Answered bool
	// IdempotencyKey makes a retried record a no-op that returns the first
	// result; empty disables it.
	IdempotencyKey string
	RequestHash    string // a digest of the request, to refuse a reused key
}

// LedgerDrift reports a user whose cached totals differ from the ledger.
type LedgerDrift struct {
	UserID         string `json:"user_id"`
	TokensUsed     int64  `json:"tokens_used"`
	LedgerUsed     int64  `json:"ledger_used"`
	TokensReserved int64  `json:"tokens_reserved"`
	LedgerReserved int64  `json:"ledger_reserved"`
	Held           int64  `json:"held"` // sum of the active reservations' holds
}

// BudgetService keeps token budgets: reservations and the ledger. Every
// change to a user's tokens_used or tokens_reserved is a ledger row in the
// same transaction.
type BudgetService interface {
	// Reserve holds req.Estimate tokens if they fit in what remains: one
	// atomic check-and-charge. Stale holds of the user are released first.
	// Not enough budget is EBUDGET.
	Reserve(ctx context.Context, req ReserveRequest) (*Reservation, error)
	// Charge charges the reservation's cumulative usage so far and keeps
	// the rest of the estimate held (extending the expiry).
	Charge(ctx context.Context, userID, id string, tokensUsed int64) (*Reservation, error)
	// Finalize charges real usage (cumulative, idempotent) and releases the
	// hold. After expiry it still charges the real usage.
	Finalize(ctx context.Context, userID, id string, tokensUsed int64) (*Reservation, error)
	// Abort charges what was consumed before the abort and releases the rest.
	Abort(ctx context.Context, userID, id string, tokensUsed int64) (*Reservation, error)
	// Settle is Charge, Finalize or Abort of a Spend in billed units with
	// its raw token count (Charge and friends are Settle with both equal).
	Settle(ctx context.Context, userID, id string, s Spend, mode SettleMode) (*Reservation, error)
	// ExpireReservations releases every active hold past its expiry and
	// returns how many it released.
	ExpireReservations(ctx context.Context) (int, error)
	FindReservation(ctx context.Context, userID, id string) (*Reservation, error)
	BudgetStatus(ctx context.Context, userID string) (*BudgetStatus, error)
	// Ledger returns the user's ledger rows, oldest first.
	Ledger(ctx context.Context, userID string) ([]LedgerEntry, error)
	// CheckLedger compares every user's cached totals with the ledger and
	// returns the users that drift (none, if the store is correct).
	CheckLedger(ctx context.Context) ([]LedgerDrift, error)
	// Record appends an external loop's messages and settles its
	// reservation in one transaction. When the session cannot take the
	// messages (gone, full) it still settles, and returns that refusal.
	Record(ctx context.Context, userID string, rec TurnRecord) (*Reservation, error)
}

// LimitService counts events in fixed windows, in the database so that
// limits hold across replicas.
type LimitService interface {
	// HitLimit counts one event h for the user: under h.Key in h's window
	// (LimitHit), unless the count already reached h.Limit. It returns
	// the count and whether the event was allowed.
	HitLimit(ctx context.Context, userID string, h LimitHit) (int64, bool, error)
	// ReleaseLimit gives back one event HitLimit counted for h, ago (by
	// the caller's clock) before now: the count of the window it was
	// counted in goes down by one, never below zero. A request that
	// failed for no fault of the user (their provider was down) is not
	// held against them.
	ReleaseLimit(ctx context.Context, userID string, h LimitHit, ago time.Duration) error
	// SweepLimits deletes the windows that started before before and have
	// ended: a later window of the same user and key was counted.
	SweepLimits(ctx context.Context, before time.Time) error
}

// RateLimit is N requests per window Per; the zero value is off.
type RateLimit struct {
	N   int64
	Per time.Duration
}

// Off reports whether the limit is disabled.
func (r RateLimit) Off() bool { return r.N <= 0 || r.Per <= 0 }

func (r RateLimit) String() string {
	if r.Off() {
		return "off"
	}
	per := r.Per.String() // "1h30m0s": drop zero seconds and minutes, keep "30s", "10m"
	if strings.HasSuffix(per, "m0s") || strings.HasSuffix(per, "h0s") {
		per = strings.TrimSuffix(per, "0s")
	}
	if strings.HasSuffix(per, "h0m") {
		per = strings.TrimSuffix(per, "0m")
	}
	return fmt.Sprintf("%d/%s", r.N, per)
}

// ParseRateLimit parses "20/60s" (N per Go duration) or "off".
func ParseRateLimit(s string) (RateLimit, error) {
	if s == "off" {
		return RateLimit{}, nil
	}
	n, per, ok := strings.Cut(s, "/")
	if !ok {
		return RateLimit{}, Errorf(EINVALID, "rate limit %q: want N/DURATION (like 20/60s) or off", s)
	}
	count, err := strconv.ParseInt(n, 10, 64)
	if err != nil || count <= 0 {
		return RateLimit{}, Errorf(EINVALID, "rate limit %q: N must be a positive integer", s)
	}
	d, err := time.ParseDuration(per)
	if err != nil || d < time.Second {
		return RateLimit{}, Errorf(EINVALID, "rate limit %q: window must be a duration of at least 1s", s)
	}
	return RateLimit{N: count, Per: d}, nil
}
