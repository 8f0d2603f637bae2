package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// Voice is an agent's realtime voice settings (the agent file's voice:
// mapping); empty fields take the server's defaults.
type Voice struct {
	Voice              string `yaml:"voice" json:"voice,omitempty"`
	Model              string `yaml:"model" json:"model,omitempty"`
	TranscriptionModel string `yaml:"transcription_model" json:"transcription_model,omitempty"`
	// Instructions are added to the system prompt for voice only ("keep
	// spoken replies to two sentences").
	Instructions string `yaml:"instructions" json:"instructions,omitempty"`
}

var voiceKeys = yamlKeys(Voice{})

// MaxVoiceInstructions bounds an agent's voice instructions.
const MaxVoiceInstructions = 4000

// parseVoice checks the agent file's voice mapping.
func parseVoice(fm *frontMatter, v *Voice) *Voice {
	if v == nil {
		return nil
	}
	fm.checkKeys(fm.node("voice"), voiceKeys)
	if v.Voice != "" && !coachd.ValidVoice(v.Voice) {
		fm.bad(fm.line("voice", "voice"), fmt.Sprintf("voice.voice %q is not a known voice (%s)", v.Voice, strings.Join(coachd.Voices, ", ")))
	}
	if v.Model != "" && !coachd.ValidVoiceModel(v.Model) {
		fm.bad(fm.line("voice", "model"), fmt.Sprintf("voice.model %q is not a model name (like gpt-realtime)", v.Model))
	}
	if v.TranscriptionModel != "" && !coachd.ValidVoiceModel(v.TranscriptionModel) {
		fm.bad(fm.line("voice", "transcription_model"), fmt.Sprintf("voice.transcription_model %q is not a model name (like whisper-1)", v.TranscriptionModel))
	}
	v.Instructions = strings.TrimSpace(v.Instructions)
	if utf8.RuneCountInString(v.Instructions) > MaxVoiceInstructions {
		fm.bad(fm.line("voice", "instructions"), fmt.Sprintf("voice.instructions must be at most %d characters", MaxVoiceInstructions))
	}
	return v
}

// VoiceInstructions is what the agent is told in a voice session: its
// system prompt, then its voice instructions.
func (a *Agent) VoiceInstructions() string {
	if a.Voice == nil || a.Voice.Instructions == "" {
		return a.Prompt
	}
	return a.Prompt + "\n\n" + a.Voice.Instructions
}

// maxVoiceToolNames bounds how many of the agent's tools VoiceNoTools
// names.
const maxVoiceToolNames = 12

// VoiceNoTools tells a realtime voice coach that it has none of the
// agent's tools: the session is minted without them (the provider runs
// the call, and no tool call would come back to coachd to be run), while
// the agent's prompt may tell it to use them ("list_notes to recall
// it"). A coach not told so promises notes it cannot save and lookups it
// cannot make.
func (a *Agent) VoiceNoTools() string {
	names := a.Tools[:min(len(a.Tools), maxVoiceToolNames)]
	which := "any tool"
	if len(names) > 0 {
		which += " (not " + strings.Join(names, ", ")
		if len(names) < len(a.Tools) {
			which += ", …"
		}
		which += ")"
	}
	return "<voice_call>\nThis is a live voice call, and in it you have no tools: you cannot call " + which +
		", so do not offer to, and do not say you saved, looked up or changed anything. Answer from what you are told here; " +
		"what is said in the call is kept in the conversation.\n</voice_call>"
}

// MaxTranscriptChars bounds one transcript message.
const MaxTranscriptChars = MaxMessageChars

// transcriptWait is how long a transcript queues for the session's turn
// slot: another transcript holds it for milliseconds (a driver's line and
// the coach's finish together; a second device), a turn for seconds.
const transcriptWait = 2 * time.Second

