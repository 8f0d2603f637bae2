// Package tools holds coachd's built-in tools, one file each. Every tool
// reads and writes only what belongs to the calling user.
package tools

import (
	"encoding/json"

	"github.com/coachd/coachd"
)

// Builtins returns every built-in tool.
func Builtins() []coachd.Tool {
	return []coachd.Tool{SaveNote{}, ListNotes{}, ShowOptions{}, CompleteSession{}}
}

// jsonResult renders v as a tool result.
func jsonResult(v any) (coachd.ToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return coachd.ToolResult{}, err
	}
	return coachd.ToolResult{Content: string(b)}, nil
}

// refuse is a result that tells the model why nothing was done.
func refuse(msg string) (coachd.ToolResult, error) {
	return coachd.ToolResult{Content: msg, IsError: true}, nil
}
