// Package client is a small Go client for the coachd HTTP API. Errors the
// server answers come back as *coachd.Error with the code, message and
// field details of the error body.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
)

// Client talks to one coachd server with one API key (a user's key, or the
// admin key for the admin methods).
type Client struct {
	baseURL string
	apiKey  string
	hc      *http.Client
}

// New returns a client for the server at baseURL (like
// "http://127.0.0.1:8080"). A nil httpClient means http.DefaultClient.
func New(baseURL, apiKey string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), apiKey: apiKey, hc: httpClient}
}

// Healthz reports whether the server and its database are up.
func (c *Client) Healthz(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/healthz", nil, nil)
}

// call sends a request and returns the decoded answer, or nil and the
// error.
func call[T any](ctx context.Context, c *Client, method, path string, body any) (*T, error) {
	var v T
	if err := c.do(ctx, method, path, body, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// newRequest builds a request to path (with its query) carrying the API
// key, body as JSON when it is not nil, and accepting accept.
func (c *Client) newRequest(ctx context.Context, method, path string, body any, accept string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("client: encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, rd)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	return req, nil
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out (when out is not nil).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	req, err := c.newRequest(ctx, method, path, body, "application/json")
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return decodeError(resp)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: decode %s %s: %w", method, path, err)
	}
	return nil
}

// decodeError reads the API's error body into a *coachd.Error.
func decodeError(resp *http.Response) error {
	var body struct {
		Error struct {
			Code    string              `json:"code"`
			Message string              `json:"message"`
			Details []coachd.FieldError `json:"details"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = errorEventBody(raw)
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Error.Code == "" {
		return &coachd.Error{
			Code:    coachd.EAPI,
			Message: fmt.Sprintf("HTTP %d without an error body", resp.StatusCode),
			Err:     fmt.Errorf("client: HTTP %s: %.200q", resp.Status, raw),
		}
	}
	e := &coachd.Error{Code: body.Error.Code, Message: body.Error.Message, Details: body.Error.Details}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	return e
}

// errorEventBody turns the error event that answers a stream request refused
// before it started into the JSON error body shape.
func errorEventBody(raw []byte) []byte {
	ev, err := NewEventReader(bytes.NewReader(raw)).Next()
	if err != nil {
		return raw
	}
	var e struct {
		Type    string              `json:"type"`
		Message string              `json:"message"`
		Details []coachd.FieldError `json:"details"`
	}
	if json.Unmarshal(ev.Data, &e) != nil {
		return raw
	}
	out, _ := json.Marshal(map[string]any{"error": map[string]any{"code": e.Type, "message": e.Message, "details": e.Details}})
	return out
}

// pageQuery adds a page's cursor and limit to q.
func pageQuery(q url.Values, p coachd.Page) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	return q
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
