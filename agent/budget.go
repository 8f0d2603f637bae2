package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/coachd/coachd"
)

// Reservation policies (Agent.Reserve).
const (
	// ReserveEstimate holds the estimated input of the first request plus
	// one round of output; a long turn may spend more than it held.
	ReserveEstimate = "estimate"
	// ReserveMax holds (input + max_tokens) × max rounds, and the runner
	// stops the turn (stop reason budget_exhausted) before a round whose
	// estimated cost no longer fits what is left of the hold: spend never
	// exceeds the budget.
	ReserveMax = "max"
)

// holdMargin is how long a turn's hold lasts past its max duration: the
// turn's last writes and its settlement, after its deadline.
const holdMargin = time.Minute

// TurnBudget is the stop reason of a reserve: max turn whose next round
// would not fit its reservation.
const TurnBudget = "budget_exhausted"

// EstimateTokens estimates the input tokens of a request from its size:
// a quarter of the bytes of its system prompt, messages and tools as JSON
// (the Messages API form), but a token or more a character of text that
// is not ASCII (denseText: CJK, emoji), with images and PDFs priced apart.
func EstimateTokens(req *coachd.ModelRequest) int64 {
	tools, _ := json.Marshal(req.Tools)
	return estimateTokens(req, len(tools))
}

// estimateTokens is EstimateTokens with the length of the request's tools
// as JSON given.
func estimateTokens(req *coachd.ModelRequest, toolsLen int) int64 {
	var dense denseText
	text, media := requestSize(req, toolsLen, &dense)
	return coachd.TokensOfBytes(text-dense.bytes) + dense.tokens() + media
}

// mostTokens is the most input tokens the request req can bill, from its
// size: a token for every byte of its text (a tokenizer's token is at
// least a byte), images and PDFs as estimateTokens prices them.
func mostTokens(req *coachd.ModelRequest, toolsLen int) int64 {
	text, media := requestSize(req, toolsLen, nil)
	return int64(text) + media
}

// requestSize is the bytes of text of req (its system prompt, messages
// and tools as JSON, without the base64 of images and PDFs) and the
// tokens of those images and PDFs, priced by the picture and the page;
// the text of the system prompt, messages and tools that is not ASCII is
// added to dense when it is not nil (a pack's tools described in Japanese
// are sent, and billed, on every request as they are).
func requestSize(req *coachd.ModelRequest, toolsLen int, dense *denseText) (int, int64) {
	n := 0
	for _, b := range req.System {
		n += len(b.Text)
		if dense != nil {
			addDense(dense, b.Text)
		}
	}
	if dense != nil {
		for i := range req.Tools {
			addDense(dense, req.Tools[i].Name)
			addDense(dense, req.Tools[i].Description)
			addDense(dense, req.Tools[i].InputSchema)
		}
	}
	n += messagesJSONSize(req.Messages, dense) + toolsLen // len(json.Marshal(req.Messages)), built for no message
	data, media := attachmentTokens(req.Messages)
	return n - data, media
}

// Estimate returns the tokens to reserve for a turn whose first request is
// req with in input tokens, under the agent's policy.
func (a *Agent) Estimate(req *coachd.ModelRequest, in int64) int64 {
	return a.estimateUsage(req, in).Total()
}

// estimateUsage is Estimate by kind of token: the input and output the
// reservation covers, priced without cache (the first round of a session
// reads nothing from it); under reserve: max at its most (maxUsage).
func (a *Agent) estimateUsage(req *coachd.ModelRequest, in int64) coachd.Usage {
	out := roundOutput(req)
	if a.Reserve == ReserveMax {
		rounds := int64(a.Limits.withDefaults().MaxRounds)
		return maxUsage(in*rounds, out*rounds)
	}
	return coachd.Usage{InputTokens: in, OutputTokens: out}
}

// roundOutput is the most output tokens one round asking req takes.
func roundOutput(req *coachd.ModelRequest) int64 {
	if req.MaxTokens <= 0 {
		return DefaultMaxTokens
	}
	return req.MaxTokens
}

// maxUsage is the most in input and out output tokens can cost, in any
// budget unit: the input priced as cache writes, which cost more than
// uncached input (1.25 times) and which a request writing the prompt
// cache pays. Reserve: max holds, and checks rounds against, this bound.
func maxUsage(in, out int64) coachd.Usage {
	return coachd.Usage{CacheCreationInputTokens: in, OutputTokens: out}
}

// unit is what the runner's budgets count.
func (t *Turn) unit() coachd.BudgetUnit {
	if t.r.cfg.BudgetUnit == "" {
		return coachd.UnitTokens
	}
	return t.r.cfg.BudgetUnit
}

