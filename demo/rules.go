package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// Disclaimer opens the first reply of every session.
const Disclaimer = "This is the offline demo model: a few fixed rules, not an LLM. " +
	"To talk with Claude, set ANTHROPIC_API_KEY and restart coachd."

// Tools the demo knows how to call, when the request offers them.
const (
	toolSaveNote        = "save_note"
	toolShowOptions     = "show_options"
	toolCompleteSession = "complete_session"
	toolShowPulseCheck  = "show_pulse_check"
)

// reply is a planned answer.
type reply struct {
	key         string // derived from the conversation; names IDs
	blocks      []coachd.Block
	stopReason  string
	inputTokens int64
}

// plan decides the whole reply to req. It depends on nothing but req, so
// the same request always gets the same reply.
func plan(req *coachd.ModelRequest) reply {
	r := reply{key: conversationKey(req), inputTokens: tokens(requestChars(req)), stopReason: coachd.StopEndTurn}
	offered := map[string]bool{}
	if req.ToolChoice == nil || req.ToolChoice.Type != "none" {
		for _, t := range req.Tools {
			offered[t.Name] = true
		}
	}

	firstReply := true
	var last *coachd.ModelMessage // the user's latest message
	for i, m := range req.Messages {
		switch m.Role {
		case coachd.RoleAssistant:
			firstReply = false
		case coachd.RoleUser:
			last = &req.Messages[i]
		}
	}
	var said string
	var results []coachd.Block
	if last != nil {
		blocks := last.Blocks
		if last == &req.Messages[len(req.Messages)-1] && req.TailBlocks > 0 && req.TailBlocks <= len(blocks) {
			blocks = blocks[:len(blocks)-req.TailBlocks] // the turn's context, not the user's words
		}
		said = strings.TrimSpace(coachd.BlocksText(blocks))
		for _, b := range blocks {
			if b.Type == coachd.BlockToolResult {
				results = append(results, b)
			}
		}
	}

	var text string
	var call *coachd.Block
	if len(results) > 0 && said == "" {
		text = acknowledge(results, req.Messages)
	} else {
		text, call = respond(said, offered, req.Messages)
	}
	if last != nil {
		if ack := seen(last.Blocks); ack != "" && said == "" && len(results) == 0 {
			text = ack + " What would you like me to look at?"
		} else if ack != "" {
			text = ack + " " + text
		}
	}
	if firstReply {
		text = Disclaimer + "\n\n" + text
	}
	r.blocks = append(r.blocks, coachd.TextBlock(text))
	if call != nil {
		call.ID = "toolu_demo_" + r.key
		r.blocks = append(r.blocks, *call)
		r.stopReason = coachd.StopToolUse
	}
	return r
}

// respond answers what the user said: save a note, offer options, close
// the session, or reflect it back. A rule that needs a tool applies only
// when the request offers that tool.
func respond(said string, offered map[string]bool, history []coachd.ModelMessage) (string, *coachd.Block) {
	w := newWords(said)
	switch {
	case said == "":
		return "I'm here. What's on your mind today?", nil
	case w.greeting():
		return "Hi! Good to see you. What would you like to work on today?", nil
	case offered[toolSaveNote] && w.remember() >= 0:
		subject := w.from(w.remember())
		if subject == "" {
			subject = said
		}
		return "Got it — I'll make a note of that.", toolUse(toolSaveNote, saveNoteInput{
			NoteType:   "preference",
			Title:      limit(title(subject), 200),
			Content:    limit(said, 5000),
			Importance: 60,
		})
	case offered[toolShowOptions] && w.asksOptions():
		return "Here are a few directions we could take. Pick the one that fits best.", toolUse(toolShowOptions, showOptionsInput{
			Prompt: "Which of these feels right for today?",
			Options: []string{
				"Pick one small win for today",
				"Talk through what's in my way",
				"Plan the rest of my week",
			},
		})
	case offered[toolCompleteSession] && w.goodbye():
		return "Thanks for the conversation — I'll wrap up this session. Take care!", toolUse(toolCompleteSession, completeSessionInput{
			Type:    "session",
			Summary: summary(history),
		})
	}
	return reflect(said), nil
}

// acknowledge answers a message that holds only tool results.
func acknowledge(results []coachd.Block, history []coachd.ModelMessage) string {
	var parts []string
	for _, res := range results {
		name := toolName(history, res.ToolUseID)
		content := clip(strings.TrimSpace(res.ResultText()), 12)
		switch {
		case res.IsError && name != "":
			parts = append(parts, fmt.Sprintf("Hmm, %s didn't work (%s). Let's carry on without it.", name, content))
		case res.IsError:
			parts = append(parts, fmt.Sprintf("That didn't work (%s). Let's carry on without it.", content))
		case name == toolSaveNote:
			parts = append(parts, "Saved — I'll remember that.")
		case name == toolShowOptions && content == "":
			parts = append(parts, "No problem, we can choose later. What's on your mind?")
		case name == toolShowOptions:
			parts = append(parts, fmt.Sprintf("You picked “%s” — good call. Let's make it concrete: what's the very first step, and when will you take it?", content))
		case name == toolShowPulseCheck:
			parts = append(parts, "Thanks for checking in. What stands out to you about how you're feeling right now?")
		case name == toolCompleteSession:
			parts = append(parts, "That's a wrap for this session. Nice work today — see you next time.")
		case name != "":
			parts = append(parts, fmt.Sprintf("Done — %s finished.", name))
		default:
			parts = append(parts, "Done.")
		}
	}
	return strings.Join(parts, " ")
}

