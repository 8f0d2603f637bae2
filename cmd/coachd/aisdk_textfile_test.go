package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAISDKChatTextFile: useChat's sendMessage with notes.md attached
// (text/markdown, as browsers name it) against the real binary. The
// AI SDK door took only text/plain, so the chat showed a 400; the file is
// now a text document the model reads, titled with its name.
func TestAISDKChatTextFile(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "aisdkclient"), "ai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	fake.Enqueue(anthropictest.Text("Airport at six, then.", 4))
	cmd := exec.Command(node, filepath.Join(dir, "textfile.mjs"), p.url, p.key)
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	var out struct {
		Error *string
		Text  string
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Error != nil || out.Text != "Airport at six, then." {
		t.Fatalf("%s: %v", raw, err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	msgs := reqs[0].Messages()
	blocks := msgs[len(msgs)-1].Blocks
	if len(blocks) != 2 || blocks[0].Type != "document" || !strings.Contains(string(blocks[0].Source), `"media_type":"text/plain"`) ||
		!strings.Contains(string(blocks[0].Source), "airport at 6") || string(blocks[0].Extra["title"]) != `"notes.md"` {
		t.Errorf("the user message's blocks: %+v", blocks)
	}
}