// addUsage adds one model call's usage to the turn, priced for the model
// that answered (the one asked for, when the answer does not say).
func (t *Turn) addUsage(req *coachd.ModelRequest, resp *coachd.ModelResponse) {
	model, u := answeredBy(req, resp), resp.Usage
	t.usage = t.usage.Add(u)
	t.billed += t.unit().Charge(t.r.priced(model), u)
	t.cost += coachd.Cost(t.r.priced(model), u)
}

// answeredBy is the model a call's usage is priced for: the one that
// answered, or the one asked for when the answer does not say.
func answeredBy(req *coachd.ModelRequest, resp *coachd.ModelResponse) string {
	if resp.Model != "" {
		return resp.Model
	}
	return req.Model
}

// fallbackFits reports whether, under reserve: max, the fallback model
// fb may serve the round req after its call failed with resp: the API
// bills the input of a call that failed after it started, and the
// fallback reads it all again, so that failed call's usage and the
// fallback's round must both fit what is left of the hold. A call that
// cost nothing changes nothing (the hold and overHold priced the round
// for the dearer of the two models).
func (t *Turn) fallbackFits(req *coachd.ModelRequest, resp *coachd.ModelResponse, fb string) bool {
	t.mu.Lock()
	resv := t.resv
	t.mu.Unlock()
	if t.agent.Reserve != ReserveMax || resv == nil || resv.FreePreview {
		return true
	}
	spent := t.unit().Charge(t.r.priced(answeredBy(req, resp)), resp.Usage)
	if spent == 0 {
		return true
	}
	// The failed call billed req's input, which the fallback reads again:
	// text denser than its size says (emoji, CJK) counted as it is.
	u := resp.Usage
	in := max(t.roundInput(req), u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens)
	next := t.unit().Charge(t.r.priced(fb), maxUsage(in, req.MaxTokens))
	return t.billed+spent+next <= resv.Estimate
}

// priced is the model a request for model is priced at: the runner's
// default (Config.DefaultModel) when it names none, as the model serves
// it.
func (r *Runner) priced(model string) string {
	if model == "" {
		return r.cfg.DefaultModel
	}
	return model
}

// spend is the turn's cumulative use so far, for the store.
func (t *Turn) spend() coachd.Spend {
	return coachd.Spend{Amount: t.billed, Tokens: t.usage.Total()}
}

// estimate returns the reservation for a turn starting with req: its input
// counted by the model's count_tokens when the runner is configured to
// (Config.CountTokens) and the model can, a character-based estimate
// otherwise or when counting fails.
func (t *Turn) estimate(ctx context.Context, req *coachd.ModelRequest) int64 {
	toolsLen := t.tools.toolsJSONLen(req.Tools)
	in, counted := estimateTokens(req, toolsLen), false
	if tc, ok := t.model().(coachd.TokenCounter); ok && t.r.cfg.CountTokens {
		if n, err := tc.CountTokens(ctx, req); err == nil {
			in, counted = n, true
		} else {
			t.r.cfg.Logger.Warn("count_tokens failed; estimating from size", "session", t.sess.ID, "err", err)
		}
	}
	if t.agent.Reserve == ReserveMax {
		hold := t.maxCharge(req.Model, t.agent.estimateUsage(req, in))
		if !counted {
			// No check runs before the first round (roundBudget): the
			// hold covers its most, text the tokenizer splits finer than
			// the size estimate's 4 bytes a token (CJK, emoji) included.
			hold = max(hold, t.maxCharge(req.Model, maxUsage(mostTokens(req, toolsLen), roundOutput(req))))
		}
		return hold
	}
	return t.unit().Charge(t.r.priced(req.Model), t.agent.estimateUsage(req, in))
}

// maxCharge is the most u can cost in a round asked of model: priced for
// the agent's fallback model when that is dearer, since the fallback may
// serve the round instead (streamOrFallback) and is charged at its own
// prices.
func (t *Turn) maxCharge(model string, u coachd.Usage) int64 {
	n := t.unit().Charge(t.r.priced(model), u)
	if fb := t.agent.FallbackModel; fb != "" {
		n = max(n, t.unit().Charge(fb, u))
	}
	return n
}

// reservation is the hold the turn asks for (AdmitTurn reserves it before
// anything is stored or sent: a budget that cannot cover it is EBUDGET,
// 402, while the caller can still answer with an HTTP error), priced with
// msg, the user message the admission stores (nil: the one begin will).
func (t *Turn) reservation(ctx context.Context, msg *coachd.Message) coachd.ReserveRequest {
	// Prepare read the history under the session's slot; Run starts from
	// it too instead of reading it again.
	h := t.history
	if !t.req.Retry {
		if msg == nil {
			msg = t.userMessage()
		}
		t.history = append(h, msg)
	}
	est := t.estimate(ctx, t.modelRequest())
	t.history = h
	return coachd.ReserveRequest{
		UserID: t.req.User.ID, SessionID: t.sess.ID, Agent: t.agent.Name,
		Estimate: est, FreePreviewTurns: t.agent.FreePreviewTurns,
		// The turn stops at its max duration and then settles: its hold
		// must not expire before (a round with a long tool charges
		// nothing until it ends).
		Lasts: t.agent.Limits.withDefaults().MaxDuration + holdMargin,
	}
}