// AppendTranscript stores a message a voice client heard or spoke in the
// user's session, with metadata source "voice", so that the text coach
// sees it on the next turn. It takes the session's turn slot for the
// write, queueing up to transcriptWait behind another transcript: while a
// turn runs on the session it is ETURNINPROGRESS, never a message slipped
// into the middle of a round. count, when not nil, counts the transcript
// against the user's limits once the session takes it (a refused one is
// not counted, as a refused turn is not); its error refuses it. With
// once.Key, a transcript sent again under the key is answered with the
// message first stored, and stores and counts nothing.
func (r *Runner) AppendTranscript(ctx context.Context, u *coachd.User, sessionID string, role coachd.Role, text string, once coachd.Once, count func(context.Context) error) (*coachd.Message, error) {
	if role != coachd.RoleUser && role != coachd.RoleAssistant {
		return nil, coachd.Invalid(coachd.FieldError{Field: "role", Message: "must be user or assistant", Code: "enum"})
	}
	text = strings.TrimSpace(text)
	if coachd.Blank(text) || utf8.RuneCountInString(text) > MaxTranscriptChars {
		return nil, coachd.Invalid(coachd.FieldError{Field: "content", Message: fmt.Sprintf("must be 1 to %d characters", MaxTranscriptChars), Code: "length"})
	}
	// A retry is answered as the first was, even while a turn runs now.
	if prev, err := r.findOnce(ctx, u, once); err != nil || prev != nil {
		return prev, err
	}
	sess, err := r.cfg.Store.FindSession(ctx, u.ID, sessionID)
	if err != nil {
		return nil, err
	}
	// An internal agent's session (a review's) takes no words from a user
	// key, as a chat in it would not.
	if ag, ok := r.cfg.Agents(sess.Agent); ok && ag.Internal {
		_, err := r.agentFor(sess.Agent, false)
		return nil, err
	}
	release, err := r.guard.acquireFor(ctx, u.ID, sess.ID, transcriptWait, r.cfg.TurnLease)
	if err != nil {
		return nil, err
	}
	defer release()
	// Read again under the slot: a turn may have ended just before.
	if sess, err = r.cfg.Store.FindSession(ctx, u.ID, sessionID); err != nil {
		return nil, err
	}
	switch {
	case sess.Status != coachd.SessionActive:
		return nil, coachd.Errorf(coachd.ECONFLICT, "session is %s; start a new session", sess.Status)
	case sess.Pending != nil:
		return nil, coachd.Errorf(coachd.ECONFLICT, "the session waits for an answer to %s; answer it or send a message first", sess.Pending.Name)
	}
	// Again under the slot: a copy sent at the same time was stored
	// while this one queued for it.
	if prev, err := r.findOnce(ctx, u, once); err != nil || prev != nil {
		return prev, err
	}
	if count != nil {
		if err := count(ctx); err != nil {
			return nil, err
		}
	}
	meta, _ := json.Marshal(map[string]string{"source": "voice"})
	m := &coachd.Message{Role: role, Content: text, Blocks: []coachd.Block{coachd.TextBlock(text)}, Metadata: meta}
	msgs := []*coachd.Message{m}
	if role == coachd.RoleAssistant && sess.MessageCount == 0 {
		// A history starts with the user: a coach that greets first in a
		// new session would be dropped from it, so a marker goes first.
		// The session's count (read above under the slot) says it is
		// empty without reading a message, which may hold megabytes of
		// attachments.
		msgs = []*coachd.Message{{Role: coachd.RoleUser, Content: VoiceStartText,
			Blocks: []coachd.Block{coachd.TextBlock(VoiceStartText)}, Metadata: meta}, m}
	}
	prev, err := r.cfg.Store.AppendOnce(ctx, u.ID, sess.ID, msgs, once)
	if err != nil || prev != nil {
		return prev, err
	}
	return m, nil
}

// findOnce is the transcript stored under once.Key, nil without a key.
func (r *Runner) findOnce(ctx context.Context, u *coachd.User, once coachd.Once) (*coachd.Message, error) {
	if once.Key == "" {
		return nil, nil
	}
	return r.cfg.Store.FindOnce(ctx, u.ID, once)
}

// VoiceStartText is the user message stored before a coach's first words
// in a session that starts by voice.
const VoiceStartText = "(voice conversation started)"

