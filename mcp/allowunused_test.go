package mcp

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/internal/syncbuf"
)

// TestAllowNameNotOffered: an agent's mcp.allow or mcp.deny naming a
// tool its server does not offer matches nothing, which the pack cannot
// know before the server lists its tools. When the list arrives, each
// such literal name is logged, once per server start, not every turn;
// patterns and names the server offers are not.
func TestAllowNameNotOffered(t *testing.T) {
	runner, logs := coachOfFake(t, "mcp:\n  servers: [fake]\n  allow: [fake__echo, fake__nosuch, \"fake__h*\"]\n  deny: [fake__ghost, fake__fail]\n")
	for range 3 {
		specs, err := runner.ToolSpecsContext(context.Background(), "coach")
		if err != nil || len(specs) != 3 {
			t.Fatalf("specs %v, %v", specs, err)
		}
	}
	got := unofferedWarnings(logs)
	if len(got) != 2 || !strings.Contains(got[0]+got[1], "mcp.allow") || !strings.Contains(got[0]+got[1], "fake__nosuch") ||
		!strings.Contains(got[0]+got[1], "mcp.deny") || !strings.Contains(got[0]+got[1], "fake__ghost") {
		t.Errorf("warnings (want one for fake__nosuch, one for fake__ghost):\n%s\nall logs:\n%s", strings.Join(got, "\n"), logs.String())
	}
}

// TestApprovalNameNotOffered: a requires_approval rule naming an MCP
// tool its server does not offer (a typo of crm__delete) gates nothing,
// so the calls it meant to hold run unasked: logged like an allow name.
func TestApprovalNameNotOffered(t *testing.T) {
	runner, logs := coachOfFake(t, "mcp: {servers: [fake]}\nrequires_approval: [fake__fial, fake__echo, \"fake__h*\"]\n")
	if _, err := runner.ToolSpecsContext(context.Background(), "coach"); err != nil {
		t.Fatal(err)
	}
	got := unofferedWarnings(logs)
	if len(got) != 1 || !strings.Contains(got[0], "requires_approval") || !strings.Contains(got[0], "tool=fake__fial") {
		t.Errorf("warnings (want one for fake__fial):\n%s\nall logs:\n%s", strings.Join(got, "\n"), logs.String())
	}
}

// coachOfFake is a runner over a pack of the fake server and an agent
// coach with frontMatter (YAML lines) in its front matter, logging to
// the buffer returned.
func coachOfFake(t *testing.T, frontMatter string) (*agent.Runner, *syncbuf.Buffer) {
	t.Helper()
	dir := writePack(t, map[string]string{
		"mcp/fake.yaml":   fakeServerFile,
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\n" + frontMatter + "---\nYou coach.\n",
	})
	pack, err := loadPack(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pack.Close() })
	logs := &syncbuf.Buffer{}
	_, _, _, runner := packTurns(t, pack, slog.New(slog.NewTextHandler(logs, nil)))
	return runner, logs
}

// unofferedWarnings are the log's lines about names a server lacks.
func unofferedWarnings(logs *syncbuf.Buffer) []string {
	var got []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "offers no such tool") {
			got = append(got, line)
		}
	}
	return got
}
