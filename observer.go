package coachd

import "time"

// Observer is told what happens, for metrics. Its methods are called on
// hot paths: they must be cheap and safe for concurrent use.
type Observer interface {
	// TurnEnded reports a finished turn: its agent, stop reason, usage,
	// duration and time to the first streamed text (0 when none came).
	TurnEnded(agent, stop string, u Usage, duration, firstToken time.Duration)
	// ToolCalled reports one tool execution and whether it succeeded.
	ToolCalled(tool string, ok bool, d time.Duration)
	// UpstreamError reports a model error by code (rate_limit, api_error…).
	UpstreamError(code string)
	// Rejected reports a request refused by a limit: budget_exhausted,
	// rate_limit_exceeded.
	Rejected(code string)
	// StreamOpened and StreamClosed count open SSE streams.
	StreamOpened()
	StreamClosed()
	// DBTransaction reports a committed database transaction: kind read
	// or write, and its time from begin to commit.
	DBTransaction(kind string, d time.Duration)
}

// NopObserver observes nothing.
type NopObserver struct{}

func (NopObserver) TurnEnded(string, string, Usage, time.Duration, time.Duration) {}
func (NopObserver) ToolCalled(string, bool, time.Duration)                        {}
func (NopObserver) UpstreamError(string)                                          {}
func (NopObserver) Rejected(string)                                               {}
func (NopObserver) StreamOpened()                                                 {}
func (NopObserver) StreamClosed()                                                 {}
func (NopObserver) DBTransaction(string, time.Duration)                           {}
