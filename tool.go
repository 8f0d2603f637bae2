package coachd

import (
	"context"
	"encoding/json"
	"time"
)

// ToolCategory says how a tool affects the turn.
type ToolCategory string

const (
	ToolInstant     ToolCategory = "instant"     // runs and returns a result
	ToolLifecycle   ToolCategory = "lifecycle"   // changes the session (complete, enter arc)
	ToolInteractive ToolCategory = "interactive" // ends the turn and waits for the user
)

// ToolDef describes a tool.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Category    ToolCategory    `json:"category"`
	// ResultSchema, for interactive tools, validates the user's answer.
	ResultSchema json.RawMessage `json:"result_schema,omitempty"`
	// Truncate names top-level input fields whose string values are replaced
	// by "[saved: N chars]" when history is re-sent to the model; the stored
	// message keeps the original.
	Truncate []string `json:"-"`
	// RequiresApproval pauses the turn before every call of the tool
	// until the user approves it (a webhook's requires_approval: true).
	RequiresApproval bool `json:"requires_approval,omitempty"`
}

// ToolCall is one tool_use the model asked for.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolEnv is what a tool may touch: the authenticated user, the session and
// the store. Everything a tool reads or writes is scoped to User.
type ToolEnv struct {
	User    *User
	Session *Session
	Store   Store
	// Emit sends an event to the turn's stream (session_changed, ...).
	Emit func(Event)
	// Now is the time from the runner's clock in the user's time zone
	// (the one the context tells the model); nil: the system's, UTC.
	Now func() time.Time
	// StageNote, when set, takes a note the tool would create into the
	// write that stores the round its result belongs to, instead of a
	// write of its own before the result: the note gets its ID here (the
	// tool may report it), is counted against MaxNotesPerUser as the
	// user's live notes stood when the request was authenticated plus the
	// turn's staged ones (an ECONFLICT when full, as CreateNote's), and is
	// stored with the round or not at all; no text that follows reaches
	// the client before it is stored. Nil: the tool writes itself.
	StageNote func(*Note) error
	// Finish, set for an OutcomeRecorder, hands the call's result to the
	// turn, as the tool's last step: false when the turn has already left
	// the call behind at its timeout (the model is told it did not finish;
	// what the tool returns is dropped), true when the turn takes what the
	// tool returns.
	Finish func() bool
}

// ToolResult is what a tool returns. A failure the model should see is a
// result with IsError set, not a Go error.
type ToolResult struct {
	Content string
	IsError bool
}

// Tool is something the model can call.
type Tool interface {
	Definition() ToolDef
	Execute(ctx context.Context, call ToolCall, env ToolEnv) (ToolResult, error)
}

// OutcomeRecorder is a tool that records its outcome elsewhere (a
// review's trace), which must say what the model is told: the runner
// gives it ToolEnv.Finish, and it records the outcome as Finish says.
type OutcomeRecorder interface {
	RecordsOutcome()
}

// InputChecker is a tool with a rule on its input that its schema cannot
// say (the Messages API refuses a top-level anyOf in input_schema), such
// as "one of these fields": checked after the schema, wherever input is
// validated (a model's call, an app's POST /v1/actions/validate). The
// error is Invalid, naming the fields.
type InputChecker interface {
	CheckInput(input json.RawMessage) error
}

// AnswerRecorder is an interactive tool that keeps something of the user's
// answer once the runner has accepted it (validated against ResultSchema):
// a pulse check's ratings become the baseline the context shows later.
type AnswerRecorder interface {
	RecordAnswer(ctx context.Context, env ToolEnv, answer json.RawMessage) error
}
