package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// The OpenAI Chat Completions front door: POST /v1/chat/completions and
// GET /v1/models, for the clients that speak that API (the openai SDKs,
// Open WebUI, LibreChat). The model names the agent. These clients resend
// the whole conversation each time; coachd's stored history is the truth:
// the new turn is the last user message, and the session is the one named
// by X-Coachd-Session-Id, else the one whose conversation the messages
// before it are (a fingerprint per user), else a new one. coachd runs the
// coach's tools itself: the tools a client sends (LibreChat, Open WebUI
// and Continue send theirs with every message) are not offered to the
// coach, which OpenAI's tool_choice "auto" allows; a tool_choice that
// requires a call of one is refused.

type oaiMessage struct {
	Role    string     `json:"role"`
	Content oaiContent `json:"content"`
}

type oaiRequest struct {
	Model         string       `json:"model"`
	Messages      []oaiMessage `json:"messages"`
	N             *int         `json:"n"`
	Stream        bool         `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ToolChoice   json.RawMessage `json:"tool_choice"`
	FunctionCall json.RawMessage `json:"function_call"` // tool_choice before tools
}

// forcesClientTool reports whether a tool_choice (or function_call)
// requires a call of the client's tools: anything but "auto", "none" or
// nothing.
func forcesClientTool(choice json.RawMessage) bool {
	var s string
	switch t := strings.TrimSpace(string(choice)); {
	case t == "" || t == "null":
		return false
	case json.Unmarshal(choice, &s) == nil:
		return s != "auto" && s != "none"
	}
	return true // {"type":"function","function":{"name":…}}, {"name":…}
}

// oaiErrorTypes maps coachd error codes to OpenAI's error types.
var oaiErrorTypes = map[string]string{
	coachd.EINVALID: "invalid_request_error", coachd.ETOOLARGE: "invalid_request_error", coachd.EUNSUPPORTED: "invalid_request_error",
	coachd.EUNAUTHORIZED: "authentication_error", coachd.EFORBIDDEN: "permission_error", coachd.ENOTFOUND: "not_found_error",
	coachd.ECONFLICT: "conflict_error", coachd.ETURNINPROGRESS: "conflict_error", coachd.EBUDGET: "insufficient_quota",
	coachd.ERATELIMITED: "rate_limit_error", coachd.EUPSTREAMBUSY: "rate_limit_error",
}

// oaiError answers err in OpenAI's error shape, with coachd's status and
// headers (Retry-After, and X-Should-Retry: false for a long wait or a
// conflict a retry meets again).
func (s *Server) oaiError(w http.ResponseWriter, r *http.Request, err error) {
	e, status := s.answer(w, r, err)
	if status == http.StatusTooManyRequests && e.RetryAfterSeconds() > 60 ||
		status == http.StatusConflict && e.Code != coachd.ETURNINPROGRESS {
		// The SDKs retry a 429 at once when Retry-After is over a minute,
		// and any 409, unless told not to: a month's limit, or a session
		// the coach completed, would refuse them again. A turn in
		// progress ends: that 409 is worth its retries.
		w.Header().Set("X-Should-Retry", "false")
	}
	typ, code := oaiErrorTypes[e.Code], e.Code
	if typ == "" {
		typ = "api_error"
	}
	switch e.Code {
	case coachd.EBUDGET:
		code = "insufficient_quota"
	case coachd.EUNAUTHORIZED:
		code = "invalid_api_key"
	case coachd.ENOTFOUND:
		if len(e.Details) == 1 && e.Details[0].Field == "model" {
			// As OpenAI answers it: not_found_error is Anthropic's type,
			// and code that follows OpenAI's reads this one.
			typ, code = "invalid_request_error", "model_not_found"
		}
	}
	body := oaiErrorBody(e.Message, typ, code)
	if len(e.Details) == 1 && e.Details[0].Field != "" {
		// The field and its problem, as OpenAI's own invalid_type names them.
		body["error"].(map[string]any)["param"] = e.Details[0].Field
		if e.Code == coachd.EINVALID && e.Details[0].Code != "" {
			body["error"].(map[string]any)["code"] = e.Details[0].Code
		}
	}
	s.encode(w, r, status, body)
}

func oaiErrorBody(msg, typ, code string) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code, "param": nil}}
}

// oaiAuth authenticates like every route but answers in OpenAI's shape.
func (s *Server) oaiAuth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.Authenticate(r)
		if err != nil {
			s.oaiError(w, r, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(WithUser(r.Context(), u)))
	})
}

// oaiModel is an agent as OpenAI's model object.
type oaiModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func modelOf(a *agent.Agent) oaiModel {
	return oaiModel{ID: a.Name, Object: "model", Created: 0, OwnedBy: "coachd"}
}

// handleModels is GET /v1/models: the agents a user key may start.
func (s *Server) handleModels() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := []oaiModel{}
		for _, a := range s.userAgents() {
			out = append(out, modelOf(a))
		}
		s.encode(w, r, http.StatusOK, map[string]any{"object": "list", "data": out})
	})
}

// handleModel is GET /v1/models/{model} (the SDKs' models.retrieve): one
// of those agents.
func (s *Server) handleModel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("model")
		for _, a := range s.userAgents() {
			if a.Name == name {
				s.encode(w, r, http.StatusOK, modelOf(a))
				return
			}
		}
		s.oaiError(w, r, modelNotFound(name, "GET /v1/models"))
	})
}

// modelNotFound is the 404 of a model that is no agent of the user's.
func modelNotFound(name, models string) error {
	e := coachd.Errorf(coachd.ENOTFOUND, "the model %q does not exist: the models are this server's agents (%s)", truncate(name, 100), models)
	e.Details = []coachd.FieldError{{Field: "model", Message: "not found", Code: "model_not_found"}}
	return e
}

// userAgents are the agents a user key may start.
func (s *Server) userAgents() []*agent.Agent {
	var out []*agent.Agent
	switch {
	case s.pack != nil:
		for _, a := range s.pack.Agents {
			if !a.Internal {
				out = append(out, a)
			}
		}
	case s.runner != nil:
		if a, ok := s.runner.Agent(""); ok {
			out = append(out, a)
		}
	}
	return out
}

// fingerprint identifies a conversation by its user and assistant texts.
func fingerprint(model string, msgs []oaiMessage, reply *string) string {
	h := sha256.New()
	h.Write([]byte(model))
	for _, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		t, _ := m.text()
		h.Write([]byte{0})
		h.Write([]byte(m.Role))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(len(t))))
		h.Write([]byte{0})
		h.Write([]byte(t))
	}
	if reply != nil {
		h.Write([]byte("\x00assistant\x00" + strconv.Itoa(len(*reply)) + "\x00" + *reply))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// lastRole is the role of the last user or assistant message of msgs
// (the roles a fingerprint holds).
func lastRole(msgs []oaiMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if r := msgs[i].Role; r == "user" || r == "assistant" {
			return r
		}
	}
	return ""
}

// oaiTurn checks the request and makes the coachd turn it asks for, in
// a session that holds held messages before it; forked when this request
// made that session (ForkSession).
func (s *Server) oaiTurn(r *http.Request, req *oaiRequest) (tr agent.TurnRequest, held int64, forked bool, err error) {
	u := UserFrom(r.Context())
	bad := func(field, msg, code string) error {
		return coachd.Invalid(coachd.FieldError{Field: field, Message: msg, Code: code})
	}
	if forcesClientTool(req.ToolChoice) {
		return agent.TurnRequest{}, 0, false, bad("tool_choice", `must be "auto" or "none": the coach runs its own tools on the server and is not offered the client's`, "enum")
	}
	if forcesClientTool(req.FunctionCall) {
		return agent.TurnRequest{}, 0, false, bad("function_call", `must be "auto" or "none": the coach runs its own tools on the server and is not offered the client's`, "enum")
	}
	if req.N != nil && *req.N != 1 {
		return agent.TurnRequest{}, 0, false, bad("n", "a coach gives one reply per turn: n must be 1", "enum")
	}
	if req.Model == "" {
		return agent.TurnRequest{}, 0, false, bad("model", "is required: the agent to talk to (GET /v1/models)", "required")
	}
	known, names := false, []string{}
	for _, a := range s.userAgents() {
		known = known || a.Name == req.Model
		names = append(names, a.Name)
	}
	if !known {
		return agent.TurnRequest{}, 0, false, modelNotFound(req.Model, strings.Join(names, ", "))
	}
	n := len(req.Messages)
	if n == 0 || req.Messages[n-1].Role != "user" {
		return agent.TurnRequest{}, 0, false, bad("messages", "must end with the user's new message", "required")
	}
	for i, m := range req.Messages[:n-1] {
		if c := m.Content; c.set && !c.partsOK {
			// Read as no text, it changed the conversation's fingerprint
			// (resends and edits find their session by it).
			return agent.TurnRequest{}, 0, false, bad(fmt.Sprintf("messages[%d].content", i), "must be a string or an array of content parts (text, image_url, file)", "type")
		}
	}
	text, ok := req.Messages[n-1].text()
	parts, _ := req.Messages[n-1].parts()
	files, err := s.oaiAttachments(r.Context(), u.ID, n-1, parts)
	switch {
	case !ok:
		field := fmt.Sprintf("messages[%d].content", n-1)
		if c := req.Messages[n-1].Content; !c.partsOK && c.set {
			// A number, an object, a part whose text is not a string.
			return agent.TurnRequest{}, 0, false, bad(field, "must be a string or an array of content parts (text, image_url, file)", "type")
		}
		return agent.TurnRequest{}, 0, false, bad(field, "must be text (a string or text parts), images (image_url parts) and files (file parts)", "format")
	case err != nil:
		return agent.TurnRequest{}, 0, false, err
	case coachd.Blank(text) && len(files) == 0:
		return agent.TurnRequest{}, 0, false, bad("messages", "the last message must have text, an image or a file", "required")
	}
	tr = agent.TurnRequest{User: u, Agent: req.Model, Message: text, Attachments: files, SessionID: r.Header.Get("X-Coachd-Session-Id")}
	if tr.SessionID != "" && !coachd.ValidID(coachd.PrefixSession, tr.SessionID) {
		return agent.TurnRequest{}, 0, false, notFound("session") // never reaches SQL
	}
	var match oaiMatch
	found := false
	if tr.SessionID == "" && n == 1 {
		// The conversation's first message sent again after its turn
		// failed before the coach replied (an SDK's retry of a 503): it
		// goes on in the session that turn began, not in a new one.
		if f, at := s.triedIn(r.Context(), u.ID, req, text, len(files)); f != nil {
			tr.SessionID, tr.Message, tr.Attachments, tr.Retry = f.ID, "", nil, true
			return tr, at, false, nil
		}
	}
	if tr.SessionID == "" && n > 1 {
		if match, found = s.findConversation(r.Context(), u.ID, req); found {
			tr.SessionID = match.sessionID
		}
	}
	if tr.SessionID != "" {
		sess, err := s.store.FindSession(r.Context(), u.ID, tr.SessionID)
		if err != nil {
			return agent.TurnRequest{}, 0, false, orNotFound(err, "session")
		}
		if sess.Status != coachd.SessionActive && r.Header.Get("X-Coachd-Session-Id") == "" {
			// The coach ended the session the conversation was in: it
			// goes on in a new one (a client that resends it cannot).
			tr.SessionID = ""
			return tr, 0, false, nil
		}
		upTo := int64(-1) // the stored messages the client's conversation holds; -1: all
		if found {
			if upTo, err = s.holds(r.Context(), u.ID, sess, match); err != nil {
				return agent.TurnRequest{}, 0, false, err
			}
		}
		at := int64(0) // the seq of the request's own message, stored by a turn that failed
		if sess.Pending == nil {
			at = s.resentAt(r.Context(), u.ID, sess, text, len(files))
		}
		if upTo >= 0 && (match.shared || sess.MessageCount > upTo && at != upTo+1) {
			// The client goes on from an earlier point of the session
			// (Regenerate, an edited message), or from a conversation two
			// chats share: the model must see the history the client
			// shows, not the branch it left, nor the other chat's. It goes
			// on in a new session holding the stored messages up to there;
			// sent again (an SDK's retry), in the one it went on in then.
			if f, at := s.triedIn(r.Context(), u.ID, req, text, len(files)); f != nil {
				tr.SessionID, tr.Message, tr.Attachments, tr.Retry = f.ID, "", nil, true
				return tr, at, false, nil
			}
			fork, err := s.store.ForkSession(r.Context(), u.ID, sess.ID, upTo)
			if err != nil {
				return agent.TurnRequest{}, 0, false, err
			}
			tr.SessionID = fork.ID
			// A fork that ends on a question waits on it, as the session
			// did there: an (edited) answer answers it.
			a, again, err := s.forkPause(r.Context(), u.ID, sess, fork.ID, upTo, text, len(files))
			switch {
			case err != nil:
				s.dropFork(r, fork.ID)
				return agent.TurnRequest{}, 0, false, err
			case again:
				// The approved call's stored result: the reply again.
				tr.Message, tr.Retry = "", true
				return tr, upTo + 1, true, nil
			case a != nil:
				tr.Message, tr.Answer = "", a
			}
			return tr, upTo, true, nil
		}
		held = sess.MessageCount
		// A pending question answered by number or by the option's text;
		// once it expired, the text is a message (which dismisses it).
		if a := textAnswer(sess.Pending, text, s.clock.Now()); a != nil {
			tr.Message, tr.Answer = "", a
		} else if at > 0 {
			// The request failed before the coach answered, and the
			// client (an SDK's own retry, a chat UI's Regenerate) sends
			// it again: its message is stored already, and the turn goes
			// on from its tool rounds.
			tr.Message, tr.Attachments, tr.Retry = "", nil, true
			held = at
		}
	}
	return tr, held, false, nil
}