// roundBudget runs before every round after the first: it charges the
// usage so far (so a crash loses at most one round of accounting, and the
// hold's expiry moves on) unless the last round's write charged it
// (roundBehind), and, under reserve: max, stops the turn when the next
// round might not fit in what is left of the hold.
func (t *Turn) roundBudget(ctx context.Context, round int, req *coachd.ModelRequest) string {
	t.mu.Lock()
	resv := t.resv // a charge behind may be replacing it
	t.mu.Unlock()
	if resv == nil || resv.FreePreview {
		return ""
	}
	if round == 0 {
		return t.approvedFits(ctx, req, resv)
	}
	used, id, spend := t.billed, resv.ID, t.spend()
	charged := t.charged
	t.charged = nil
	if charged != nil && *charged == spend {
		// The last round's write charged it (roundBehind).
		return t.overHold(req, used, resv)
	}
	// Charged while the round's model call starts (see appendBehind); a
	// failure is logged, and the turn's settlement charges it all anyway.
	t.behind(ctx, func(wctx context.Context) error {
		if res, err := t.r.cfg.Store.Settle(wctx, t.req.User.ID, id, spend, coachd.SettleCharge); err != nil {
			t.r.cfg.Logger.Error("charging a round", "reservation", id, "err", err)
		} else {
			t.mu.Lock()
			t.resv = res
			t.mu.Unlock()
		}
		return nil
	})
	return t.overHold(req, used, resv)
}

// approvedFits is TurnBudget when, under reserve: max, the first round
// of a turn that resolved an approval might not fit its hold: the
// admission priced that round with a stand-in for the call's result
// (pendingAnswer), which the call that ran may far exceed. The round is
// priced as the hold prices a first round: its input counted, or at its
// most from its size.
func (t *Turn) approvedFits(ctx context.Context, req *coachd.ModelRequest, resv *coachd.Reservation) string {
	if t.agent.Reserve != ReserveMax || t.ap.answer == nil {
		return ""
	}
	if t.billed+t.maxCharge(req.Model, maxUsage(t.mostInput(ctx, req), roundOutput(req))) > resv.Estimate {
		return TurnBudget
	}
	return ""
}

// mostInput is the input tokens a call asking req may bill, as the hold
// prices a first round: counted (Config.CountTokens), or at its most from
// its size (mostTokens), never at size / 4, which dense text (CJK, emoji,
// base64) bills past.
func (t *Turn) mostInput(ctx context.Context, req *coachd.ModelRequest) int64 {
	if tc, ok := t.model().(coachd.TokenCounter); ok && t.r.cfg.CountTokens {
		if n, err := tc.CountTokens(ctx, req); err == nil {
			return n
		}
	}
	return mostTokens(req, t.tools.toolsJSONLen(req.Tools))
}

// overHold is TurnBudget when, under reserve: max, the round req might
// not fit in what is left of the hold after used.
func (t *Turn) overHold(req *coachd.ModelRequest, used int64, resv *coachd.Reservation) string {
	if t.agent.Reserve != ReserveMax {
		return ""
	}
	next := t.maxCharge(req.Model, maxUsage(t.roundInput(req), req.MaxTokens))
	if used+next > resv.Estimate {
		return TurnBudget
	}
	return ""
}

// noteInput remembers, under reserve: max, a round's real input tokens
// and the size of its request's parts (overHold): the next round sends
// all of it again.
func (t *Turn) noteInput(req *coachd.ModelRequest, resp *coachd.ModelResponse) {
	if t.agent.Reserve != ReserveMax {
		return
	}
	u := resp.Usage
	t.lastIn = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	t.lastSize = t.inputSize(req)
}

// inputSize is the size of the parts of a request that roundInput
// compares from one round to the next: bytes of text of its system
// prompt, its tools as JSON and its messages (without the base64 of
// images and PDFs), the tokens of those images and PDFs, and how many of
// the turn's history messages it was built from.
type inputSize struct {
	system, tools, msgs int
	media               int64
	history             int
}

func (t *Turn) inputSize(req *coachd.ModelRequest) *inputSize {
	z := &inputSize{tools: t.tools.toolsJSONLen(req.Tools), history: len(t.history)}
	for _, b := range req.System {
		z.system += len(b.Text)
	}
	data, media := attachmentTokens(req.Messages)
	z.msgs, z.media = messagesJSONLen(req.Messages)-data, media
	return z
}

