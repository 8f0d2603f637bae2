package tools

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
)

// Outgoing webhook calls are signed the Standard Webhooks way: headers
// webhook-id (unique per call), webhook-timestamp (Unix seconds) and
// webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.payload>",
// with a secret given as whsec_<base64 key>. The app checks the signature
// and the timestamp's age, and can drop a webhook-id it has seen.
//
// The payload is the body for POST, PUT and PATCH: it holds the input and
// the user. GET and DELETE have no body (the input is the query), so they
// sign what the app reads instead (bodilessPayload): signing the empty
// body would let anyone change the query or the user of a signed call.

// WebhookSecret is a decoded whsec_ signing key.
type WebhookSecret []byte

// ParseWebhookSecret reads a secret in the Standard Webhooks format,
// whsec_ followed by the base64 of a key of 24 to 64 bytes.
func ParseWebhookSecret(s string) (WebhookSecret, error) {
	b64, ok := strings.CutPrefix(s, "whsec_")
	if !ok {
		return nil, errors.New("a webhook secret is whsec_ followed by base64 (e.g. whsec_$(openssl rand -base64 32))")
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(key) < 24 || len(key) > 64 {
		return nil, errors.New("a webhook secret's key is 24 to 64 bytes, in standard base64 after whsec_")
	}
	return key, nil
}

// sign sets the signature headers of a call that signs payload.
func (k WebhookSecret) sign(h http.Header, payload []byte, now time.Time) {
	id := coachd.NewID("whk", now)
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(payload)
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}

// bodilessPayload is what a GET or DELETE call signs, four lines joined
// by "\n" (no "\n" after the last):
//
//	METHOD request-target
//	X-Coachd-User-Id
//	X-Coachd-Session-Id
//	X-Coachd-Tool-Use-Id
//
// request-target is the path and query of the request line as sent (Go's
// r.RequestURI, Node's req.url): the input is in the query. The app
// builds the same text from the request it got and verifies it with any
// Standard Webhooks library. It never reads as JSON, so a signed body
// cannot pass for it, nor it for a body.
func bodilessPayload(req *http.Request) []byte {
	return []byte(req.Method + " " + req.URL.RequestURI() + "\n" + req.Header.Get("X-Coachd-User-Id") + "\n" +
		req.Header.Get("X-Coachd-Session-Id") + "\n" + req.Header.Get("X-Coachd-Tool-Use-Id"))
}
