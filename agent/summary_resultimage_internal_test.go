package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestSummaryNotesResultImages: the compaction's summary call sends the
// summarized turns' photos as a note each (TestSummarySendsNoPhotos), but
// a screenshot inside a recorded tool result went again as an image,
// billed as one for a summary of text. It is a note too; the text of the
// result and a text document in it stay (they are text).
func TestSummaryNotesResultImages(t *testing.T) {
	img := coachd.AttachmentBlock(coachd.MediaPNG, "", []byte("\x89PNG\r\n\x1a\nscreen"))
	doc := coachd.AttachmentBlock(coachd.MediaText, "log.txt", []byte("all green"))
	content, err := json.Marshal([]coachd.Block{coachd.TextBlock("the screen"), img, doc})
	if err != nil {
		t.Fatal(err)
	}
	result := coachd.Block{Type: coachd.BlockToolResult, ToolUseID: "toolu_1", Content: content}
	msgs := []coachd.ModelMessage{
		{Role: coachd.RoleAssistant, Blocks: []coachd.Block{{Type: coachd.BlockToolUse, ID: "toolu_1", Name: "screenshot", Input: json.RawMessage(`{}`)}}},
		{Role: coachd.RoleUser, Blocks: []coachd.Block{result}},
	}
	noteBinaryAttachments(msgs)
	got := string(msgs[1].Blocks[0].Content)
	if strings.Contains(got, `"type":"image"`) || !strings.Contains(got, "sent earlier in this conversation") ||
		!strings.Contains(got, "the screen") || !strings.Contains(got, "all green") {
		t.Fatalf("the summary call's tool result: %s", got)
	}
	if !strings.Contains(string(result.Content), `"type":"image"`) {
		t.Fatal("noteBinaryAttachments changed the stored result")
	}
}
