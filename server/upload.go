package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"

	"github.com/coachd/coachd"
)

// handleUploadCreate stores one file sent as multipart/form-data in the
// field "file". Its type is sniffed from its bytes (the part's declared
// Content-Type is not read), its name is sanitised (last path element, no
// control or invisible characters), and the per-user caps apply
// (coachd.MaxUploadsPerUser, coachd.MaxUploadBytesPerUser: 409 beyond).
func (s *Server) handleUploadCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := readUpload(r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		u.UserID = UserFrom(r.Context()).ID
		if err := s.store.CreateUpload(r.Context(), u); err != nil {
			s.Error(w, r, err)
			return
		}
		w.Header().Set("Location", "/v1/uploads/"+u.ID)
		s.encode(w, r, http.StatusCreated, u)
	})
}

// readUpload reads the request's one "file" part.
func readUpload(r *http.Request) (*coachd.Upload, error) {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "multipart/form-data" {
		return nil, coachd.Errorf(coachd.EUNSUPPORTED, "Content-Type must be multipart/form-data with the file in the field \"file\"")
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, coachd.Errorf(coachd.EINVALID, "malformed multipart body: %v", err)
	}
	var u *coachd.Upload
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bodyError(err, "malformed multipart body")
		}
		if part.FormName() != "file" {
			return nil, coachd.Invalid(coachd.FieldError{Field: part.FormName(), Message: "unknown field: send only \"file\"", Code: "unknown"})
		}
		if u != nil {
			return nil, coachd.Invalid(coachd.FieldError{Field: "file", Message: "send one file per upload", Code: "length"})
		}
		if u, err = readPart(part); err != nil {
			return nil, err
		}
	}
	if u == nil {
		return nil, coachd.Invalid(coachd.FieldError{Field: "file", Message: "is required", Code: "required"})
	}
	return u, nil
}

// readPart reads the file part, at most coachd.MaxAttachmentBytes.
func readPart(part *multipart.Part) (*coachd.Upload, error) {
	data, err := io.ReadAll(io.LimitReader(part, coachd.MaxAttachmentBytes+1))
	if err != nil {
		return nil, bodyError(err, "reading the file")
	}
	if len(data) > coachd.MaxAttachmentBytes {
		return nil, coachd.Errorf(coachd.ETOOLARGE, "file is larger than %d bytes (%d MiB)", coachd.MaxAttachmentBytes, coachd.MaxAttachmentBytes>>20)
	}
	typ := coachd.SniffMediaType(data)
	if fe := coachd.CheckAttachment(typ, data); fe != nil {
		fe.Field = "file"
		return nil, coachd.Invalid(*fe)
	}
	return &coachd.Upload{Name: coachd.SanitizeFileName(part.FileName(), "upload"), MediaType: typ, Data: data}, nil
}

// bodyError maps a body read failure: too large (413), too slow, or
// malformed (400).
func bodyError(err error, what string) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &coachd.Error{Code: coachd.ETOOLARGE, Message: fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit), Err: err}
	}
	if e := bodyTimeoutError(err); e != nil {
		return e
	}
	return &coachd.Error{Code: coachd.EINVALID, Message: what, Err: err}
}

// handleUploadGet serves the bytes of the user's upload. The browser must
// never run them: nosniff keeps the sniffed type, and the sandbox CSP
// keeps even a document opened directly from scripts and forms.
func (s *Server) handleUploadGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixUpload, "upload")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		u, err := s.store.FindUpload(r.Context(), UserFrom(r.Context()).ID, id)
		if err != nil {
			s.Error(w, r, orNotFound(err, "upload"))
			return
		}
		ct := u.MediaType
		if ct == coachd.MediaText {
			ct += "; charset=utf-8"
		}
		h := w.Header()
		h.Set("Content-Type", ct)
		h.Set("Content-Length", strconv.Itoa(len(u.Data)))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'")
		h.Set("Content-Disposition", "inline; filename*=UTF-8''"+url.PathEscape(u.Name))
		h.Set("Cache-Control", "private, no-store")
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(u.Data)
		}
	})
}

// handleUploadList lists the user's uploads, newest first, without their
// bytes: at the caps an upload is refused until some are deleted, and
// this is how a client finds them.
func (s *Server) handleUploadList() http.Handler {
	type response struct {
		Uploads    []*coachd.Upload `json:"uploads"`
		NextCursor string           `json:"next_cursor"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		servePage(s, w, r, func(p coachd.Page) ([]*coachd.Upload, string, error) {
			return s.store.ListUploads(r.Context(), UserFrom(r.Context()).ID, p)
		}, func(list []*coachd.Upload, next string) any { return response{list, next} })
	})
}

// handleUploadDelete deletes the user's upload. Messages it was attached
// to keep their copy.
func (s *Server) handleUploadDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, coachd.PrefixUpload, "upload")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		if err := s.store.DeleteUpload(r.Context(), UserFrom(r.Context()).ID, id); err != nil {
			s.Error(w, r, orNotFound(err, "upload"))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