// resentAt is the seq of the session's last user message when it is text
// with n attachments and its turn ended with no reply from the coach: at
// most tool rounds after it (agent.UnansweredAt), nothing cut short. It
// is the request whose turn failed, sent again; 0 when there is none.
// The same words after a reply are a new message.
func (s *Server) resentAt(ctx context.Context, userID string, sess *coachd.Session, text string, n int) int64 {
	if sess.MessageCount == 0 {
		return 0
	}
	// The last message first: most often a reply, and the tail read
	// only after a turn that ended without one.
	msgs, _, err := s.store.ListMessages(ctx, userID, sess.ID, coachd.Page{Before: coachd.BeforeEnd, Limit: 1})
	if err != nil || len(msgs) == 0 || msgs[len(msgs)-1].Role != coachd.RoleUser {
		return 0 // a reply, even one cut short: the client has some of it
	}
	last := msgs[len(msgs)-1]
	if n == 0 && !last.OnlyBlocks(coachd.BlockToolResult) {
		if agent.UnansweredAt(msgs, text) == 0 { // the user's own words
			return last.Seq
		}
		return 0
	}
	if n == 0 {
		msgs, _, err = s.store.ListMessages(ctx, userID, sess.ID, coachd.Page{Before: coachd.BeforeEnd, Limit: unansweredTail})
		if i := agent.UnansweredAt(msgs, text); err == nil && i >= 0 {
			return msgs[i].Seq
		}
		return 0
	}
	// With attachments, only as the session's last message.
	if last.Content != text {
		return 0
	}
	files := 0
	for _, b := range last.Blocks {
		switch b.Type {
		case coachd.BlockImage, coachd.BlockDocument:
			files++
		case coachd.BlockText:
		default:
			return 0 // a tool's result: a turn cut between rounds
		}
	}
	if files != n {
		return 0
	}
	return last.Seq
}

