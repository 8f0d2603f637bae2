package coachd

import (
	"bytes"
	"encoding/json"
	"slices"
)

// An image or document a tool returns (a screenshot in a recorded
// tool_result's content) goes back to the API on later turns as a user's
// photo does, and counts in the same window (the agent's
// limitAttachments): a read leaves out its data as it does a photo's
// (OmitAttachmentData), and counts it (CountAttachments).

// resultBlocks is the content of b, when b is a tool_result whose content
// is a list of blocks with an image or document among them: decoded, the
// caller's own. nil otherwise.
func resultBlocks(b Block) []Block {
	c := bytes.TrimSpace(b.Content)
	// Content without the key (nor an escape that could spell it) is
	// decided without a decode: most tool results are.
	if b.Type != BlockToolResult || len(c) == 0 || c[0] != '[' ||
		!bytes.Contains(c, []byte(`"source"`)) && bytes.IndexByte(c, '\\') < 0 {
		return nil
	}
	var inner []Block
	if json.Unmarshal(c, &inner) != nil || !slices.ContainsFunc(inner, isAttachmentBlock) {
		return nil
	}
	return inner
}

// omitResultData is tool_result b with the data of the attachments in its
// content left out (OmitAttachmentData), and ok false when it has none.
func omitResultData(b Block) (Block, bool) {
	inner, ok := OmitAttachmentData(resultBlocks(b))
	if !ok {
		return b, false
	}
	content, err := json.Marshal(inner)
	if err != nil {
		return b, false
	}
	b.Content = content
	return b, true
}

// CountAttachments returns how many image and document blocks blocks
// hold, those in a tool_result's content too, and the bytes of their
// source data as sent (AttachmentSizes): what a history's window counts.
func CountAttachments(blocks []Block) (count, sent int) {
	for _, b := range blocks {
		if _, _, n, ok := AttachmentSizes(b); ok {
			count, sent = count+1, sent+n
			continue
		}
		for _, c := range resultBlocks(b) {
			if _, _, n, ok := AttachmentSizes(c); ok {
				count, sent = count+1, sent+n
			}
		}
	}
	return count, sent
}

func isAttachmentBlock(b Block) bool { return b.Type == BlockImage || b.Type == BlockDocument }
