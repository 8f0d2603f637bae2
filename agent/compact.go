package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/coachd/coachd"
)

// Compaction keeps long sessions affordable: front matter `compaction:`.
// Sizes are the estimated tokens of the history re-sent each round
// (EstimateTokens of the messages).
//
//   - Past ShortenAfter, tool results larger than ShortenOver bytes in
//     turns older than the last KeepTurns (up to 2*KeepTurns-1: the cut
//     moves KeepTurns turns at a time) are sent shortened to their
//     first shortenTo bytes (the stored result is unchanged; the model
//     may call the tool again).
//   - Past SummarizeAfter, before the turn's first round, the model
//     summarizes every turn but the last KeepTurns; the summary is stored
//     as a message of its own (metadata kind "summary", through_seq: the
//     last message it covers) and sent instead of those turns from then
//     on. The stored history stays whole; the summary call is charged to
//     the turn like any other call. Cuts fall only between turns, so every
//     tool_use keeps its tool_result.
//
// Each change rewrites the prompt cache from the cut on once; between
// cuts the sent history only grows, so the cache holds.
type Compaction struct {
	ShortenAfter   int64 `yaml:"shorten_after"`
	SummarizeAfter int64 `yaml:"summarize_after"`
	KeepTurns      int   `yaml:"keep_turns"`
	ShortenOver    int   `yaml:"shorten_over"`
}

// Compaction defaults.
const (
	DefaultShortenAfter   = 30_000
	DefaultSummarizeAfter = 60_000
	DefaultKeepTurns      = 4
	DefaultShortenOver    = 1000 // bytes of a tool result worth shortening
	shortenTo             = 300  // bytes kept of it
	summaryMaxTokens      = 1024
)

var compactionKeys = yamlKeys(Compaction{})

func (c *Compaction) withDefaults() Compaction {
	out := Compaction{ShortenAfter: DefaultShortenAfter, SummarizeAfter: DefaultSummarizeAfter, KeepTurns: DefaultKeepTurns, ShortenOver: DefaultShortenOver}
	if c == nil {
		return out
	}
	if c.ShortenAfter > 0 {
		out.ShortenAfter = c.ShortenAfter
	}
	if c.SummarizeAfter > 0 {
		out.SummarizeAfter = c.SummarizeAfter
	}
	if c.KeepTurns > 0 {
		out.KeepTurns = c.KeepTurns
	}
	if c.ShortenOver > 0 {
		out.ShortenOver = max(c.ShortenOver, shortenTo+100)
	}
	return out
}

func (c *Compaction) validate(fm *frontMatter) {
	if c == nil {
		return
	}
	fm.checkKeys(fm.node("compaction"), compactionKeys)
	if c.ShortenAfter < 0 || c.SummarizeAfter < 0 || c.ShortenAfter > 10_000_000 || c.SummarizeAfter > 10_000_000 {
		fm.bad(fm.line("compaction"), "compaction sizes must be tokens from 0 (the default) to 10000000")
	}
	if c.KeepTurns < 0 || c.KeepTurns > 100 {
		fm.bad(fm.line("compaction", "keep_turns"), "keep_turns must be between 1 and 100")
	}
	if c.ShortenOver < 0 || (c.ShortenOver > 0 && c.ShortenOver < shortenTo+100) {
		fm.bad(fm.line("compaction", "shorten_over"), fmt.Sprintf("shorten_over must be at least %d bytes", shortenTo+100))
	}
}

// summaryMeta is a summary row's metadata.
type summaryMeta struct {
	Kind       string `json:"kind"`
	ThroughSeq int64  `json:"through_seq"`
}

// KindSummary marks a stored message that summarizes earlier turns.
const KindSummary = "summary"

var summaryWord = []byte(KindSummary)

func summaryOf(m *coachd.Message) (summaryMeta, bool) {
	// Metadata without the word (nor an escape that could spell it) is
	// no summary's: most messages are decided without decoding theirs.
	if len(m.Metadata) == 0 || !bytes.Contains(m.Metadata, summaryWord) && bytes.IndexByte(m.Metadata, '\\') < 0 {
		return summaryMeta{}, false
	}
	return decodeSummary(m.Metadata)
}