// chosenOption is the option of a show_options input the text picks: its
// number (1-based) or its text; "" when it picks none.
func chosenOption(input json.RawMessage, text string) string {
	var in struct {
		Options []string `json:"options"`
	}
	if json.Unmarshal(input, &in) != nil || len(in.Options) == 0 {
		return ""
	}
	t := strings.TrimSuffix(strings.TrimSpace(text), ".")
	if i, err := strconv.Atoi(t); err == nil && i >= 1 && i <= len(in.Options) {
		return in.Options[i-1]
	}
	for _, o := range in.Options {
		if strings.EqualFold(o, t) {
			return o
		}
	}
	return ""
}

// optionsText renders an interactive tool's question as text with
// numbered choices, for clients that only show text.
func optionsText(input json.RawMessage) string {
	var in struct {
		Prompt  string   `json:"prompt"`
		Context string   `json:"context"`
		Options []string `json:"options"`
	}
	json.Unmarshal(input, &in)
	var sb strings.Builder
	sb.WriteString("\n\n")
	if q := in.Prompt + in.Context; q != "" {
		sb.WriteString(q + "\n")
	}
	for i, o := range in.Options {
		sb.WriteString(strconv.Itoa(i+1) + ". " + o + "\n")
	}
	if len(in.Options) > 0 {
		sb.WriteString("(Answer with a number.)")
	}
	return sb.String()
}
