package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestRecovery turns a panicking handler into a logged 500.
func TestRecovery(t *testing.T) {
	var logs bytes.Buffer
	s := New(Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	h := s.withRequestID(s.withRecovery(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"code":"internal"`) {
		t.Errorf("got %d %s, want 500 internal", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Errorf("panic not logged: %s", logs.String())
	}
}

// TestAdminDisabled answers admin routes with 403 when no admin key is set.
func TestAdminDisabled(t *testing.T) {
	s := New(Deps{})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/users", strings.NewReader(`{"name":"x"}`))
	req.Header.Set("Authorization", "Bearer anything")
	s.ServeHTTP(rec, req)
	if rec.Code != 403 || !strings.Contains(rec.Body.String(), "--admin-key") {
		t.Errorf("got %d %s, want 403 naming --admin-key", rec.Code, rec.Body)
	}
}

func TestErrorStatus(t *testing.T) {
	for code, want := range map[string]int{
		coachd.EINVALID: 400, coachd.EUNAUTHORIZED: 401, coachd.EFORBIDDEN: 403, coachd.ENOTFOUND: 404,
		coachd.ECONFLICT: 409, coachd.ETURNINPROGRESS: 409, coachd.ETOOLARGE: 413, coachd.EUNSUPPORTED: 415,
		coachd.EBUDGET: 402, coachd.ERATELIMITED: 429, coachd.EUPSTREAMBUSY: 503, coachd.EUPSTREAMAUTH: 502,
		coachd.EAPI: 502, coachd.ETIMEOUT: 504, coachd.EINTERNAL: 500, "made_up": 500,
	} {
		if got := ErrorStatus(coachd.Errorf(code, "x")); got != want {
			t.Errorf("ErrorStatus(%s) = %d, want %d", code, got, want)
		}
	}
}

// TestErrorBody checks Retry-After and the details shape.
func TestErrorBody(t *testing.T) {
	s := New(Deps{})
	rec := httptest.NewRecorder()
	s.Error(rec, httptest.NewRequest("GET", "/", nil), &coachd.Error{Code: coachd.ERATELIMITED, Message: "slow down", RetryAfter: 1500e6})
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" {
		t.Errorf("got %d Retry-After %q, want 429 and 2", rec.Code, rec.Header().Get("Retry-After"))
	}
	rec = httptest.NewRecorder()
	s.Error(rec, httptest.NewRequest("GET", "/", nil), coachd.Invalid(coachd.FieldError{Field: "title", Message: "too long", Code: "length"}))
	want := `{"error":{"code":"invalid_request","message":"title: too long","details":[{"field":"title","message":"too long","code":"length"}]}}` + "\n"
	if rec.Body.String() != want {
		t.Errorf("body %s, want %s", rec.Body, want)
	}
}

func TestAPIKey(t *testing.T) {
	a, b := NewAPIKey(), NewAPIKey()
	if a == b || !strings.HasPrefix(a, "ck_") || len(a) != 3+43 {
		t.Errorf("keys %q %q", a, b)
	}
	if h := HashAPIKey("ck_x"); len(h) != 64 || h == HashAPIKey("ck_y") {
		t.Errorf("hash %q", h)
	}
}
