package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// The body the AI SDK's useChat sends (DefaultChatTransport) to
// POST /v1/chat/stream?protocol=ai-sdk: {id, messages, trigger,
// messageId}. id names the chat, which is one coachd session of the user
// (made on first sight); the stored history is the truth, so only the last
// message is read: a user message is the new turn (its text parts, and
// its file parts with data URLs as attachments), an assistant message
// whose paused tool got its output (addToolResult), or its approval
// (addToolApprovalResponse), answers the pause. The earlier messages are
// counted: an edit or a Regenerate goes on from where the chat is.

type uiPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	ToolCallID string          `json:"toolCallId"`
	State      string          `json:"state"`
	Output     json.RawMessage `json:"output"`
	ErrorText  string          `json:"errorText"` // state output-error
	// A file part: what useChat makes of the files a user attaches.
	MediaType string `json:"mediaType"`
	URL       string `json:"url"`
	Filename  string `json:"filename"`
	// Approval is what addToolApprovalResponse sets (approval-responded).
	Approval *struct {
		Approved bool   `json:"approved"`
		Reason   string `json:"reason,omitempty"`
	} `json:"approval"`
}

type uiMessage struct {
	ID    string   `json:"id"`
	Role  string   `json:"role"`
	Parts []uiPart `json:"parts"`
}

type uiChatRequest struct {
	ID       string      `json:"id"`
	Messages []uiMessage `json:"messages"`
	Trigger  string      `json:"trigger"`
	Agent    string      `json:"agent"`
	// MessageID names the user message sendMessage edited (the chat
	// after it dropped), or the message regenerate() answers again.
	MessageID string `json:"messageId"`
	// users counts the user messages before the last (decoded ones),
	// earlier all the messages before it.
	users, earlier int
}

// errUIBody is the answer to a body that is not useChat's.
var errUIBody = coachd.Invalid(coachd.FieldError{Message: "the body must be useChat's JSON {id, messages, trigger}", Code: "json"})

// decodeUIChatRequest reads useChat's body as it arrives, one message at a
// time (decodeByMessage), keeping the last message only: useChat resends
// the whole chat, files too, and coachd reads only its newest message.
// req.Messages holds that one, or none.
func decodeUIChatRequest(r *http.Request, req *uiChatRequest) error {
	return decodeByMessage(r, req, errUIBody,
		func() { req.Messages, req.users, req.earlier = req.Messages[:0], 0, 0 },
		func(at jsontext.Pointer, msg []byte) error {
			var m uiMessage
			if err := foreignUnmarshal(at, msg, &m, errUIBody); err != nil {
				return err
			}
			if len(req.Messages) == 1 {
				req.earlier++
				if req.Messages[0].Role == "user" {
					req.users++
				}
			}
			req.Messages = append(req.Messages[:0], m)
			return nil
		})
}

// chatKey is the fingerprint that maps a useChat id to its session.
func chatKey(id string) string { return "ai-sdk-chat:" + id }

// chatFromKey is the fingerprint that says, for a chat that went on in a
// new session (the coach completed the one before), how many of the
// chat's user messages came before that session's first: its message
// count, for the session it names (a fork of it too), since useChat
// still sends the whole chat, and an edit or a Regenerate is found by
// counting its user messages against the session's.
func chatFromKey(id string) string { return "ai-sdk-chat-from:" + id }

// chatFrom is how many of chat's user messages came before its session
// id's first (chatFromKey); 0 when it holds them all.
func (s *Server) chatFrom(ctx context.Context, userID, chat, id string) (int, error) {
	from, n, _, err := s.store.FindFingerprint(ctx, userID, chatFromKey(chat))
	switch {
	case coachd.ErrorCode(err) == coachd.ENOTFOUND:
		return 0, nil
	case err != nil:
		return 0, err
	case from != id || n < 0:
		return 0, nil // an earlier session's
	}
	return int(n), nil
}

