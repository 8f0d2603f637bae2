package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/coachd/coachd"
)

// Me returns the user the API key belongs to.
func (c *Client) Me(ctx context.Context) (*coachd.User, error) {
	return call[coachd.User](ctx, c, http.MethodGet, "/v1/me", nil)
}

// CreateUser creates a user (admin key) and returns it with its API key,
// which is shown only this once.
func (c *Client) CreateUser(ctx context.Context, name string, tokenBudget *int64) (*coachd.User, string, error) {
	var out struct {
		coachd.User
		APIKey string `json:"api_key"`
	}
	in := struct {
		Name        string `json:"name"`
		TokenBudget *int64 `json:"token_budget,omitempty"`
	}{name, tokenBudget}
	if err := c.do(ctx, http.MethodPost, "/v1/users", in, &out); err != nil {
		return nil, "", err
	}
	return &out.User, out.APIKey, nil
}

// User returns a user by ID (admin key).
func (c *Client) User(ctx context.Context, id string) (*coachd.User, error) {
	return call[coachd.User](ctx, c, http.MethodGet, "/v1/users/"+url.PathEscape(id), nil)
}

// UpdateUser changes a user's name or budget (admin key).
func (c *Client) UpdateUser(ctx context.Context, id string, upd coachd.UserUpdate) (*coachd.User, error) {
	in := struct {
		Name        *string `json:"name,omitempty"`
		TokenBudget *int64  `json:"token_budget,omitempty"`
	}{upd.Name, upd.TokenBudget}
	return call[coachd.User](ctx, c, http.MethodPatch, "/v1/users/"+url.PathEscape(id), in)
}

// CreateSession starts a session; empty agent means the server's default.
func (c *Client) CreateSession(ctx context.Context, agent, title string) (*coachd.Session, error) {
	in := struct {
		Agent string `json:"agent,omitempty"`
		Title string `json:"title,omitempty"`
	}{agent, title}
	return call[coachd.Session](ctx, c, http.MethodPost, "/v1/sessions", in)
}

// ListSessions returns a page of the caller's sessions, newest first, and
// the cursor of the next page ("" on the last).
func (c *Client) ListSessions(ctx context.Context, page coachd.Page) ([]*coachd.Session, string, error) {
	var out struct {
		Sessions   []*coachd.Session `json:"sessions"`
		NextCursor string            `json:"next_cursor"`
	}
	err := c.do(ctx, http.MethodGet, withQuery("/v1/sessions", pageQuery(nil, page)), nil, &out)
	return out.Sessions, out.NextCursor, err
}

// Session returns one of the caller's sessions.
func (c *Client) Session(ctx context.Context, id string) (*coachd.Session, error) {
	return call[coachd.Session](ctx, c, http.MethodGet, "/v1/sessions/"+url.PathEscape(id), nil)
}

// Messages returns a page of a session's messages in order.
func (c *Client) Messages(ctx context.Context, sessionID string, page coachd.Page) ([]*coachd.Message, string, error) {
	var out struct {
		Messages   []*coachd.Message `json:"messages"`
		NextCursor string            `json:"next_cursor"`
	}
	path := "/v1/sessions/" + url.PathEscape(sessionID) + "/messages"
	err := c.do(ctx, http.MethodGet, withQuery(path, pageQuery(nil, page)), nil, &out)
	return out.Messages, out.NextCursor, err
}

// DeleteSession deletes one of the caller's sessions.
func (c *Client) DeleteSession(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/sessions/"+url.PathEscape(id), nil, nil)
}

// NoteInput is what a caller writes when creating a note.
type NoteInput struct {
	Type       string `json:"note_type"`
	Category   string `json:"category,omitempty"`
	Title      string `json:"title"`
	Content    string `json:"content"`
	Importance int    `json:"importance,omitempty"` // 0: the server's default
	MarketSlug string `json:"market_slug,omitempty"`
	Pinned     bool   `json:"is_pinned,omitempty"`
}

// CreateNote stores a note for the caller.
func (c *Client) CreateNote(ctx context.Context, in NoteInput) (*coachd.Note, error) {
	return call[coachd.Note](ctx, c, http.MethodPost, "/v1/notes", in)
}

// ListNotes returns a page of the caller's notes: pinned first, then
// importance, then newest.
func (c *Client) ListNotes(ctx context.Context, f coachd.NoteFilter, page coachd.Page) ([]*coachd.Note, string, error) {
	q := url.Values{}
	if f.Type != "" {
		q.Set("type", f.Type)
	}
	if f.Category != "" {
		q.Set("category", f.Category)
	}
	if f.Pinned != nil {
		q.Set("pinned", strconv.FormatBool(*f.Pinned))
	}
	if f.IncludeDeleted {
		q.Set("include_deleted", "true")
	}
	var out struct {
		Notes      []*coachd.Note `json:"notes"`
		NextCursor string         `json:"next_cursor"`
	}
	err := c.do(ctx, http.MethodGet, withQuery("/v1/notes", pageQuery(q, page)), nil, &out)
	return out.Notes, out.NextCursor, err
}

// Note returns one of the caller's notes.
func (c *Client) Note(ctx context.Context, id string) (*coachd.Note, error) {
	return call[coachd.Note](ctx, c, http.MethodGet, "/v1/notes/"+url.PathEscape(id), nil)
}

// UpdateNote changes the fields of upd that are not nil.
func (c *Client) UpdateNote(ctx context.Context, id string, upd coachd.NoteUpdate) (*coachd.Note, error) {
	in := struct {
		Type       *string `json:"note_type,omitempty"`
		Category   *string `json:"category,omitempty"`
		Title      *string `json:"title,omitempty"`
		Content    *string `json:"content,omitempty"`
		Importance *int    `json:"importance,omitempty"`
		MarketSlug *string `json:"market_slug,omitempty"`
		Pinned     *bool   `json:"is_pinned,omitempty"`
	}{upd.Type, upd.Category, upd.Title, upd.Content, upd.Importance, upd.MarketSlug, upd.Pinned}
	return call[coachd.Note](ctx, c, http.MethodPut, "/v1/notes/"+url.PathEscape(id), in)
}

// DeleteNote soft-deletes a note; RestoreNote brings it back.
func (c *Client) DeleteNote(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/notes/"+url.PathEscape(id), nil, nil)
}

// TogglePin pins an unpinned note and unpins a pinned one.
func (c *Client) TogglePin(ctx context.Context, id string) (*coachd.Note, error) {
	return call[coachd.Note](ctx, c, http.MethodPost, "/v1/notes/"+url.PathEscape(id)+"/pin", nil)
}

// RestoreNote undoes DeleteNote.
func (c *Client) RestoreNote(ctx context.Context, id string) (*coachd.Note, error) {
	return call[coachd.Note](ctx, c, http.MethodPost, "/v1/notes/"+url.PathEscape(id)+"/restore", nil)
}

// NoteStats counts the caller's notes.
func (c *Client) NoteStats(ctx context.Context) (*coachd.NoteStats, error) {
	return call[coachd.NoteStats](ctx, c, http.MethodGet, "/v1/notes/stats", nil)
}
