package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coachd/coachd"
)

// request builds the chat completions body for req. What the API cannot
// carry is dropped with a logged reason (once per model and feature):
// extended thinking, prompt-caching breakpoints, thinking blocks of
// history, documents.
func (m *Model) request(model string, req *coachd.ModelRequest) ([]byte, error) {
	if model == "" {
		return nil, coachd.Errorf(coachd.EINVALID, "openai provider: no model named (set model in the agent file or --model)")
	}
	out := chatRequest{
		Model: model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, Stop: req.StopSequences,
		User: req.UserID, Stream: true, StreamOptions: json.RawMessage(`{"include_usage":true}`),
	}
	if out.MaxTokens <= 0 {
		out.MaxTokens = DefaultMaxTokens
	}
	if m.completionTokens {
		out.MaxTokens, out.MaxCompletion = 0, out.MaxTokens
	}
	if req.ThinkingBudget > 0 {
		m.degrade(model, "thinking", "chat completions have no extended thinking; the request is sent without it")
	}
	if !req.NoCache {
		m.degrade(model, "cache_control", "chat completions take no prompt-caching breakpoints; the provider caches on its own or not at all")
	}
	var sys []string
	for _, b := range req.System {
		if b.Type == coachd.BlockText && b.Text != "" {
			sys = append(sys, b.Text)
		}
	}
	if len(sys) > 0 {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: strings.Join(sys, "\n\n")})
	}
	for i, msg := range req.Messages {
		if msg.Role == coachd.RoleAssistant {
			m.assistant(&out, model, msg.Blocks)
			continue
		}
		if err := m.user(&out, model, msg.Blocks); err != nil {
			return nil, coachd.Errorf(coachd.EINVALID, "message %d: %v", i, err)
		}
	}
	for _, t := range req.Tools {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out.Tools = append(out.Tools, chatTool{Type: "function",
			Function: functionDecl{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	if tc := req.ToolChoice; tc != nil && len(out.Tools) > 0 {
		switch tc.Type {
		case "auto", "":
			out.ToolChoice = "auto"
		case "any":
			out.ToolChoice = "required"
		case "none":
			out.ToolChoice = "none"
		case "tool":
			out.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}}
		default:
			return nil, coachd.Errorf(coachd.EINVALID, "tool_choice %q", tc.Type)
		}
		if tc.DisableParallelToolUse {
			f := false
			out.Parallel = &f
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, coachd.Errorf(coachd.EINVALID, "request: %v", err)
	}
	return raw, nil
}

// assistant maps an assistant message: its text joined, its tool_use
// blocks as tool_calls. Thinking cannot be sent back.
func (m *Model) assistant(out *chatRequest, model string, blocks []coachd.Block) {
	msg := chatMessage{Role: "assistant"}
	var text strings.Builder
	for _, b := range blocks {
		switch b.Type {
		case coachd.BlockText:
			text.WriteString(b.Text)
		case coachd.BlockToolUse:
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: b.ID, Type: "function",
				Function: functionCall{Name: b.Name, Arguments: args}})
		case coachd.BlockThinking, coachd.BlockRedactedThinking:
			m.degrade(model, "thinking_history", "thinking blocks from another model cannot be sent to chat completions; dropped from history")
		default:
			m.degrade(model, "history_"+b.Type, "a "+b.Type+" block from another model cannot be sent to chat completions; dropped from history")
		}
	}
	if text.Len() > 0 {
		msg.Content = text.String()
	}
	if msg.Content == nil && len(msg.ToolCalls) == 0 {
		msg.Content = ""
	}
	out.Messages = append(out.Messages, msg)
}

// user maps a user message: tool results become role "tool" messages
// (which must follow the assistant's tool_calls directly), the rest one
// user message of content parts.
func (m *Model) user(out *chatRequest, model string, blocks []coachd.Block) error {
	var parts []contentPart
	for _, b := range blocks {
		switch b.Type {
		case coachd.BlockToolResult:
			content := b.ResultText()
			if b.IsError {
				content = "Error: " + content
			}
			if resultHasMedia(b) {
				m.degrade(model, "tool_result_media", "chat completions tool messages carry text only; images in tool results are dropped")
			}
			out.Messages = append(out.Messages, chatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: content})
		case coachd.BlockText:
			parts = append(parts, contentPart{Type: "text", Text: b.Text})
		case coachd.BlockImage:
			url, ok := imageSource(b.Source)
			if !ok {
				return fmt.Errorf("image block with an unreadable source")
			}
			parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: url}})
		case coachd.BlockDocument:
			m.degrade(model, "document", "chat completions take no PDF documents; the model is told one was left out")
			parts = append(parts, contentPart{Type: "text", Text: "[a document was attached here, but this model cannot read documents]"})
		default:
			m.degrade(model, "history_"+b.Type, "a user "+b.Type+" block cannot be sent to chat completions; dropped")
		}
	}
	if len(parts) == 0 {
		return nil
	}
	if len(parts) == 1 && parts[0].Type == "text" {
		out.Messages = append(out.Messages, chatMessage{Role: "user", Content: parts[0].Text})
		return nil
	}
	out.Messages = append(out.Messages, chatMessage{Role: "user", Content: parts})
	return nil
}

// imageSource turns a Messages API image source (base64 or url) into the
// URL chat completions take: a data: URL or the URL itself.
func imageSource(raw json.RawMessage) (string, bool) {
	var src struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	}
	if json.Unmarshal(raw, &src) != nil {
		return "", false
	}
	switch {
	case src.Type == "base64" && src.MediaType != "" && src.Data != "":
		return "data:" + src.MediaType + ";base64," + src.Data, true
	case src.Type == "url" && src.URL != "":
		return src.URL, true
	}
	return "", false
}

func resultHasMedia(b coachd.Block) bool {
	var blocks []coachd.Block
	if json.Unmarshal(b.Content, &blocks) != nil {
		return false
	}
	for _, c := range blocks {
		if c.Type != coachd.BlockText {
			return true
		}
	}
	return false
}
