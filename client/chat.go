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
	// OnDisconnect is continue or cancel: what the turn does if this
	// client leaves ("" lets the server decide: continue for coachd).
	OnDisconnect string
	// IdempotencyKey, when set, names the message: sent again with the
	// same key and body, it gets its turn's events again, not a second
	// turn (ChatStream only).
	IdempotencyKey string
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
	if opt.OnDisconnect != "" {
		q.Set("on_disconnect", opt.OnDisconnect)
	}
	hreq, err := c.newRequest(ctx, http.MethodPost, withQuery("/v1/chat/stream", q), req, "text/event-stream")
	if err != nil {
		return "", err
	}
	if opt.IdempotencyKey != "" {
		hreq.Header.Set("Idempotency-Key", opt.IdempotencyKey)
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

// Resume follows the session's stream (GET /v1/sessions/{id}/stream) after
// the event lastID, calling fn for each event, until the turn in progress
// ends (message_end or error in the coachd dialect), fn fails or ctx is
// done. It is how a client that lost its stream picks it up again.
func (c *Client) Resume(ctx context.Context, sessionID, lastID string, opt StreamOptions, fn func(Event) error) error {
	q := url.Values{}
	if opt.Protocol != "" {
		q.Set("protocol", opt.Protocol)
	}
	hreq, err := c.newRequest(ctx, http.MethodGet, withQuery("/v1/sessions/"+url.PathEscape(sessionID)+"/stream", q), nil, "text/event-stream")
	if err != nil {
		return err
	}
	if lastID != "" {
		hreq.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return fmt.Errorf("client: resume stream: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return decodeError(resp)
	}
	er := NewEventReader(resp.Body)
	for {
		ev, err := er.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("client: resume stream: %w", io.ErrUnexpectedEOF)
		}
		if err != nil {
			return fmt.Errorf("client: resume stream: %w", err)
		}
		if err := fn(ev); err != nil {
			return err
		}
		if ev.Name == "message_end" || ev.Name == "error" {
			return nil
		}
	}
}

// Stop stops the session's running turn (POST /v1/sessions/{id}/stop).
func (c *Client) Stop(ctx context.Context, sessionID string) error {
	return c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/stop", nil, nil)
}
