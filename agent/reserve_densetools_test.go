package agent_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// TestReserveEstimateDenseTools: a pack whose tools are described in
// Japanese sends that text on every request, and the API bills it as it
// bills any CJK text, about a token a character. The first round's
// estimate counted the tools' JSON at four bytes a token (only the
// messages and system prompt were counted as dense), so a one-round turn
// of such a pack was billed past its hold. The tools are now counted as
// the request sends them.
func TestReserveEstimateDenseTools(t *testing.T) {
	desc := strings.Repeat("乗客を空港まで送る前に、交通状況と天気を確認して最適なルートを選びます。", 60)
	field := strings.Repeat("目的地の名前。", 40)
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agents/coach.md", "---\nname: coach\ndescription: 運転手のコーチ\ndefault: true\nmax_tokens: 100\ntools: [plan_route]\n---\nYou coach drivers.\n")
	write("tools/plan_route.yaml", "name: plan_route\ndescription: "+desc+"\nmethod: POST\nurl: https://routes.example.com/plan\n"+
		"input_schema:\n  type: object\n  properties:\n    place: {type: string, description: \""+field+"\"}\n")
	p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins(),
		LoadTool: func(path string, data []byte) (coachd.Tool, error) {
			return tools.ParseWebhook(path, data, func(string) string { return "" }, nil)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h := harnessOver(t, p.Tools, p.Agent)
	h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		// The tools' Japanese as billed, the rest at four bytes a token.
		if !bytes.Contains(r.Raw, []byte(desc)) || !bytes.Contains(r.Raw, []byte(field)) {
			t.Errorf("the request does not send the tools' descriptions as they are")
		}
		in := billedText(desc) + billedText(field) + coachd.TokensOfBytes(len(r.Raw)-len(desc)-len(field))
		return anthropictest.Text("わかりました。", 1).WithUsage(usage(in, 5))
	})
	res := h.turn(agent.TurnRequest{Message: "空港までのルートは？"}, &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	r := h.mustSettled(res, coachd.ReservationFinalized)
	if r.Charged > r.Estimate {
		t.Fatalf("charged %d of a %d hold: %d past it", r.Charged, r.Estimate, r.Charged-r.Estimate)
	}
}
