package openai_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/modeltest"
	"github.com/coachd/coachd/openai"
	"github.com/coachd/coachd/openai/openaitest"
)

// TestSecurityAPIKeyEchoRedacted: a provider or proxy that quotes the
// bearer token it was sent in its error (its type or its message, in an
// error answer or an in-stream error) put coachd's provider key in the
// log line of the failed call and, through the type, in the client's
// error body.
func TestSecurityAPIKeyEchoRedacted(t *testing.T) {
	const key = "sk-proj-Hq3Vz8Nw2Lk5Tm9Rc4Xb"
	for _, tt := range []struct {
		name  string
		reply openaitest.Reply
	}{
		{"Status", openaitest.Status(http.StatusUnauthorized, nil,
			`{"error":{"message":"Incorrect API key provided: Bearer `+key+`","type":"invalid_key_`+key+`","code":"invalid_api_key"}}`)},
		{"ErrorEvent", openaitest.Text("Hi there").ErrorAfter(1, "token "+key+" throttled", nil)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := MustServer(t)
			srv.Enqueue(tt.reply)
			_, _, err := modeltest.Drain(newModel(srv, openai.Config{APIKey: key}).Stream(context.Background(), modeltest.Hello("")))
			var ce *coachd.Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %T %v", err, err)
			}
			if strings.Contains(ce.Message, key) || strings.Contains(err.Error(), key) {
				t.Errorf("the API key is in the error: message %q, log text %q", ce.Message, err.Error())
			}
			if !strings.Contains(ce.Message, "[redacted]") {
				t.Errorf("message %q does not show where the key was", ce.Message)
			}
		})
	}
}
