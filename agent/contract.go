package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// EContractViolation is the code of the error event that names a violated
// contract; the turn ends with stop reason coachd.TurnContractViolation.
const EContractViolation = "contract_violation"

// DefaultMaxRepairs is how many times a turn may be sent back to the model
// to repair a contract before it ends as a violation.
const DefaultMaxRepairs = 2

// Contracts must hold for a turn to end successfully.
//
//   - MustCall: tools that must have run successfully in the turn.
//     With Ordered, they must run in the listed order; a call out of
//     order is refused with a result naming the call to make first.
//   - MustNotCall: tools that are refused (the call gets an error result);
//     calling one counts as a violation to repair.
//   - MustOutput: a JSON Schema the final structured output must match.
//     The final output is the text of the turn's last reply, which must be
//     one JSON object (a ```json fence around it is allowed).
//
// When the model ends its turn with a contract unmet, the runtime stores a
// user message naming what is missing and runs another round, at most
// MaxRepairs times; then the turn ends with contract_violation.
type Contracts struct {
	MustCall []string `json:"must_call,omitempty"`
	// Ordered makes MustCall a sequence: a must_call tool is refused until
	// the ones listed before it ran successfully in the turn.
	Ordered     bool            `json:"ordered,omitempty"`
	MustNotCall []string        `json:"must_not_call,omitempty"`
	MustOutput  json.RawMessage `json:"must_output,omitempty"`
	MaxRepairs  int             `json:"max_repairs"`

	output *jsonschema.Schema
}

// SetMustOutput compiles and sets the output schema.
func (c *Contracts) SetMustOutput(schema json.RawMessage) error {
	sch, err := compileSchema("must_output", schema)
	if err != nil {
		return err
	}
	c.MustOutput, c.output = schema, sch
	return nil
}

// FinalOutput is Result.Output of a turn that ended (end_turn) with a
// last reply saying text: nil without a must_output contract.
func (c *Contracts) FinalOutput(text string) json.RawMessage {
	if c.output == nil {
		return nil
	}
	return json.RawMessage(trimOutput(text))
}

// turnState is what the runner keeps per turn for the pack features:
// the assembled system prompt, the contract bookkeeping and action-tag
// calls waiting to be recorded on the next assistant message.
type turnState struct {
	system  []coachd.Block
	tail    []coachd.Block  // the turn's context, after the history (systemPrompt)
	called  map[string]bool // tools that ran successfully this turn
	repairs int
	forbid  int // must_not_call calls refused
	// misordered are the calls refused by an ordered must_call this round.
	misordered []string
	actions    []actionRecord
	sent       sentHistory    // the last history a request sent (historySent)
	zone       *time.Location // the user's, as the context found it; nil: UTC
	// data is what the context read (nil: none), and mode the session
	// mode the prompt was built for: entering or leaving an arc mid-turn
	// builds it again (refreshSystem).
	data *contextData
	mode string
}

// sentHistory is the history a request sent, msgs, built from the turn's
// first n messages, the last of them last: from view, their compacted
// form, of tokens estimated tokens (compactedSized).
type sentHistory struct {
	n      int
	last   *coachd.Message
	view   []*coachd.Message
	tokens int64
	msgs   []coachd.ModelMessage
}

// endViolations checks the contracts when the model ends its turn with
// resp, returning each unmet one.
func (t *Turn) endViolations(resp *coachd.ModelResponse) []coachd.FieldError {
	c := &t.agent.Contracts
	var v []coachd.FieldError
	for _, name := range c.MustCall {
		if !t.x.called[name] {
			v = append(v, coachd.FieldError{Field: "must_call", Message: name + " was not called successfully", Code: "must_call"})
		}
	}
	if c.output != nil {
		text := finalOutput(resp)
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(text), &obj) != nil {
			v = append(v, coachd.FieldError{Field: "must_output", Message: "the final reply is not a single JSON object", Code: "must_output"})
		} else if err := validate(c.output, json.RawMessage(text)); err != nil {
			for _, d := range coachd.AsError(err).Details {
				v = append(v, coachd.FieldError{Field: "must_output." + d.Field, Message: d.Message, Code: "must_output"})
			}
		}
	}
	return v
}

// finalOutput is the reply's text without a ```json fence around it: the
// must_output object when the contract holds (Result.Output).
func finalOutput(resp *coachd.ModelResponse) string {
	return trimOutput(coachd.BlocksText(resp.Blocks))
}

// trimOutput is a reply's text without the ```json fence around it.
func trimOutput(text string) string {
	text = strings.TrimSpace(text)
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```"), "```"))
}

// DecisionTool is the validator's decision tool: an agent that declares it
// and gives must_output as prose must end its turn with a JSON object
// matching the tool's input schema.
const DecisionTool = "record_decision"

// outOfOrder reports, for an ordered must_call tool, the first tool listed
// before it that has not run successfully yet ("" when name may run).
func (c *Contracts) outOfOrder(name string, called map[string]bool) string {
	if !c.Ordered {
		return ""
	}
	k := slices.Index(c.MustCall, name)
	for _, prev := range c.MustCall[:max(k, 0)] {
		if !called[prev] {
			return prev
		}
	}
	return ""
}

// ordered reports whether name is a tool of an ordered must_call.
func (c *Contracts) ordered(name string) bool {
	return c.Ordered && slices.Contains(c.MustCall, name)
}

// refuseOutOfOrder answers a call made before the tools the contract
// orders before it.
func (t *Turn) refuseOutOfOrder(id, name, first string) outcome {
	t.x.misordered = append(t.x.misordered, name)
	return errOutcome(id, fmt.Sprintf("refused: call %s first; this agent's contract requires %s in this order", first, strings.Join(t.agent.Contracts.MustCall, ", then ")))
}

// forbidden reports whether a must_not_call contract refuses name.
func (t *Turn) forbidden(name string) bool {
	return slices.Contains(t.agent.Contracts.MustNotCall, name)
}

// repairText tells the model what its turn still needs.
func repairText(v []coachd.FieldError, schema json.RawMessage) string {
	var sb strings.Builder
	sb.WriteString("[coachd contract] Your turn cannot end yet. Fix the following, then finish:")
	for _, e := range v {
		fmt.Fprintf(&sb, "\n- %s: %s", e.Field, e.Message)
	}
	for _, e := range v {
		if e.Code == "must_output" && len(schema) > 0 {
			sb.WriteString("\nYour final reply must be only a JSON object matching this schema: " + string(schema))
			break
		}
	}
	return sb.String()
}

// repair stores the model's reply and the runtime's repair request, so the
// next round sees what is missing.
func (t *Turn) repair(ctx context.Context, resp *coachd.ModelResponse, v []coachd.FieldError) string {
	t.x.repairs++
	meta, _ := json.Marshal(map[string]any{"synthetic": "contract_repair", "violations": v})
	msg := &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(repairText(v, t.agent.Contracts.MustOutput))}, Metadata: meta}
	if err := t.append(ctx, t.assistantMessage(resp, false), msg); err != nil {
		return t.fail(err)
	}
	return ""
}

// violation ends the turn naming the unmet contracts.
func (t *Turn) violation(v []coachd.FieldError) string {
	parts := make([]string, len(v))
	for i, e := range v {
		parts[i] = e.Field + ": " + e.Message
	}
	t.res.Err = &coachd.Error{Code: EContractViolation, Message: "contract violated: " + strings.Join(parts, "; "), Details: v}
	return coachd.TurnContractViolation
}
