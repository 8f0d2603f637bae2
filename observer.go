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

// WriteStats is what a SQLite store's single writer did since it opened,
// for tests, figures and metrics.
type WriteStats struct {
	Statements   int64 // statements run on the writer, savepoints included
	Transactions int64 // write transactions begun (group members)
	Commits      int64 // COMMITs: group members share one
	WALPages     int64 // pages the commits wrote to the WAL
	Checkpoints  int64 // background checkpoints done
	// Busy is how long the writer was held, by a transaction or a
	// group's COMMIT: writes queue behind it, so busy for most of the
	// wall time, the writer is what limits the server's writes.
	Busy time.Duration
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
