package review

import (
	"context"

	"github.com/coachd/coachd"
)

// Unbound returns the review tools that have no built-in namesake, for the
// server's toolset: packs may name them, and outside a review (which binds
// them to its workspace and trace) they answer that they need one.
// read_file and list_files are the user's documents outside a review.
func Unbound() []coachd.Tool {
	ws := &Workspace{opts: Options{Write: true}}
	var out []coachd.Tool
	for _, t := range append(ws.Tools(), DecisionTools(nil)...) {
		switch t.Definition().Name {
		case "read_file", "list_files":
			continue
		}
		out = append(out, unbound{t.Definition()})
	}
	return out
}

type unbound struct{ def coachd.ToolDef }

func (u unbound) Definition() coachd.ToolDef { return u.def }

func (u unbound) Execute(context.Context, coachd.ToolCall, coachd.ToolEnv) (coachd.ToolResult, error) {
	return refuse("%s works only inside a review (POST /v1/reviews, coachd review or coachd autobuild), which gives it a workspace", u.def.Name)
}
