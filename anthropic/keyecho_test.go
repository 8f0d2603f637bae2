package anthropic_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSecurityAPIKeyEchoRedacted: a gateway that quotes the x-api-key it
// was sent in its error (as a type, a message, or an error event that is
// not JSON) put coachd's ANTHROPIC_API_KEY in the log line of the failed
// call, and, through the type, in the client's error body.
func TestSecurityAPIKeyEchoRedacted(t *testing.T) {
	const key = "sk-ant-api03-Zq9XkQm4Vt7pLs2Wn8Rb"
	eachPath(t, func(t *testing.T, untraced bool) {
		for _, tt := range []struct {
			name  string
			reply anthropictest.Reply
		}{
			{"Status", anthropictest.Status(http.StatusUnauthorized, nil,
				`{"type":"error","error":{"type":"bad_key_`+key+`","message":"invalid x-api-key: `+key+`"}}`)},
			{"ErrorEvent", anthropictest.Text("Hi there", 3).ErrorAfter(2, "overloaded_error key="+key, "key "+key+" is throttled")},
		} {
			t.Run(tt.name, func(t *testing.T) {
				srv := MustServer(t)
				srv.Enqueue(tt.reply)
				m := newModel(srv, anthropic.Config{APIKey: key, Untraced: untraced})
				_, _, err := drain(m.Stream(context.Background(), hello()))
				var ce *coachd.Error
				if !errors.As(err, &ce) {
					t.Fatalf("err = %T %v", err, err)
				}
				if strings.Contains(ce.Message, key) || strings.Contains(err.Error(), key) {
					t.Errorf("the API key is in the error: message %q, log text %q", ce.Message, err.Error())
				}
				if !strings.Contains(err.Error(), "[redacted]") {
					t.Errorf("log text %q does not show where the key was", err.Error())
				}
			})
		}
	})
	t.Run("EventNotJSON", func(t *testing.T) {
		srv := MustServer(t)
		srv.Enqueue(anthropictest.Reply{Events: []anthropictest.Event{{Name: "error", Data: []byte("gateway refused key " + key)}}})
		m := newModel(srv, anthropic.Config{APIKey: key})
		_, _, err := drain(m.Stream(context.Background(), hello()))
		if err == nil || strings.Contains(err.Error(), key) {
			t.Errorf("the API key is in the error: %v", err)
		}
	})
}
