package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopNoteAfterReload: a turn the server stopped early (here at its
// agent's max_rounds) says why under the reply. The note was drawn from
// message_end only: the stored reply kept the model's stop reason
// (tool_use), so after a reload the reply looked finished. The turn's
// own stop reason is stored on its last reply (metadata.turn_stop_reason)
// and the reloaded page says what the live one said.
func TestStopNoteAfterReload(t *testing.T) {
	e := newEnv(t, 1280, 800, "--pack", filepath.Join(repoRoot(t), "e2e", "testdata", "roundspack"))
	input := `{"note_type":"preference","title":"Morning runs","content":"Runs before work."}`
	e.fake.Enqueue(at.Blocks(at.TextBlock("Let me remember that.", 4), at.ToolUse("toolu_rounds", "save_note", input)))
	e.signIn()
	e.send("I run in the mornings")
	e.waitJS("the tool's result", `document.querySelector(".tool-card[data-tool=save_note]")?.dataset.state === "done"`)
	e.waitIdle()
	note := `[...document.querySelectorAll(".msg.assistant .msg-note")].map((n) => n.textContent).join("|")`
	live := eval[string](e, note)
	if !strings.Contains(live, "too many steps") {
		t.Fatalf("live note = %q, want the max_rounds note", live)
	}
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.querySelector(".tool-card[data-tool=save_note]")?.dataset.state === "done"`)
	if got := eval[string](e, note); got != live {
		t.Errorf("after a reload the note = %q, want %q as it was live", got, live)
	}

	// The API's history carries it, beside the model's own stop reason.
	id := strings.TrimPrefix(eval[string](e, `location.hash`), "#/")
	res := e.apiDo("GET", "/v1/sessions/"+id+"/messages", "", nil, http.StatusOK)
	defer res.Body.Close()
	var page struct {
		Messages []struct {
			Role     string
			Metadata struct {
				StopReason     string `json:"stop_reason"`
				TurnStopReason string `json:"turn_stop_reason"`
			}
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range page.Messages {
		if m.Role == "assistant" {
			got = append(got, m.Metadata.StopReason+"/"+m.Metadata.TurnStopReason)
		}
	}
	if strings.Join(got, ",") != "tool_use/max_rounds" {
		t.Errorf("assistant messages' stop_reason/turn_stop_reason = %v, want [tool_use/max_rounds]", got)
	}
}
