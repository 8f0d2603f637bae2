package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/coachd/coachd"
)

// Bounds on the attachments re-sent with a history. Every stored image and
// document goes back to the API on each later turn of its session; without
// a bound, a session with many attachments would pass the API's 32 MB
// request limit (or its 100 images) and fail for good. The newest
// attachments are sent; older ones become a short text note.
const (
	MaxHistoryAttachments     = coachd.MaxHistoryAttachments
	MaxHistoryAttachmentBytes = coachd.MaxHistoryAttachmentBytes // of source data as sent (base64 or text)
)

// imageTokens is a reservation's estimate for one image: the API resizes
// large images to about 1.15 megapixels, about 1,600 tokens.
const imageTokens = 1600

// pdfPageTokens is a reservation's estimate for one PDF page: its text and
// its image.
const pdfPageTokens = 2500

// sentAttachment is where an attachment is in a history, its media type
// and its sizes (decoded, and of its source data as sent): its one read.
type sentAttachment struct {
	msg, block, size, sent, pages int
	inner                         int // its index in the tool_result block's content; -1: the block itself
	typ                           string
}

// limitAttachments keeps the newest image and document blocks of user
// messages, those inside their tool results too, within
// MaxHistoryAttachments and MaxHistoryAttachmentBytes and replaces the
// older ones with a text note. msgs is changed in place; its block slices
// are copied first, so stored messages are not.
//
// The window moves in steps: each move turns an early block into a note,
// which rewrites the prompt cache from that message on. Once a new
// attachment passes a bound, the oldest are dropped until the window is
// at half of both, so the next move is half a window of attachments away;
// moved by one with each new attachment, the window would re-cache the
// history after its oldest attachment on every turn. The cut is a
// function of the history alone (walked from its oldest attachment), so
// every turn and every replica computes the same.
func limitAttachments(msgs []coachd.ModelMessage) {
	var all []sentAttachment
	var results map[[2]int][]coachd.Block // the content of tool results holding attachments, by message and block
	for i, m := range msgs {
		if m.Role != coachd.RoleUser {
			continue
		}
		for j, b := range m.Blocks {
			if typ, size, sent, ok := coachd.AttachmentSizes(b); ok {
				all = append(all, sentAttachment{i, j, size, sent, pdfPages(b, typ), -1, typ})
				continue
			}
			inner := resultAttachments(b)
			for k, c := range inner {
				if typ, size, sent, ok := coachd.AttachmentSizes(c); ok {
					all = append(all, sentAttachment{i, j, size, sent, pdfPages(c, typ), k, typ})
				}
			}
			if inner != nil {
				if results == nil {
					results = map[[2]int][]coachd.Block{}
				}
				results[[2]int{i, j}] = inner
			}
		}
	}
	cut := windowCut(len(all), func(i int) (int, int, int) { return all[i].sent, all[i].pages, textLen(all[i].typ, all[i].sent) })
	copied := -1
	noted := map[[2]int]bool{} // tool results with a note in their content
	for k, a := range all {
		m := &msgs[a.msg]
		b := m.Blocks[a.block]
		if a.inner >= 0 {
			b = results[[2]int{a.msg, a.block}][a.inner]
		}
		// A turn reads no data of an attachment older than it may send
		// (coachd.OmitAttachmentData): such a block is a note wherever
		// the window falls.
		if k >= cut && !coachd.AttachmentOmitted(b) {
			continue
		}
		if copied != a.msg {
			m.Blocks, copied = append([]coachd.Block(nil), m.Blocks...), a.msg
		}
		if a.inner < 0 {
			m.Blocks[a.block] = noteOf(b, a.typ, a.size)
			continue
		}
		results[[2]int{a.msg, a.block}][a.inner] = noteOf(b, a.typ, a.size) // decoded here: the history's own
		noted[[2]int{a.msg, a.block}] = true
	}
	for at := range noted {
		content, _ := json.Marshal(results[at])
		msgs[at[0]].Blocks[at[1]].Content = content
	}
}

// resultAttachments is the content of b, when b is a tool_result whose
// content is a list of blocks with an image or document among them (a
// tool's screenshot): decoded, the caller's own. nil otherwise.
func resultAttachments(b coachd.Block) []coachd.Block {
	c := bytes.TrimSpace(b.Content)
	// Content without the key (nor an escape that could spell it) is
	// decided without a decode: most tool results are.
	if b.Type != coachd.BlockToolResult || len(c) == 0 || c[0] != '[' ||
		!bytes.Contains(c, []byte(`"source"`)) && bytes.IndexByte(c, '\\') < 0 {
		return nil
	}
	var inner []coachd.Block
	if json.Unmarshal(c, &inner) != nil || !slices.ContainsFunc(inner, isAttachment) {
		return nil
	}
	return inner
}

// attachmentNote is the text sent instead of an attachment block b.
func attachmentNote(b coachd.Block) coachd.Block {
	typ, n, _ := coachd.AttachmentInfo(b)
	return noteOf(b, typ, n)
}

// noteOf is attachmentNote of b, of media type typ and n bytes.
func noteOf(b coachd.Block, typ string, n int) coachd.Block {
	return coachd.TextBlock(fmt.Sprintf("[%s attachment %s (%s, %d KB) sent earlier in this conversation; not re-sent]",
		b.Type, attachmentTitle(b), typ, (n+1023)/1024))
}

