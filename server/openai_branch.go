package server

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// oaiMatch is the stored session an OpenAI request's conversation, before
// its new message, was found in by its fingerprint.
type oaiMatch struct {
	sessionID string
	// at is how many of the session's messages the fingerprint's
	// conversation held when it was saved; -1: not known.
	at int64
	// reply is what the client shows after the conversation of a
	// fingerprint saved without a reply (at is then its user message):
	// nothing (replyNone), or the words it kept of a reply (replyKept:
	// kept); replyWhole: the fingerprint holds the reply, at the turn's
	// end.
	reply int
	kept  string
	// shared: another session was saved with this conversation too (two
	// chats that opened alike): the request may be either's, and goes on
	// in a copy of it, never in the session, whose later messages may be
	// the other chat's.
	shared bool
}

const (
	replyWhole = iota
	replyNone
	replyKept
)

// findConversation finds the session whose conversation the messages
// before the request's last are.
func (s *Server) findConversation(ctx context.Context, userID string, req *oaiRequest) (oaiMatch, bool) {
	n := len(req.Messages)
	prev := req.Messages[:n-1]
	if id, at, shared, err := s.store.FindFingerprint(ctx, userID, fingerprint(req.Model, prev, nil)); err == nil {
		m := oaiMatch{sessionID: id, at: at, reply: replyWhole, shared: shared}
		if lastRole(prev) == "user" {
			m.reply = replyNone // a turn without a reply the client shows
		}
		return m, true
	}
	if n > 2 && req.Messages[n-2].Role == "assistant" {
		// A reply cut short (Stop) was remembered without it: what the
		// client kept of it only the client knows.
		if id, at, shared, err := s.store.FindFingerprint(ctx, userID, fingerprint(req.Model, req.Messages[:n-2], nil)); err == nil {
			kept, _ := req.Messages[n-2].text()
			return oaiMatch{sessionID: id, at: at, reply: replyKept, kept: kept, shared: shared}, true
		}
	}
	return oaiMatch{}, false
}

// triedIn is the session an earlier attempt of this very request went
// on in, when its turn failed before the model replied (a busy model's
// 503, which the SDKs retry by themselves), and the seq of the request's
// message there: the session the request's whole conversation was
// remembered with as that turn began, still ending on its message,
// unanswered (but for tool rounds). Copied again (or, for a
// conversation's first message, begun again), the request left that
// session behind, a question never answered. Nil when there is none.
func (s *Server) triedIn(ctx context.Context, userID string, req *oaiRequest, text string, files int) (*coachd.Session, int64) {
	id, at, _, err := s.store.FindFingerprint(ctx, userID, fingerprint(req.Model, req.Messages, nil))
	if err != nil || at < 1 {
		return nil, 0
	}
	sess, err := s.store.FindSession(ctx, userID, id)
	if err != nil || sess.Status != coachd.SessionActive || sess.Pending != nil ||
		s.resentAt(ctx, userID, sess, text, files) != at {
		return nil, 0
	}
	return sess, at
}

// holds is how many of sess's stored messages the client's conversation
// holds (-1: all, not known). A conversation without its last reply, or
// with some words of it, holds that turn's stored reply when it is the
// one the client saw: none, or cut short, for a client that shows none;
// one the kept words begin. Otherwise it is another conversation that
// opened the same way (its fingerprint names the latest session), and
// only the user's message is the client's.
func (s *Server) holds(ctx context.Context, userID string, sess *coachd.Session, m oaiMatch) (int64, error) {
	if m.at < 0 || m.reply == replyWhole || sess.MessageCount <= m.at {
		return m.at, nil
	}
	cursor := ""
	if m.at > 0 {
		cursor = strconv.FormatInt(m.at, 10) // seqs run 1..MessageCount
	}
	msgs, _, err := s.store.ListMessages(ctx, userID, sess.ID, coachd.Page{Cursor: cursor, Limit: 50})
	if err != nil {
		return 0, err
	}
	var k int64
	var text strings.Builder
	cut := false
	for _, msg := range msgs {
		if msg.Role == coachd.RoleUser && startsTurn(msg) {
			break
		}
		k++
		if msg.Role == coachd.RoleAssistant {
			text.WriteString(msg.Content)
			cut = cut || msg.Partial
		}
	}
	stored := strings.TrimSpace(text.String())
	if m.reply == replyNone && (stored == "" || cut) ||
		m.reply == replyKept && strings.HasPrefix(stored, strings.TrimSpace(m.kept)) {
		return m.at + k, nil
	}
	return m.at, nil
}

// startsTurn reports whether a user message is the user's own (text or
// attachments), not only the results of a turn's tools.
func startsTurn(m *coachd.Message) bool {
	for _, b := range m.Blocks {
		if b.Type != coachd.BlockToolResult {
			return true
		}
	}
	return false
}

