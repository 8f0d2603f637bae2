package mcp

import (
	"errors"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
)

// TestPackMCPPrefixNames: a server named crm_api serves its tools as
// crm-api__<tool> (a prefix has no _). An agent's mcp.deny or allow, or a
// requires_approval rule, written with the server's name (crm_api__*, as
// the problem texts say, <server>__<tool>) matched nothing, silently: the
// tool it meant to deny stayed offered, the call it meant to gate ran
// without approval. Such a name is a pack problem that names the prefix.
func TestPackMCPPrefixNames(t *testing.T) {
	server := strings.Replace(fakeServerFile, "name: fake", "name: crm_api", 1)
	dir := writePack(t, map[string]string{
		"mcp/crm_api.yaml": server,
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\nmcp:\n  servers: [crm_api]\n  deny: [crm_api__delete]\n" +
			"requires_approval:\n  - crm_api__*\n---\nYou coach.\n",
	})
	p, err := loadPack(t, dir)
	if err == nil {
		p.Close()
		t.Fatal("a deny list and an approval rule that name no tool of the server loaded without a problem")
	}
	var pe *agent.PackError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{
		`agents/coach.md:6: mcp.deny: "crm_api__delete" names no tool of the agent's MCP servers (their tools are named crm-api__<tool>)`,
		`agents/coach.md:8: requires_approval: "crm_api__*" names no tool of the pack's MCP servers (their tools are named crm-api__<tool>)`,
	} {
		if !strings.Contains(pe.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, pe.Error())
		}
	}
	// The prefix itself is fine.
	dir = writePack(t, map[string]string{
		"mcp/crm_api.yaml": server,
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\nmcp:\n  servers: [crm_api]\n  deny: [crm-api__delete, \"*__drop\"]\n" +
			"requires_approval:\n  - crm-api__*\n---\nYou coach.\n",
	})
	p, err = loadPack(t, dir)
	if err != nil {
		t.Fatalf("the prefix's names: %v", err)
	}
	p.Close()
}