// roundInput is the input tokens a round asking req may take: the size
// estimate before any round; after one, its real input and what req
// changes of it: the messages the round added (its reply, a tool's
// result) and any other part that grew at a token a byte (CJK, emoji or
// base64 bill far more than size / 4; a token is at least a byte), a
// part that shrank (older tool results shortened) at size / 4.
func (t *Turn) roundInput(req *coachd.ModelRequest) int64 {
	est := EstimateTokens(req)
	last := t.lastSize
	if last == nil {
		return est
	}
	cur := t.inputSize(req)
	added := 0
	if cur.history > last.history {
		added = addedSize(t.history[last.history:])
	}
	in := t.lastIn + grown(cur.system, last.system) + grown(cur.tools, last.tools) +
		grown(cur.msgs-added, last.msgs) + int64(added) + cur.media - last.media
	return max(est, in)
}

// grown is the most tokens a part of was bytes that is now now bytes may
// add: a token a byte when it grew, size / 4 off when it shrank.
func grown(now, was int) int64 {
	if now >= was {
		return int64(now - was)
	}
	return -int64(was-now) / 4
}

// addedSize is the bytes of text msgs add to a request (their blocks as
// JSON, without the base64 of images and PDFs).
func addedSize(msgs []*coachd.Message) int {
	mm := make([]coachd.ModelMessage, len(msgs))
	for i, m := range msgs {
		mm[i] = coachd.ModelMessage{Role: m.Role, Blocks: m.Blocks}
	}
	data, _ := attachmentTokens(mm)
	return messagesJSONLen(mm) - data
}

// summaryFits reports whether, under reserve: max, the compaction call
// sum and the first round after it fit what is left of the hold: the
// hold was priced for the turn's rounds alone, and roundBudget checks
// only the rounds after the first. The first round is priced on the
// history as it is now, uncompacted, plus the summary it sends instead
// of the turns summarized: up to the call's max_tokens, which a short
// turn summarized at length exceeds. Both are priced as the hold prices
// a first round (mostInput).
func (t *Turn) summaryFits(ctx context.Context, sum *coachd.ModelRequest) bool {
	t.mu.Lock()
	resv := t.resv
	t.mu.Unlock()
	if t.agent.Reserve != ReserveMax || resv == nil || resv.FreePreview {
		return true
	}
	round := t.modelRequest()
	next := t.unit().Charge(t.r.priced(sum.Model), maxUsage(t.mostInput(ctx, sum), sum.MaxTokens)) +
		t.maxCharge(round.Model, maxUsage(t.mostInput(ctx, round)+sum.MaxTokens+int64(len(summaryOpen+summaryClose)), round.MaxTokens))
	return t.billed+next <= resv.Estimate
}

// settle charges the turn's real usage to its reservation exactly once:
// Finalize when the turn ended on its own, Abort when it was cancelled,
// failed or panicked (StopReason still empty). Run calls it before
// turn_ended and again, deferred, for panics; Close for a turn never run.
func (t *Turn) settle(ctx context.Context) {
	_ = t.sync() // a charge behind comes first; a failure was reported
	t.mu.Lock()
	res, done := t.resv, t.settled
	t.settled = true
	t.mu.Unlock()
	if res == nil || done {
		return
	}
	wctx, cancel := persistCtx(ctx)
	defer cancel()
	st, used := t.r.cfg.Store, t.spend()
	var settled *coachd.Reservation
	err := whileDown(wctx, func(ctx context.Context) (err error) {
		settled, err = st.Settle(ctx, t.req.User.ID, res.ID, used, t.settleMode())
		return err
	})
	if err != nil {
		// The hold expires on its own; the usage is lost to the ledger,
		// so say so loudly.
		t.r.cfg.Logger.Error("settling reservation", "reservation", t.resv.ID, "billed", used.Amount, "tokens", used.Tokens, "err", err)
		return
	}
	t.mu.Lock()
	t.resv = settled
	t.mu.Unlock()
}

// settleMode is Finalize when the turn ended on its own, Abort when it
// was cancelled, failed or panicked (StopReason still empty).
func (t *Turn) settleMode() coachd.SettleMode {
	switch t.res.StopReason {
	case "", coachd.TurnAborted, coachd.TurnError:
		return coachd.SettleAbort
	}
	return coachd.SettleFinalize
}

// budgetRemaining is the user's budget left if the turn stopped now: what
// the store reported, plus this turn's unused hold. Nil for a free preview
// or a turn without a reservation.
func (t *Turn) budgetRemaining() *int64 {
	t.mu.Lock()
	res, settled := t.resv, t.settled
	t.mu.Unlock()
	if res == nil || res.FreePreview {
		return nil
	}
	left := res.Remaining - res.Deficit
	if !settled {
		left += res.Held - max(t.billed-res.Charged, 0)
	}
	left = max(left, 0)
	return &left
}
