package server

import (
	"context"
	"net/http"

	"github.com/coachd/coachd"
)

type noteCreateRequest struct {
	Type       string `json:"note_type"`
	Category   string `json:"category"`
	Title      string `json:"title"`
	Content    string `json:"content"`
	Importance *int   `json:"importance"`
	MarketSlug string `json:"market_slug"`
	Pinned     bool   `json:"is_pinned"`
}

func (req noteCreateRequest) note() *coachd.Note {
	n := &coachd.Note{
		Type:       req.Type,
		Category:   req.Category,
		Title:      req.Title,
		Content:    req.Content,
		Importance: coachd.DefaultImportance,
		MarketSlug: req.MarketSlug,
		Pinned:     req.Pinned,
	}
	if req.Importance != nil {
		n.Importance = *req.Importance
	}
	return n
}

func (req noteCreateRequest) Valid(context.Context) []coachd.FieldError {
	return req.note().Validate(nil) // type and category: the store's vocabulary
}

// noteUpdateRequest is a partial update: fields present are changed.
type noteUpdateRequest struct {
	Type       *string `json:"note_type"`
	Category   *string `json:"category"`
	Title      *string `json:"title"`
	Content    *string `json:"content"`
	Importance *int    `json:"importance"`
	MarketSlug *string `json:"market_slug"`
	Pinned     *bool   `json:"is_pinned"`
}

func (req noteUpdateRequest) update() coachd.NoteUpdate {
	return coachd.NoteUpdate{
		Type: req.Type, Category: req.Category, Title: req.Title, Content: req.Content,
		Importance: req.Importance, MarketSlug: req.MarketSlug, Pinned: req.Pinned,
	}
}

// Valid checks the fields present with the note rules: it lays them over a
// valid note, so every problem it finds belongs to a field that was sent.
func (req noteUpdateRequest) Valid(context.Context) []coachd.FieldError {
	u := req.update()
	if u == (coachd.NoteUpdate{}) {
		return []coachd.FieldError{{Field: "", Message: "nothing to update: send at least one note field", Code: "required"}}
	}
	n := coachd.Note{Type: "t", Title: "t", Content: "c", Importance: coachd.DefaultImportance}
	set(&n.Type, u.Type)
	set(&n.Category, u.Category)
	set(&n.Title, u.Title)
	set(&n.Content, u.Content)
	set(&n.Importance, u.Importance)
	set(&n.MarketSlug, u.MarketSlug)
	return n.Validate(nil)
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func (s *Server) handleNoteCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[noteCreateRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		n := req.note()
		n.UserID = UserFrom(r.Context()).ID
		if err := s.store.CreateNote(r.Context(), n); err != nil {
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusCreated, n)
	})
}

func (s *Server) handleNoteList() http.Handler {
	type response struct {
		Notes      []*coachd.Note `json:"notes"`
		NextCursor string         `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, vocab := newQuery(r), s.notes()
		f := coachd.NoteFilter{
			Type:     q.enum("type", vocab.Types),
			Category: q.enum("category", vocab.Categories),
			Pinned:   q.boolean("pinned"),
		}
		if inc := q.boolean("include_deleted"); inc != nil {
			f.IncludeDeleted = *inc
		}
		page := q.page()
		if err := q.err(); err != nil {
			s.Error(w, r, err)
			return
		}
		list, next, err := s.store.ListNotes(r.Context(), UserFrom(r.Context()).ID, f, page)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		if list == nil {
			list = []*coachd.Note{}
		}
		s.encode(w, r, http.StatusOK, response{Notes: list, NextCursor: next})
	})
}

func (s *Server) handleNoteStats() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := s.store.NoteStats(r.Context(), UserFrom(r.Context()).ID)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusOK, st)
	})
}

// noteAction adapts a store call on one of the caller's notes into a
// handler answering the note.
func (s *Server) noteAction(do func(ctx context.Context, userID, id string, r *http.Request) (*coachd.Note, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixNote, "note")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		n, err := do(r.Context(), UserFrom(r.Context()).ID, id, r)
		if err != nil {
			s.Error(w, r, orNotFound(err, "note"))
			return
		}
		s.encode(w, r, http.StatusOK, n)
	})
}

func (s *Server) handleNoteGet() http.Handler {
	return s.noteAction(func(ctx context.Context, userID, id string, _ *http.Request) (*coachd.Note, error) {
		return s.store.FindNote(ctx, userID, id)
	})
}

func (s *Server) handleNoteUpdate() http.Handler {
	return s.noteAction(func(ctx context.Context, userID, id string, r *http.Request) (*coachd.Note, error) {
		req, err := decode[noteUpdateRequest](r)
		if err != nil {
			return nil, err
		}
		return s.store.UpdateNote(ctx, userID, id, req.update())
	})
}

func (s *Server) handleNotePin() http.Handler {
	return s.noteAction(func(ctx context.Context, userID, id string, _ *http.Request) (*coachd.Note, error) {
		return s.store.TogglePin(ctx, userID, id)
	})
}

func (s *Server) handleNoteRestore() http.Handler {
	return s.noteAction(func(ctx context.Context, userID, id string, _ *http.Request) (*coachd.Note, error) {
		return s.store.RestoreNote(ctx, userID, id)
	})
}

func (s *Server) handleNoteDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixNote, "note")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		if err := s.store.DeleteNote(r.Context(), UserFrom(r.Context()).ID, id); err != nil {
			s.Error(w, r, orNotFound(err, "note"))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// notes is the note vocabulary: the pack's, or the default.
func (s *Server) notes() coachd.NoteVocabulary {
	if s.pack != nil {
		return s.pack.NoteVocabulary()
	}
	return coachd.DefaultNoteVocabulary
}
