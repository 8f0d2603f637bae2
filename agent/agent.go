// Package agent runs coaches: agent definitions, the tool set with its input
// validation, history repair, and the Runner that turns one user turn into a
// bounded, persisted, streamed sequence of model rounds and tool executions.
package agent

import "time"

// Limits bound one turn. Zero fields take the defaults.
type Limits struct {
	MaxRounds     int           `yaml:"max_rounds" json:"max_rounds"`
	MaxDuration   time.Duration `yaml:"max_duration" json:"max_duration"`
	ToolTimeout   time.Duration `yaml:"tool_timeout" json:"tool_timeout"`
	MaxToolCalls  int           `yaml:"max_tool_calls" json:"max_tool_calls"`
	BreakerRounds int           `yaml:"breaker_rounds" json:"breaker_rounds"`
}

// Default limits (ARCHITECTURE §2).
var DefaultLimits = Limits{
	MaxRounds:     10,
	MaxDuration:   55 * time.Second,
	ToolTimeout:   30 * time.Second,
	MaxToolCalls:  15,
	BreakerRounds: 2,
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	if l.MaxRounds <= 0 {
		l.MaxRounds = DefaultLimits.MaxRounds
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = DefaultLimits.MaxDuration
	}
	if l.ToolTimeout <= 0 {
		l.ToolTimeout = DefaultLimits.ToolTimeout
	}
	if l.MaxToolCalls <= 0 {
		l.MaxToolCalls = DefaultLimits.MaxToolCalls
	}
	if l.BreakerRounds <= 0 {
		l.BreakerRounds = DefaultLimits.BreakerRounds
	}
	return l
}

// What a client leaving does to its turn.
const (
	OnDisconnectContinue = "continue"
	OnDisconnectCancel   = "cancel"
)

// Agent is a coach: its prompt, model settings, tools and limits.
type Agent struct {
	Name        string
	Description string
	Model       string // "" uses the model's default
	// FallbackModel, when set, serves a round that Model answered
	// overloaded or unavailable before any of it reached the client.
	FallbackModel string
	MaxTokens     int64
	Thinking      int64 // thinking budget; 0 is off
	Temperature   *float64
	Tools         []string // tool names this agent may call
	Limits        Limits
	Prompt        string // the system prompt

	// Reserve is the budget reservation policy: "estimate" or "max".
	Reserve string
	// Compaction shortens and summarizes long histories (nil: defaults).
	Compaction *Compaction
	// FreePreviewTurns lets a user without budget run this many turns.
	FreePreviewTurns int

	// Skills are the skills this agent can use, resolved by the pack.
	Skills []*Skill
	// Permissions maps a session mode to the file types save_file may
	// write in it; "default" applies when no arc is entered, or when the
	// arc has no entry of its own.
	Permissions map[string][]string
	// Arcs are the structured arcs enter_structured_arc may enter; nil
	// allows the modes named in Permissions.
	Arcs []string
	// Context chooses the context sections of the prompt; nil injects
	// none (the default agent has no pack).
	Context *ContextSpec
	// Contracts must hold for a turn to end successfully.
	Contracts Contracts
	// ActionTags makes the runner execute [TOOL_NAME: {...}] tags written
	// in the reply text, and strip them from it.
	ActionTags bool
	// Source is the file the agent was loaded from, for messages.
	Source string

	// Triggers, from the agent file, are what may start the agent; an
	// explicit empty list makes it Internal: no user key may start it,
	// only the admin, the review API or another agent.
	Triggers []string
	Internal bool
	// Stack is the technology the agent works with ("any"), for listings.
	Stack string
	// CollaboratesWith names the pack's agents this one works beside.
	CollaboratesWith []string
	// SessionExpiry, when set, expires the agent's sessions after that long
	// without a message (the server's sweeper does it).
	SessionExpiry time.Duration
	// OnDisconnect is what a client leaving its stream does to the turn:
	// continue (it finishes, is stored and can be re-attached) or cancel
	// (it stops, stored as partial); "" lets the dialect decide.
	OnDisconnect string
	// Commands is run_command's allow-list: whole command lines, matched
	// word for word, never through a shell.
	Commands []string
	// Voice is the agent's realtime voice settings; nil takes the
	// server's defaults.
	Voice *Voice
	// Approvals are the calls that wait for the user's approval before
	// they run (requires_approval; approval.go).
	Approvals []ApprovalRule
	// Provider is the API serving Model and FallbackModel; the zero value
	// is the server's own model (Config.ModelFor resolves the others).
	Provider Provider
	// MCP is the agent's MCP servers and tool filters; their tools join
	// the agent's at each turn.
	MCP *MCPAccess

	mcpSpec     *mcpFile // the mcp: key, resolved by the pack
	checkinLine int      // of context.checkin.file_type, when set
	// contextTypes are context.standing's and context.recent's file
	// types, with their lines (checkRuleFileTypes).
	contextTypes []fileTypeRef
}

// fileTypeRef is a file type an agent file names under key, at line.
type fileTypeRef struct {
	key, typ string
	line     int
}

// DefaultMaxTokens is the output cap when an agent sets none.
const DefaultMaxTokens = 4096

// DefaultAgent is the built-in coach used when no pack defines one.
func DefaultAgent() *Agent {
	return &Agent{
		Name:        "default",
		Description: "A friendly general-purpose coach with notes memory.",
		MaxTokens:   DefaultMaxTokens,
		Tools:       []string{"save_note", "list_notes", "show_options", "complete_session"},
		Prompt: "You are a warm, practical coach. Keep replies short and concrete. " +
			"Use save_note to remember what matters about the user, list_notes to recall it, " +
			"and show_options when the user should pick between a few choices.",
	}
}
