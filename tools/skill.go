package tools

import (
	"context"
	"encoding/json"

	"github.com/coachd/coachd"
)

// LoadSkill gives the model a skill's full text (its summary is always in
// the prompt). The text arrives as the tool result, so it stays in the
// conversation for the rest of the session.
type LoadSkill struct {
	Policy Policy // nil: no skills
}

func (LoadSkill) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "load_skill",
		Description: "Load the full guidance of one of your skills by name when the conversation calls for it. The skill summaries in your instructions list the names.",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 100}
  },
  "required": ["name"],
  "additionalProperties": false
}`),
	}
}

func (t LoadSkill) Execute(_ context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: " + err.Error())
	}
	if t.Policy == nil {
		return refuse("no skills are available")
	}
	text, err := t.Policy.SkillText(env.Session.Agent, in.Name)
	if err != nil {
		return refuse(err.Error())
	}
	return coachd.ToolResult{Content: text}, nil
}