func decodeSummary(raw json.RawMessage) (summaryMeta, bool) {
	var meta summaryMeta
	if json.Unmarshal(raw, &meta) != nil || meta.Kind != KindSummary {
		return meta, false
	}
	return meta, true
}

// compacted is the stored history as the model is sent it: from the
// latest summary on (the summary first, then the turns after the ones it
// covers), with older large tool results shortened when the history is
// past c.ShortenAfter. msgs are not changed.
func compacted(msgs []*coachd.Message, c *Compaction) []*coachd.Message {
	out, _ := compactedSized(msgs, c)
	return out
}

// compactedSized is compacted with the estimated tokens of what it
// returns (historyTokens), which it works out on the way.
func compactedSized(msgs []*coachd.Message, c *Compaction) ([]*coachd.Message, int64) {
	// One look at each message (summaryOf, twice per model request, is
	// most of this function's time): out[0] is kept for the summary.
	var latest *coachd.Message
	var through int64 = -1
	out := make([]*coachd.Message, 1, len(msgs)+1)
	for _, m := range msgs {
		if meta, ok := summaryOf(m); !ok {
			out = append(out, m)
		} else if latest == nil || m.Seq > latest.Seq {
			latest, through = m, meta.ThroughSeq
		}
	}
	if latest == nil {
		out = out[1:]
	} else {
		out[0] = latest
		out = slices.DeleteFunc(out, func(m *coachd.Message) bool {
			return m != latest && m.Seq <= through && m.Seq != 0 // 0: not stored yet
		})
	}
	cfg := c.withDefaults()
	if tokens := historyTokens(out); tokens <= cfg.ShortenAfter {
		return out, tokens
	}
	cut := turnCut(out, shortenKeep(out, cfg.KeepTurns))
	for i := 0; i < cut; i++ {
		out[i] = shortenResults(out[i], cfg.ShortenOver)
	}
	return out, historyTokens(out)
}

// shortenKeep is how many of msgs' last turns keep their tool results
// whole: keep to 2*keep-1, so that the cut moves keep turns at a time.
// Each move changes the history sent from the cut on, which the prompt
// cache then writes again: moved every turn, it would re-cache the last
// keep turns on every turn.
func shortenKeep(msgs []*coachd.Message, keep int) int {
	turns := 0
	for _, m := range msgs {
		if turnStart(m) {
			turns++
		}
	}
	if turns <= keep {
		return keep
	}
	return keep + (turns-keep)%keep
}

// historyTokens estimates the tokens of msgs as sent, from the sizes of
// their blocks' contents (cheap: it runs every round). Images and PDFs
// count as the API bills them (binaryAttachment), not by their base64:
// one photo's bytes would pass every compaction threshold; so do those in
// user messages' tool results (a tool's screenshot). Attachments older
// than the window a history sends (limitAttachments) count as the note
// sent instead. Text that is not ASCII counts as the hold counts it
// (denseText): a history in Chinese bills about a token a character, and
// at four bytes a token it would pass the compaction thresholds late.
func historyTokens(msgs []*coachd.Message) int64 {
	// Each attachment's source (megabytes) is read once: the first walk
	// keeps what the second needs.
	var atts []sized // each image and document block's, in order
	var users []int  // the user's attachments: their index in atts
	// results are the user's tool results holding attachments, by message
	// and block: how many of atts are theirs, and the size of the rest of
	// their content (its text), read from its blocks so that it is the
	// same whether a read left its attachments' data out or not.
	var results map[[2]int]nestedResult
	var dense denseText
	var docs map[int]denseText // a text document's in a tool result, by its index in atts
	for i, m := range msgs {
		user := m.Role == coachd.RoleUser
		for j, b := range m.Blocks {
			// One append of each slice (an attachment, or one in a tool
			// result's content), which the compiler keeps on the stack.
			blocks, nested := m.Blocks[j:j+1], !isAttachment(b)
			if nested && !user {
				continue
			}
			if nested {
				if blocks = resultAttachments(b); blocks == nil {
					continue
				}
			}
			rest := 0
			for _, c := range blocks {
				typ, sent, ok := coachd.AttachmentSent(c)
				if nested && !ok {
					rest += blockLen(c) // the result's text
					addBlockDense(&dense, c)
					continue
				}
				if nested && ok && typ == coachd.MediaText {
					if docs == nil {
						docs = map[int]denseText{}
					}
					var d denseText
					addDense(&d, c.Source)
					docs[len(atts)] = d
				}
				atts = append(atts, sized{typ, sent, int32(pdfPages(c, typ)), ok})
				if ok && user {
					users = append(users, len(atts)-1)
				}
			}
			if nested {
				if results == nil {
					results = map[[2]int]nestedResult{}
				}
				results[[2]int{i, j}] = nestedResult{len(atts), rest}
			}
		}
	}
	cut := windowCut(len(users), func(i int) (int, int, int) {
		a := atts[users[i]]
		return a.sent, int(a.pages), textLen(a.typ, a.sent)
	})
	n, media, k, j := 0, int64(0), 0, 0
	for i, m := range msgs {
		for bi, b := range m.Blocks {
			if isAttachment(b) {
				a := atts[j]
				j++
				noted := false
				if a.ok && m.Role == coachd.RoleUser {
					k++
					noted = k <= cut
				}
				if dn, t, ok := a.cost(noted); ok {
					n, media = n+dn, media+t
					continue
				}
			} else if r, ok := results[[2]int{i, bi}]; ok {
				// The result's content but its attachments, then each
				// attachment as the API bills it (a text document's data is
				// its text).
				n += r.rest + 16
				for ; j < r.end; j++ {
					k++
					if dn, t, ok := atts[j].cost(k <= cut); ok {
						n, media = n+dn, media+t
					} else {
						n += atts[j].sent + 16
						d := docs[j]
						dense.bytes, dense.halves = dense.bytes+d.bytes, dense.halves+d.halves
					}
				}
				continue
			}
			n += blockLen(b)
			addBlockDense(&dense, b)
		}
	}
	return coachd.TokensOfBytes(n-dense.bytes) + dense.tokens() + media
}