// forkPause makes fork, which holds the first at messages of session
// src, wait on the call src waited on there: the one src waits on now
// (at is all of src), or an interactive call, or one that needed
// approval, whose question those end on and src's next message answered
// (the pending record is gone from src: rebuilt, with the round's
// results the answer stored). It returns the answer text gives that
// call, nil when none (a message then dismisses it, as in src), the
// message has files, or the fork ends on no paused call. An approved
// call that ran there is not run twice: text approving it again (a
// Regenerate of the reply after it) gives the fork that answer's stored
// results instead, and forkPause reports again: the turn makes the
// reply again from them (a Retry).
func (s *Server) forkPause(ctx context.Context, userID string, src *coachd.Session, fork string, at int64, text string, files int) (a *agent.Answer, again bool, err error) {
	p := src.Pending
	var answered *coachd.Message // src's message that answered p
	if p == nil || at != src.MessageCount {
		if p, answered, err = s.answeredPause(ctx, userID, src, at); p == nil || err != nil {
			return nil, false, err
		}
	}
	if files == 0 {
		a = textAnswer(p, text, s.clock.Now())
	}
	if a != nil && p.Kind == coachd.PendingApproval && answered != nil && approves(a) && ran(answered, p.ToolUseID) {
		again := &coachd.Message{Role: coachd.RoleUser, Content: answered.Content, Blocks: answered.Blocks}
		return nil, true, s.store.AppendMessages(ctx, userID, fork, []*coachd.Message{again})
	}
	if _, err := s.store.UpdateSession(ctx, userID, fork, coachd.SessionUpdate{SetPending: true, Pending: p}); err != nil {
		return nil, false, err
	}
	return a, false, nil
}

// answeredPause is the pending record of the call session src's message
// at paused on, when its next message answered it, and that message; nil
// otherwise. The call is the round's one interactive call answered (not
// refused: another interactive or approval call of the round was), or
// its one call that needed approval and ran or was denied.
func (s *Server) answeredPause(ctx context.Context, userID string, src *coachd.Session, at int64) (*coachd.PendingInteraction, *coachd.Message, error) {
	if at < 1 || s.runner == nil {
		return nil, nil, nil
	}
	cursor := ""
	if at > 1 {
		cursor = strconv.FormatInt(at-1, 10) // seqs run 1..MessageCount
	}
	msgs, _, err := s.store.ListMessages(ctx, userID, src.ID, coachd.Page{Cursor: cursor, Limit: 2})
	if err != nil || len(msgs) < 2 || msgs[0].Role != coachd.RoleAssistant || msgs[1].Role != coachd.RoleUser {
		return nil, nil, err
	}
	// The round's results as the pending record held them, the paused
	// call's among them.
	var held []coachd.Block
	answered, decided := map[string]bool{}, map[string]bool{}
	for _, b := range msgs[1].Blocks {
		if b.Type == coachd.BlockToolResult {
			held = append(held, b)
			answered[b.ToolUseID] = !b.IsError
			decided[b.ToolUseID] = !b.IsError || denied(b)
		}
	}
	ag, _ := s.runner.Agent(src.Agent)
	tools := s.runner.Toolset()
	var p *coachd.PendingInteraction
	for _, b := range msgs[0].Blocks {
		if b.Type != coachd.BlockToolUse {
			continue
		}
		var kind, reason string
		if tools.Category(b.Name) == coachd.ToolInteractive {
			if !answered[b.ID] {
				continue
			}
		} else if why, ok := approvalOf(ag, tools, b); ok && decided[b.ID] {
			kind, reason = coachd.PendingApproval, why
		} else {
			continue
		}
		if p != nil {
			return nil, nil, nil // not one paused call: leave it as it is
		}
		p = &coachd.PendingInteraction{ToolUseID: b.ID, Name: b.Name, Input: b.Input, Held: held, Kind: kind, Reason: reason,
			ExpiresAt: s.clock.Now().Add(s.runner.InteractionTTL())}
	}
	return p, msgs[1], nil
}

// approvalOf says why the stored call b waited for approval, as the
// session's agent judges its calls; false when it did not, or the agent
// or tool is gone.
func approvalOf(ag *agent.Agent, tools *agent.Toolset, b coachd.Block) (string, bool) {
	tool, ok := tools.Get(b.Name)
	if ag == nil || !ok {
		return "", false
	}
	def := tool.Definition()
	def.Name = b.Name
	return ag.ApprovalReason(def, b.Input)
}

// denied reports whether a stored result is a call's denial.
func denied(b coachd.Block) bool {
	return b.IsError && strings.HasPrefix(b.ResultText(), agent.DeniedText)
}

// approves reports whether an answer approves the call.
func approves(a *agent.Answer) bool {
	var d struct{ Approved bool }
	return json.Unmarshal(a.Content, &d) == nil && d.Approved
}

// ran reports whether m, a paused round's answer, holds a result of the
// call id that ran: not denied.
func ran(m *coachd.Message, id string) bool {
	for _, b := range m.Blocks {
		if b.Type == coachd.BlockToolResult && b.ToolUseID == id {
			return !denied(b)
		}
	}
	return false
}