// Bounds of what a voice coach is told at mint besides its instructions
// (VoiceContext), in bytes.
const (
	// MaxVoiceContext bounds the whole context, tags included.
	MaxVoiceContext = voiceNotesBytes + voiceHistoryBytes + 512
	// voiceNotesBytes is the notes' share, as the text coach's notes
	// section; voiceHistoryBytes the conversation's.
	voiceNotesBytes   = 4000
	voiceHistoryBytes = 8000
	// voiceLineBytes bounds one message's text in the conversation.
	voiceLineBytes = 1500
	// voiceHistoryMessages is how many of the session's last messages are
	// read, without their attachments' data: enough for the few spoken
	// lines that fit.
	voiceHistoryMessages = 24
)

// VoiceContext is what a realtime voice coach is told after its
// instructions, so that it knows what the text coach knows: the user's
// notes, pinned and most important first (it has no tools to list
// them), and the end of the session's conversation, so that a call
// started in a conversation continues it. Both are read for u only,
// sanitised as the text coach's context is, and bounded together by
// MaxVoiceContext; sessionID "" (a new session) has no conversation. It
// is "" when there is nothing to tell.
func (r *Runner) VoiceContext(ctx context.Context, u *coachd.User, sessionID string) (string, error) {
	notes, _, err := r.cfg.Store.ListNotes(ctx, u.ID, coachd.NoteFilter{}, coachd.Page{Limit: 50})
	if err != nil {
		return "", err
	}
	var msgs []*coachd.Message
	if sessionID != "" {
		if msgs, _, err = r.cfg.Store.ListMessages(ctx, u.ID, sessionID, coachd.Page{Before: coachd.BeforeEnd, Limit: voiceHistoryMessages, OmitAttachments: true}); err != nil {
			return "", err
		}
	}
	var parts []string
	if s := noteList(notes, voiceNotesBytes, newReader(voiceNotesBytes, voiceNotesBytes)); s != "" {
		// A note's title and text each fill the room left: cut the list
		// to its share as the text coach's notes section is.
		parts = append(parts, "<notes>\nWhat you know about the user, from your notes:\n"+strings.TrimRight(clip(s, voiceNotesBytes, 0), "\n")+"\n</notes>")
	}
	if s := spokenHistory(msgs); s != "" {
		parts = append(parts, "<conversation_so_far>\nThis call continues the conversation below (newest last); do not repeat it.\n"+s+"</conversation_so_far>")
	}
	return strings.Join(parts, "\n\n"), nil
}

// spokenHistory is the text of the newest of msgs (in seq order), one
// line each, the newest kept whole up to voiceLineBytes and older lines
// while voiceHistoryBytes lasts; tool calls, results and attachments are
// left out, and a compaction's summary is told as one.
func spokenHistory(msgs []*coachd.Message) string {
	var lines []string
	room := voiceHistoryBytes
	for i := len(msgs) - 1; i >= 0 && room > 0; i-- {
		m := msgs[i]
		var text []string
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockText && !coachd.Blank(b.Text) {
				text = append(text, b.Text)
			}
		}
		t := strings.Join(text, " ")
		if len(m.Blocks) == 0 {
			t = m.Content
		}
		if t == VoiceStartText || coachd.Blank(t) {
			continue
		}
		who := "User"
		if m.Role == coachd.RoleAssistant {
			who = "Coach"
		}
		if _, ok := summaryOf(m); ok {
			// A compaction's summary is stored as a user message: the
			// coach's words about earlier turns, not the user's.
			who = "Summary of earlier turns"
			t = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(t), strings.TrimSpace(summaryOpen)), strings.TrimSpace(summaryClose))
		}
		rd := &reader{left: 2 * voiceLineBytes}
		line := who + ": " + oneLine(rd.text(t, min(voiceLineBytes, room))) + "\n"
		if len(line) > room {
			break
		}
		room -= len(line)
		lines = append(lines, line)
	}
	slices.Reverse(lines)
	return strings.Join(lines, "")
}