// nestedResult is what historyTokens keeps of a tool result holding
// attachments: atts[:end] ends with them, and rest is the size of its
// other blocks.
type nestedResult struct{ end, rest int }

// blockLen is about the bytes a block sends, but for an attachment's.
func blockLen(b coachd.Block) int {
	return len(b.Text) + len(b.Thinking) + len(b.Input) + len(b.Content) + len(b.Source) + len(b.Name) + 16
}

// addBlockDense adds to d the text of the parts of b that blockLen counts
// that is not ASCII.
func addBlockDense(d *denseText, b coachd.Block) {
	addDense(d, b.Text)
	addDense(d, b.Thinking)
	addDense(d, b.Input)
	addDense(d, b.Content)
	addDense(d, b.Source)
	addDense(d, b.Name)
}

// sized is what historyTokens keeps of an attachment from its one read.
type sized struct {
	typ   string
	sent  int
	pages int32 // 32 bytes in all: atts grows as it did without it
	ok    bool
}

// cost is the bytes of text and the tokens a sends as, noted (outside
// the window) or as the API bills it; ok false for a text document sent,
// whose text counts as text.
func (a sized) cost(noted bool) (text int, tokens int64, ok bool) {
	if noted {
		return noteLen, 0, true
	}
	if _, t, ok := attachmentCost(a.typ, a.sent, int(a.pages), a.ok); ok {
		return 16, t, true
	}
	return 0, 0, false
}

// noteLen is about the length of the note sent for an attachment
// outside the window (limitAttachments).
const noteLen = 120

// turnCut returns the index of the first message of the keep-th turn
// from the end (a turn starts with a user message that answers no tool),
// or 0 when there are not more than keep turns.
func turnCut(msgs []*coachd.Message, keep int) int {
	seen := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if turnStart(msgs[i]) {
			if seen++; seen == keep {
				return i
			}
		}
	}
	return 0
}

func turnStart(m *coachd.Message) bool {
	if m.Role != coachd.RoleUser {
		return false
	}
	if _, ok := summaryOf(m); ok {
		return false
	}
	for _, b := range m.Blocks {
		if b.Type == coachd.BlockToolResult {
			return false
		}
	}
	return len(m.Blocks) > 0
}

