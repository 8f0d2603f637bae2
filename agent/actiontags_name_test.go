package agent_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
)

// TestActionTagLongName: a pack's tool and data source action names run
// to 64 characters ([a-z][a-z0-9_]{0,63}), each action is a tag ("Each
// action is a tool and, for agents with action_tags, a tag"), and POST
// /v1/actions/validate takes action types of 64 characters; the tag
// filter must find a tag of that length, not show it to the driver.
func TestActionTagLongName(t *testing.T) {
	name := "MARK_EVENT_" + strings.Repeat("X", 64-len("MARK_EVENT_"))
	text, tags := agent.StripActionTags("Done. [" + name + `: {"a": 1}]`)
	if text != "Done. " || len(tags) != 1 || tags[0].Name != name {
		t.Fatalf("a 64-character tag: text %q, tags %+v", text, tags)
	}
	// One character more is not a name any tool can have: plain text.
	long := "[" + name + `X: {"a": 1}]`
	if text, tags := agent.StripActionTags(long); text != long || len(tags) != 0 {
		t.Fatalf("a 65-character tag: text %q, tags %+v", text, tags)
	}
}
