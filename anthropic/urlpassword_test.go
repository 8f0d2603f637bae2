package anthropic_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSecurityBaseURLPasswordNotInError: a gateway's password in the base
// URL (ANTHROPIC_BASE_URL=https://coachd:pw@gateway/) was in the text of
// every error the provider answered: the SDK quotes the request URL whole,
// and coachd logs that text ("model upstream failed", "upstream error").
// The config line masks it; a failing turn's log did not.
func TestSecurityBaseURLPasswordNotInError(t *testing.T) {
	const pass = "gw_pass_7c6b5a49"
	srv := MustServer(t)
	for _, reply := range []anthropictest.Reply{
		anthropictest.Status(http.StatusUnauthorized, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`),
		anthropictest.Status(http.StatusInternalServerError, nil, `{"type":"error","error":{"type":"api_error","message":"boom"}}`),
	} {
		srv.Enqueue(reply)
		m := anthropic.New(anthropic.Config{APIKey: "test-key", MaxRetries: -1,
			BaseURL: strings.Replace(srv.URL(), "http://", "http://coachd:"+pass+"@", 1)})
		_, _, err := drain(m.Stream(context.Background(), hello()))
		if err == nil {
			t.Fatal("an error answer streamed")
		}
		var apiErr *sdk.Error
		if !errors.As(err, &apiErr) {
			t.Errorf("the SDK's error is no longer found in it: %v", err)
		}
		if strings.Contains(err.Error(), pass) {
			t.Errorf("the base URL's password is in the error: %v", err)
		}
		if !strings.Contains(err.Error(), "coachd:xxxxx@127.0.0.1") {
			t.Errorf("the error no longer names where it went: %v", err)
		}
	}
}