// shortenResults returns m with its large text tool results cut.
func shortenResults(m *coachd.Message, over int) *coachd.Message {
	var blocks []coachd.Block
	for i, b := range m.Blocks {
		var s string
		if b.Type != coachd.BlockToolResult || json.Unmarshal(b.Content, &s) != nil || len(s) <= over {
			continue
		}
		if blocks == nil {
			blocks = append([]coachd.Block(nil), m.Blocks...)
		}
		kept := runeCut(s, shortenTo)
		nb := coachd.ToolResultBlock(b.ToolUseID, kept+fmt.Sprintf("\n[…shortened for this request: %d more characters; call the tool again for the full result]", len(s)-len(kept)), b.IsError)
		nb.Extra = b.Extra
		blocks[i] = nb
	}
	if blocks == nil {
		return m
	}
	c := *m
	c.Blocks = blocks
	return &c
}

// summarizeInstruction asks for the summary that replaces the oldest turns.
const summarizeInstruction = "Summarize our conversation so far for your own later reference, in under 300 words: " +
	"what you know about the user, what was decided or done (files and notes saved), what tools found, and open threads. " +
	"Plain prose; no greeting."

// The summary's text is sent between these.
const (
	summaryOpen  = "<conversation_summary>\n"
	summaryClose = "\n</conversation_summary>"
)

// compact runs before the turn's first round: when the history sent is
// past SummarizeAfter, the turns before the last KeepTurns are summarized
// by the model and the summary is stored. A failure is logged and the turn
// goes on uncompacted.
func (t *Turn) compact(ctx context.Context) {
	cfg := t.agent.Compaction.withDefaults()
	// The history as the turn's first request sends it, built for its
	// reservation already: each photo is not read again.
	view, tokens := t.sentView()
	if tokens <= cfg.SummarizeAfter {
		return
	}
	cut := turnCut(view, cfg.KeepTurns)
	if _, ok := summaryOf(view[max(cut-1, 0)]); cut == 0 || ok || view[cut-1].Seq == 0 {
		return // nothing but the last summary before the kept turns
	}
	if t.acknowledge() != nil {
		return // the turn fails at its call
	}
	old := append(append([]*coachd.Message(nil), view[:cut]...),
		&coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(summarizeInstruction)}})
	req := t.modelRequest()
	req.Messages, req.TailBlocks = History(old, t.tools.Truncations(t.agent.Tools)), 0
	noteBinaryAttachments(req.Messages)
	if len(req.System) > 1 {
		req.System = req.System[:1] // the stable prompt: its cache entry is read
	}
	// The turns summarized are sent this once (later requests send the
	// summary instead): a cache entry for them would never be read.
	req.NoHistoryCache = true
	req.ToolChoice = &coachd.ToolChoice{Type: "none"}
	req.MaxTokens, req.ThinkingBudget = summaryMaxTokens, 0
	if !t.summaryFits(ctx, req) {
		t.r.cfg.Logger.Info("compaction skipped: the summary does not fit the turn's reserve: max hold", "session", t.sess.ID)
		return
	}
	resp, err := t.summarize(ctx, req)
	text := ""
	if resp != nil {
		t.addUsage(req, resp)
		text = coachd.BlocksText(resp.Blocks)
	}
	if err != nil || text == "" {
		t.r.cfg.Logger.Warn("compaction: no summary; the history is sent whole", "session", t.sess.ID, "err", err)
		return
	}
	meta, _ := json.Marshal(summaryMeta{Kind: KindSummary, ThroughSeq: view[cut-1].Seq})
	msg := &coachd.Message{Role: coachd.RoleUser, Metadata: meta, Usage: &resp.Usage,
		Blocks: []coachd.Block{coachd.TextBlock(summaryOpen + text + summaryClose)}}
	wctx, done := persistCtx(ctx)
	defer done()
	if err := t.r.cfg.Store.AppendMessages(wctx, t.req.User.ID, t.sess.ID, []*coachd.Message{msg}); err != nil {
		t.r.cfg.Logger.Error("compaction: storing the summary", "session", t.sess.ID, "err", err)
		return
	}
	t.history = append(t.history, msg)
}

// summarize runs the summary call without streaming it to the client, on
// the model serving the turn's agent (its provider's, its account).
func (t *Turn) summarize(ctx context.Context, req *coachd.ModelRequest) (*coachd.ModelResponse, error) {
	s := t.model().Stream(ctx, req)
	defer s.Close()
	for s.Next() {
	}
	return s.Response(), s.Err()
}
