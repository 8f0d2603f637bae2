package server

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/coachd/coachd"
)

// The OpenAI-compatible API has no way to ask for approval but text: the
// call is shown in the reply, and the user's next message, "1" / "approve"
// or "2" / "deny", answers it (anything else is a message, which denies
// the call).

// approvalText is a call waiting for approval as reply text.
func approvalText(ev coachd.Event) string {
	var in bytes.Buffer
	if json.Compact(&in, ev.Input) != nil {
		in.Reset()
		in.Write(ev.Input)
	}
	return "\n\n" + ev.Reason + ": " + ev.ToolName + " " + in.String() + "\n1. Approve\n2. Deny\n(Answer with a number.)"
}

// approvalChoice is the answer a message gives to a call waiting for
// approval, or nil when it gives none.
func approvalChoice(text string) json.RawMessage {
	switch strings.ToLower(strings.TrimSuffix(strings.TrimSpace(text), ".")) {
	case "1", "approve", "yes":
		return json.RawMessage(`{"approved":true}`)
	case "2", "deny", "no":
		return json.RawMessage(`{"approved":false}`)
	}
	return nil
}