// toolName finds the name of the tool_use that id answers.
func toolName(history []coachd.ModelMessage, id string) string {
	for i := len(history) - 1; i >= 0; i-- {
		for _, b := range history[i].Blocks {
			if b.Type == coachd.BlockToolUse && b.ID == id {
				return b.Name
			}
		}
	}
	return ""
}

// reflect mirrors the user's words back, coach-like: a reflection, a
// nudge and an open question, picked by the words so the same words get
// the same answer.
func reflect(said string) string {
	mirrored := clip(mirror(strings.TrimRight(said, ".!?… ")), 16)
	h := hash(said)
	if strings.HasSuffix(said, "?") {
		return fmt.Sprintf("That's a good question: “%s?” Before I share ideas, what's your own first instinct?", mirrored)
	}
	if !strings.HasSuffix(mirrored, "…") {
		mirrored += "."
	}
	openers := []string{
		"So what I'm hearing is: %s",
		"Let me reflect that back: %s",
		"Thanks for sharing that — %s",
	}
	nudges := []string{
		"That's worth slowing down for.",
		"There's something important in that.",
		"It makes sense that this is on your mind.",
	}
	questions := []string{
		"What would one small step in that direction look like this week?",
		"What feels most important about it to you right now?",
		"What's gotten in the way so far?",
	}
	return fmt.Sprintf(openers[h%3], mirrored) + " " + nudges[(h/3)%3] + " " + questions[(h/9)%3]
}

// mirror turns first person into second person and second into first:
// "I need my sleep" → "you need your sleep", "What do you remember about
// me?" → "What do I remember about you?" (the coach is "you").
func mirror(s string) string {
	swap := map[string]string{
		"i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself",
		"am": "are", "i'm": "you're", "im": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd",
		"we": "you", "us": "you", "our": "your",
		"your": "my", "yours": "mine", "yourself": "myself",
		"you're": "I'm", "youre": "I'm", "you've": "I've", "you'll": "I'll", "you'd": "I'd",
	}
	fields := strings.Fields(s)
	words := make([]string, len(fields)) // the words as said, for their neighbours
	for i, f := range fields {
		words[i] = strings.ToLower(strings.ReplaceAll(strings.TrimFunc(f, isPunct), "’", "'"))
	}
	at := func(i int) string {
		if i < 0 || i >= len(words) {
			return ""
		}
		return words[i]
	}
	for i, f := range fields {
		core := strings.TrimFunc(f, isPunct)
		to, ok := swap[words[i]]
		switch words[i] {
		case "you":
			// The subject first, after an auxiliary ("do you", "can
			// you") or before one ("you are", "you can"); the object
			// anywhere else.
			to, ok = "me", true
			if i == 0 || auxiliaries[at(i-1)] || (auxiliaries[at(i+1)] && at(i+1) != "that") {
				to = "I"
			}
		case "are":
			to, ok = "am", at(i-1) == "you" || at(i+1) == "you"
		}
		if ok {
			fields[i] = strings.Replace(f, core, to, 1)
		}
	}
	return strings.Join(fields, " ")
}

// auxiliaries are the verbs a question puts before its subject.
var auxiliaries = map[string]bool{
	"do": true, "does": true, "did": true, "can": true, "could": true, "will": true, "would": true,
	"should": true, "shall": true, "may": true, "might": true, "must": true, "are": true, "were": true,
	"have": true, "had": true, "if": true, "when": true, "that": true,
}

// summary describes the session for complete_session.
func summary(history []coachd.ModelMessage) string {
	var first string
	n := 0
	for _, m := range history {
		if m.Role != coachd.RoleUser {
			continue
		}
		if t := strings.TrimSpace(coachd.BlocksText(m.Blocks)); t != "" {
			if first == "" {
				first = t
			}
			n++
		}
	}
	return fmt.Sprintf("Demo session: %d message(s) from the user, starting with “%s”.", n, limit(clip(first, 10), 200))
}

// title makes a short note title from the subject's first words.
func title(subject string) string {
	t := strings.TrimRightFunc(clip(subject, 6), func(r rune) bool { return isPunct(r) || r == '…' })
	r, size := utf8.DecodeRuneInString(t)
	return string(unicode.ToUpper(r)) + t[size:]
}

