package mcp

import (
	"errors"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
)

// TestDenyListNameForm: a server file's allow and deny take the server's
// own tool names, an agent's mcp allow and deny the full ones
// (<prefix>__<tool>). A deny written in the other form matches nothing,
// so the tool it was meant to hide is offered to the model: a pack
// problem at its line, in both places.
func TestDenyListNameForm(t *testing.T) {
	dir := writePack(t, map[string]string{
		"mcp/crm.yaml": "name: crm\nurl: https://crm.example.com/mcp\ndeny: [crm__delete_all]\nallow: [\"crm__*\"]\n",
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\nmcp:\n  servers: [crm]\n  deny: [delete_all]\n" +
			"  allow: [\"*lookup*\", \"crm__*\"]\n---\nYou coach.\n",
	})
	_, err := loadPack(t, dir)
	var pe *agent.PackError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	got := pe.Error()
	for _, want := range []string{
		`mcp/crm.yaml:3: deny: "crm__delete_all" names the tool with its prefix`,
		`mcp/crm.yaml:4: allow: "crm__*" names the tool with its prefix`,
		`agents/coach.md:6: mcp.deny: "delete_all" names no tool`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "lookup") || strings.Contains(got, `mcp.allow: "crm__*"`) {
		t.Errorf("a pattern that can match was refused:\n%s", got)
	}
}