// prepareUIChatTurn decodes useChat's body and prepares its turn. When
// the turn goes on from a paused tool, the id of the assistant message
// the client sent is the turn's Continues: the stream's start chunk, a
// resumed one's too, must carry it, since useChat continues the message
// of that id and adds a message of any other beside it.
func (s *Server) prepareUIChatTurn(r *http.Request) (t *agent.Turn, err error) {
	if s.runner == nil {
		return nil, coachd.Errorf(coachd.EAPI, "this server has no model configured")
	}
	var req uiChatRequest
	if err := decodeUIChatRequest(r, &req); err != nil {
		return nil, err
	}
	bad := func(field, msg, code string) error {
		return coachd.Invalid(coachd.FieldError{Field: field, Message: msg, Code: code})
	}
	switch {
	case req.ID == "" || len(req.ID) > 200:
		return nil, bad("id", "must be the chat's id, 1 to 200 characters", "length")
	case req.Trigger != "" && req.Trigger != "submit-message" && req.Trigger != "regenerate-message":
		return nil, bad("trigger", "must be submit-message or regenerate-message", "enum")
	case len(req.Messages) == 0:
		return nil, bad("messages", "must hold the new message", "required")
	}
	u := UserFrom(r.Context())
	// handleChatStream, its one caller, waits for the admission (Behind).
	tr := agent.TurnRequest{User: u, Agent: req.Agent, Behind: true}
	from := 0 // the chat's user messages before its session's first
	if id, _, _, err := s.store.FindFingerprint(r.Context(), u.ID, chatKey(req.ID)); err == nil {
		tr.SessionID = id
		if from, err = s.chatFrom(r.Context(), u.ID, req.ID, id); err != nil {
			return nil, err
		}
	} else if coachd.ErrorCode(err) != coachd.ENOTFOUND {
		return nil, err
	}
	known := tr.SessionID
	last := req.Messages[len(req.Messages)-1]
	if known != "" && last.Role == "user" && (req.Trigger == "regenerate-message" || req.MessageID != "" || req.earlier > 0) {
		// An edited message (sendMessage with its messageId, or the
		// app's setMessages before a sendMessage without one) or a
		// Regenerate: the chat may go on from an earlier point than its
		// session reached. A body of the last message alone
		// (prepareSendMessagesRequest) is the chat's next.
		if tr.SessionID, err = s.uiBranch(r.Context(), u.ID, known, max(req.users-from, 0), req.Trigger == "regenerate-message"); err != nil {
			return nil, orNotFound(err, "session")
		}
	}
	switch {
	case req.Trigger == "regenerate-message":
		// regenerate(), useChat's Retry after an error: the chat's turn
		// that failed before the model answered runs again on its stored
		// message (one that has its reply does in a fork: uiBranch).
		if tr.SessionID == "" {
			return nil, coachd.Errorf(coachd.ECONFLICT, "nothing to regenerate: this chat has no turn yet")
		}
		tr.Retry, tr.RetryPartial = true, true
	case last.Role == "user":
		if tr.SessionID != "" {
			// The coach ended the chat's session: the chat goes on in a
			// new one (useChat cannot start one under the same id).
			sess, err := s.store.FindSession(r.Context(), u.ID, tr.SessionID)
			if err != nil {
				return nil, orNotFound(err, "session")
			}
			if sess.Status != coachd.SessionActive {
				tr.SessionID = ""
			}
		}
		var sb strings.Builder
		for _, p := range last.Parts {
			if p.Type == "text" {
				sb.WriteString(p.Text)
			}
		}
		tr.Message = sb.String()
		files, probs := uiFiles(last.Parts)
		if err := probs.err(); err != nil {
			return nil, err
		}
		if len(files) > 0 {
			if tr.Attachments, err = s.attachmentBlocks(r.Context(), u.ID, files); err != nil {
				return nil, probs.of(err)
			}
		}
	case last.Role == "assistant":
		// addToolResult: the paused tool's part now has its output.
		if len(last.ID) <= 200 {
			tr.Continues = last.ID
		}
		if tr.SessionID == "" {
			return nil, bad("messages", "an answer to a paused tool needs the chat's session", "state")
		}
		sess, err := s.store.FindSession(r.Context(), u.ID, tr.SessionID)
		if err != nil {
			return nil, orNotFound(err, "session")
		}
		for _, p := range last.Parts {
			if sess.Pending == nil || p.ToolCallID != sess.Pending.ToolUseID {
				continue
			}
			switch {
			case p.State == "output-available":
				tr.Answer = &agent.Answer{ToolUseID: p.ToolCallID, Content: p.Output}
			case p.State == "output-error":
				// addToolOutput({state: 'output-error', errorText}): the
				// app could not answer; the model is told why.
				text, _ := json.Marshal(p.ErrorText)
				tr.Answer = &agent.Answer{ToolUseID: p.ToolCallID, Content: text, IsError: true}
			case p.State == "approval-responded" && p.Approval != nil:
				// addToolApprovalResponse: the answer to a call waiting for approval.
				content, _ := json.Marshal(p.Approval)
				tr.Answer = &agent.Answer{ToolUseID: p.ToolCallID, Content: content}
			}
		}
		if tr.Answer == nil {
			return nil, coachd.Errorf(coachd.ECONFLICT, "the last message answers no paused tool of this chat")
		}
	default:
		return nil, bad("messages", "the last message must be the user's, or the assistant's with a tool output", "enum")
	}
	if errs := tr.Valid(); len(errs) > 0 {
		return nil, coachd.Invalid(errs...)
	}
	t, err = s.runner.Prepare(r.Context(), tr)
	if err != nil {
		if known != "" && tr.SessionID != "" && tr.SessionID != known {
			s.dropFork(r, tr.SessionID) // uiBranch's
		}
		return nil, orNotFound(err, "session")
	}
	if t.SessionID() != known {
		if tr.SessionID == "" {
			// A new session: it holds none of the chat's earlier messages
			// (a fork holds what the session it copies held).
			from = req.users
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
		defer cancel()
		err := s.store.SaveFingerprint(ctx, u.ID, chatKey(req.ID), t.SessionID(), -1)
		if err == nil && from > 0 {
			err = s.store.SaveFingerprint(ctx, u.ID, chatFromKey(req.ID), t.SessionID(), int64(from))
		}
		if err != nil {
			t.Close()
			return nil, err
		}
	}
	return t, nil
}
