package coachd

import (
	"context"
	"errors"
	"time"
)

// ErrSessionChanged is AdmitTurn's answer when the session moved on (a
// message stored, an update) since the turn read it: nothing was taken,
// and the turn reads the session again.
var ErrSessionChanged = errors.New("coachd: the session changed since it was read")

// ErrLimitReached is AdmitTurn's answer when one of its Limits is
// reached: nothing was counted nor taken.
var ErrLimitReached = errors.New("coachd: a limit counted with the turn's admission is reached")

// LimitHit is one event counted against a limit, as LimitService.HitLimit
// counts it: under Key, in the window that starts at Window, unless the
// count reached Limit. Per, when set, is the window's length (a rate's):
// a store that replicas share counts in the window of that length that
// holds its own clock, the one clock they share, and Window (the
// caller's clock truncated to Per) only says which one the caller meant.
type LimitHit struct {
	Key    string
	Window time.Time
	Per    time.Duration
	Limit  int64
	// PerMessage counts messages, not requests (the monthly message
	// limit): a turn that runs a stored message again (a retry, or the
	// message resent after its turn failed) is not counted in it.
	PerMessage bool
}

// TurnAdmission is a turn's start, admitted in one write transaction.
type TurnAdmission struct {
	// Owner leases the session's turn until Until (see AcquireTurn).
	Owner string
	Until time.Time
	// Seen is the session as the turn read it, or as the session's last
	// EndTurn left it (without the lease): admission is ErrSessionChanged
	// when its message count, update time, agent, title, mode, status or
	// whether it waits on a pending call differ from the stored ones.
	Seen *Session
	// Reserve is the turn's budget hold (see BudgetService.Reserve); its
	// UserID and SessionID are Seen's.
	Reserve ReserveRequest
	// Stream, when not nil, starts the turn's event log as well
	// (StreamService.BeginTurn).
	Stream *StreamStart
	// Limits are counted for Seen's user too, as HitLimit each; one that
	// is reached makes the admission ErrLimitReached.
	Limits []LimitHit
	// Message, when not nil, is the turn's user message, appended to
	// Seen's session in the same transaction (as AppendMessages): stored
	// with the admission or not at all. Its ID, SessionID, Seq and
	// CreatedAt are filled in once committed (with Behind, once its
	// statements ran: it is stored once Admission.Commit returns nil).
	Message *Message
	// Behind lets the store return before the admission's commit, with
	// Admission.Commit to wait for it, so the turn's model request leaves
	// while the commit is written. The caller shows the client nothing of
	// the turn, and writes nothing more of it, before Commit returns nil.
	// A store that cannot leave it behind commits first (Commit nil).
	Behind bool
}

// StreamStart is what StreamService.BeginTurn needs, for AdmitTurn.
type StreamStart struct {
	Owner string
	Keep  int
	// Key, when set, is the client's Idempotency-Key for the turn's
	// request (Hash, that request's hash): kept with the turn for as long
	// as the log keeps it, unique per user (ErrTurnKeyTaken).
	Key, Hash string
	// Replaces, when set, is the turn of the same session the key named
	// and released (it failed with a retryable error): the key names this
	// turn instead, a retry of the same request storing no message again,
	// unless the key moved meanwhile (ErrTurnKeyTaken).
	Replaces int64
}

// Admission is an admitted turn: its reservation and, when asked for, the
// number of its turn in the event log (0 otherwise).
type Admission struct {
	Reservation *Reservation
	StreamTurn  int64
	// Commit, with TurnAdmission.Behind, waits for the admission's
	// commit and says whether it was stored (nothing of it is when not);
	// it may be called any number of times, from any goroutine. Nil when
	// AdmitTurn returned committed.
	Commit func() error
}

// TurnService reads what a turn starts from in one read, and starts and
// ends a turn each in one write transaction.
type TurnService interface {
	// ReadTurn reads what a turn starts from, in one read: the user's
	// session and its messages after seq after (all of them when 0).
	ReadTurn(ctx context.Context, userID, sessionID string, after int64) (*Session, []*Message, error)
	// AdmitTurn takes the session's turn lease, reserves the turn's
	// budget and, when asked, begins its event log and counts its limits,
	// all or nothing: a live lease of another owner is ETURNINPROGRESS, a
	// budget that cannot cover the estimate EBUDGET, a limit reached
	// ErrLimitReached. When its COMMIT failed, which may have been made
	// (the connection lost on the way back), it returns the admission
	// with the error, for the caller to undo.
	AdmitTurn(ctx context.Context, a TurnAdmission) (*Admission, error)
	// EndTurn stores the turn's last messages, settles its reservation
	// and releases its lease, all or nothing. A tool round's write is one
	// too: its messages and a SettleCharge of the spend so far, no Owner.
	// It returns the settled reservation (nil without one) and, when it
	// stored messages and released Owner's lease, the session as that
	// write left it (nil otherwise): what the session's next turn starts
	// from unless something changes it first, which that turn's admission
	// sees (TurnAdmission.Seen).
	EndTurn(ctx context.Context, userID string, e TurnEnd) (*Reservation, *Session, error)
}

// TurnEnd is what EndTurn writes.
type TurnEnd struct {
	SessionID string
	// Notes, when any, are created first, each as CreateNote creates
	// one (validated, within MaxNotesPerUser, in SessionID) but keeping
	// the ID it carries (ToolEnv.StageNote gave it): one that cannot be
	// fails the whole write.
	Notes []*Note
	// Messages, when any, are appended next (as AppendMessages, which
	// fills them in once stored). With LogTurn they are stored only
	// while that turn of the session's event log has not ended, checked
	// in the write that stores them: a turn its readers gave up (they
	// told their clients it was interrupted) stores none, and they are
	// left as they came (Seq 0), nor Notes, the rest of the write made
	// all the same.
	Messages []*Message
	// ReservationID is settled with Spend as Mode says (Settle); ""
	// settles none.
	ReservationID string
	Spend         Spend
	Mode          SettleMode
	// ReservationSeen, when set, is that reservation as the caller last
	// had it (from the admission or the last EndTurn). A store may settle
	// from it without reading the reservation, on condition that the
	// stored one is still the same in every field a settlement reads;
	// when it is not, the store reads it. It is never written as given.
	ReservationSeen *Reservation
	// Owner's lease is released (ReleaseTurn); "" releases none.
	Owner string
	// Lease is the owner of the turn's lease (Owner when ""): with
	// LogTurn, Messages are stored only while the session's lease is
	// still its, not another owner's that took the session for a new
	// turn once this one stalled past its lease.
	Lease string
	// LogTurn is the turn's number in the session's event log (0: none),
	// which fences Messages. LogTurn and LogKeep, when both are set, apply the event log's
	// retention at the turn's end instead of its admission (StreamStart's
	// Keep): the session's logged turns up to LogTurn - LogKeep go. A
	// turn that does not end here (closed unrun, a crash, an EndTurn that
	// failed) prunes nothing: the next turn that ends catches up, and the
	// log's pruning by age (PruneEvents) goes on.
	LogTurn int64
	LogKeep int
}
