package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// ChatRequest is one turn: a message, or the answer to a pending
// interactive tool call.
type ChatRequest struct {
	Message    string      `json:"message,omitempty"`
	SessionID  string      `json:"session_id,omitempty"`
	Agent      string      `json:"agent,omitempty"`
	ToolResult *ToolResult `json:"tool_result,omitempty"`
}

// ToolResult answers a pending interaction.
type ToolResult struct {
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// StreamOptions choose the wire dialect and what to do when the session
// is busy.
type StreamOptions struct {
	Protocol string // coachd (default), asp or sage
	WaitBusy bool   // on_busy=wait
}

// ChatStream runs a turn and calls fn for each event as it arrives, until
// the stream ends, fn returns an error, or ctx is cancelled (which cancels
// the turn on the server). It returns the session id from the
// X-Coachd-Session-Id header. Errors before the stream starts come back as
// *coachd.Error.
func (c *Client) ChatStream(ctx context.Context, req ChatRequest, opt StreamOptions, fn func(Event) error) (string, error) {
	q := url.Values{}
	if opt.Protocol != "" {
		q.Set("protocol", opt.Protocol)
	}
	if opt.WaitBusy {
		q.Set("on_busy", "wait")
	}
	hreq, err := c.newRequest(ctx, http.MethodPost, withQuery("/v1/chat/stream", q), req, "text/event-stream")
	if err != nil {
		return "", err
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return "", fmt.Errorf("client: chat stream: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return "", decodeError(resp)
	}
	sid := resp.Header.Get("X-Coachd-Session-Id")
	er := NewEventReader(resp.Body)
	for {
		ev, err := er.Next()
		if errors.Is(err, io.EOF) {
			return sid, nil
		}
		if err != nil {
			return sid, fmt.Errorf("client: chat stream: %w", err)
		}
		if err := fn(ev); err != nil {
			return sid, err
		}
	}
}