// noteBinaryAttachments replaces the images and PDFs of msgs with their
// note (attachmentNote): what a summary of the conversation is sent. The
// model answered them when they were sent; sent again, each is billed as
// an image or as pages, for a summary of text; so were those in a tool
// result's content (a screenshot). Text documents stay (they are text).
// msgs is changed in place; changed block slices are copies.
func noteBinaryAttachments(msgs []coachd.ModelMessage) {
	for i := range msgs {
		copied := false
		for j, b := range msgs[i].Blocks {
			var nb coachd.Block
			if _, _, ok := binaryAttachment(b); ok {
				nb = attachmentNote(b)
			} else if nb, ok = noteResultAttachments(b); !ok {
				continue
			}
			if !copied {
				msgs[i].Blocks, copied = append([]coachd.Block(nil), msgs[i].Blocks...), true
			}
			msgs[i].Blocks[j] = nb
		}
	}
}

// noteResultAttachments is tool result b with the images and PDFs of its
// content as their note, and ok false when it has none.
func noteResultAttachments(b coachd.Block) (coachd.Block, bool) {
	inner, noted := resultAttachments(b), false
	for k, c := range inner {
		if _, _, ok := binaryAttachment(c); ok {
			inner[k], noted = attachmentNote(c), true // decoded: the caller's own
		}
	}
	if noted {
		b.Content, _ = json.Marshal(inner)
	}
	return b, noted
}

// windowCut is the index of the first of n attachments (oldest first,
// size(i) bytes of source data, PDF pages and bytes of text documents
// each) that a history sends: see limitAttachments. Pages are bounded too
// (the API takes at most coachd.MaxPDFPages in a request), never dropping
// the newest attachment for them unless it alone is over the bound
// (stored before it was one); so is text (coachd.MaxHistoryTextBytes: it
// is read as tokens, and the context holds 200,000), likewise.
func windowCut(n int, size func(int) (sent, pages, text int)) int {
	cut, count, bytes, pages, text := 0, 0, 0, 0, 0 // [cut, i] so far are sent: count of them, bytes, pages, text
	for i := range n {
		s, p, x := size(i)
		count, bytes, pages, text = count+1, bytes+s, pages+p, text+x
		if count <= MaxHistoryAttachments && bytes <= MaxHistoryAttachmentBytes && pages <= coachd.MaxPDFPages &&
			text <= coachd.MaxHistoryTextBytes {
			continue
		}
		for cut <= i && (count > MaxHistoryAttachments/2 || bytes > MaxHistoryAttachmentBytes/2 ||
			pages > coachd.MaxPDFPages || (cut < i && pages > coachd.MaxPDFPages/2) ||
			text > coachd.MaxHistoryTextBytes || (cut < i && text > coachd.MaxHistoryTextBytes/2)) {
			s, p, x := size(cut)
			count, bytes, pages, text, cut = count-1, bytes-s, pages-p, text-x, cut+1
		}
	}
	return cut
}

// textLen is the bytes of text of an attachment of media type typ with
// sent bytes of source data: sent for a text document, 0 for any other.
func textLen(typ string, sent int) int {
	if typ != coachd.MediaText {
		return 0
	}
	return sent
}

// pdfPages is the page count of b, an attachment of media type typ: 0
// unless it is a PDF.
func pdfPages(b coachd.Block, typ string) int {
	if typ != coachd.MediaPDF {
		return 0
	}
	return coachd.AttachmentPages(b)
}

func attachmentTitle(b coachd.Block) string {
	var title string
	if raw, ok := b.Extra["title"]; ok && json.Unmarshal(raw, &title) == nil && title != "" {
		return fmt.Sprintf("%q", title)
	}
	return "(untitled)"
}

// attachmentTokens estimates the tokens of the images and PDFs in msgs,
// those in user messages' tool results too (a tool's screenshot), and
// returns the bytes of source data they hold in the request, which a
// size-based estimate must not count as text.
func attachmentTokens(msgs []coachd.ModelMessage) (data int, tokens int64) {
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if n, t, ok := binaryAttachment(b); ok {
				data, tokens = data+n, tokens+t
				continue
			}
			if m.Role != coachd.RoleUser {
				continue
			}
			for _, c := range resultAttachments(b) {
				if n, t, ok := binaryAttachment(c); ok {
					data, tokens = data+n, tokens+t
				}
			}
		}
	}
	return data, tokens
}

// binaryAttachment returns the bytes of source data an image or PDF block
// holds and its estimated tokens; ok is false for any other block (a text
// document's tokens are those of its text).
func binaryAttachment(b coachd.Block) (data int, tokens int64, ok bool) {
	typ, sent, ok := coachd.AttachmentSent(b)
	return attachmentCost(typ, sent, pdfPages(b, typ), ok)
}

// attachmentCost is binaryAttachment of a block once read: typ, sent and
// ok as coachd.AttachmentSent returns them, pages as pdfPages does.
func attachmentCost(typ string, data, pages int, ok bool) (int, int64, bool) {
	if !ok || typ == coachd.MediaText {
		return 0, 0, false
	}
	if typ != coachd.MediaPDF {
		return data, imageTokens, true
	}
	return data, int64(pages) * pdfPageTokens, true
}