// Tool inputs, as structs so the JSON keys keep their order.
type saveNoteInput struct {
	NoteType   string `json:"note_type"`
	Title      string `json:"title"`
	Content    string `json:"content"`
	Importance int    `json:"importance"`
}

type showOptionsInput struct {
	Prompt  string   `json:"prompt"`
	Options []string `json:"options"`
}

type completeSessionInput struct {
	Type    string `json:"type"`
	Summary string `json:"summary"`
}

func toolUse(name string, input any) *coachd.Block {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(input) // plain structs of strings and ints
	return &coachd.Block{Type: coachd.BlockToolUse, Name: name, Input: bytes.TrimSpace(buf.Bytes())}
}

// words is what the user said, split into words, with a lower-case,
// punctuation-free form for matching.
type words struct {
	orig, norm []string
}

func newWords(s string) words {
	var w words
	for _, f := range strings.Fields(s) {
		n := strings.ToLower(strings.ReplaceAll(strings.TrimFunc(f, isPunct), "’", "'"))
		w.orig = append(w.orig, f)
		w.norm = append(w.norm, n)
	}
	return w
}

// at reports whether the words from i on start with phrase.
func (w words) at(i int, phrase ...string) bool {
	if i+len(phrase) > len(w.norm) {
		return false
	}
	for k, p := range phrase {
		if w.norm[i+k] != p {
			return false
		}
	}
	return true
}

// has reports whether phrase occurs anywhere.
func (w words) has(phrase ...string) bool {
	for i := range w.norm {
		if w.at(i, phrase...) {
			return true
		}
	}
	return false
}

// from joins the original words from i on.
func (w words) from(i int) string { return strings.Join(w.orig[i:], " ") }

// remember returns where the thing to remember starts when the message is
// a request to remember something ("please remember that …", "note that
// …", "make a note: …"), or -1.
func (w words) remember() int {
	i := 0
	for i < len(w.norm) && politeness[w.norm[i]] {
		i++
	}
	triggers := [][]string{
		{"remember"}, {"note", "that"}, {"make", "a", "note"}, {"take", "a", "note"},
		{"don't", "forget"}, {"dont", "forget"},
	}
	n := 0
	for _, t := range triggers {
		if w.at(i, t...) {
			n = len(t)
			break
		}
	}
	if n == 0 {
		return -1
	}
	i += n
	for i < len(w.norm) && (w.norm[i] == "that" || w.norm[i] == "of" || w.norm[i] == "about" || w.norm[i] == "") {
		i++
	}
	return i
}

var politeness = map[string]bool{
	"please": true, "can": true, "could": true, "would": true, "will": true, "you": true,
	"hey": true, "hi": true, "coach": true, "ok": true, "okay": true, "so": true, "also": true, "and": true,
}

func (w words) asksOptions() bool {
	for _, n := range w.norm {
		switch n {
		case "option", "options", "choice", "choices", "suggestion", "suggestions":
			return true
		}
	}
	return w.has("what", "should", "i")
}

// greeting reports a bare hello ("hi", "hello coach!").
func (w words) greeting() bool {
	if len(w.norm) == 0 || len(w.norm) > 3 {
		return false
	}
	switch w.norm[0] {
	case "hi", "hello", "hey", "hiya", "morning", "yo":
		return true
	}
	return w.at(0, "good", "morning") || w.at(0, "good", "evening") || w.at(0, "good", "afternoon")
}

func (w words) goodbye() bool {
	for _, n := range w.norm {
		switch n {
		case "bye", "goodbye", "bye-bye", "farewell":
			return true
		}
	}
	return w.has("that's", "all") || w.has("thats", "all") || w.has("that", "is", "all") ||
		w.has("see", "you") || w.has("good", "night")
}

func isPunct(r rune) bool { return unicode.IsPunct(r) && r != '\'' && r != '’' }

// clip keeps the first n words of s, marking a cut with "…".
func clip(s string, n int) string {
	f := strings.Fields(s)
	if len(f) <= n {
		return strings.Join(f, " ")
	}
	return strings.Join(f[:n], " ") + "…"
}

// limit keeps at most n runes of s, so tool inputs stay within the
// built-in tools' schema limits.
func limit(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// conversationKey names a request's IDs: the same conversation gives the
// same IDs, a longer one new IDs.
func conversationKey(req *coachd.ModelRequest) string {
	raw, _ := json.Marshal(req.Messages) // blocks without a type hash as empty
	return fmt.Sprintf("%012x", hash(string(raw))>>16)
}

// requestChars is the size of what the model would read: system prompt,
// messages and tool definitions.
func requestChars(req *coachd.ModelRequest) int {
	n := utf8.RuneCountInString(coachd.BlocksText(req.System))
	raw, _ := json.Marshal(req.Messages)
	data, instead := mediaChars(req.Messages)
	n += utf8.RuneCount(raw) - data + instead
	for _, t := range req.Tools {
		n += utf8.RuneCountInString(t.Name) + utf8.RuneCountInString(t.Description) + utf8.RuneCount(t.InputSchema)
	}
	return n
}
