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
// webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>", with
// a secret given as whsec_<base64 key>. The app checks the signature and
// the timestamp's age, and can drop a webhook-id it has seen.

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

// sign sets the signature headers of a call whose body is body.
func (k WebhookSecret) sign(h http.Header, body []byte, now time.Time) {
	id := coachd.NewID("whk", now)
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}
