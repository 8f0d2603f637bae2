// Package envsecret says which of a pack file's ${ENV} values are secrets
// to hide in what an endpoint answers (webhook tools, MCP servers), and
// escapes a database URL's password for the driver (EscapePassword).
package envsecret

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// MinLen is the shortest value hidden: a credential is longer, and hiding
// "us" or "1" would garble answers.
const MinLen = 8

// Mark stands in for a hidden value.
const Mark = "[redacted]"

// Hide is the strings.Replacer pairs that hide v as written and as a
// JSON answer may spell it: PHP's json_encode writes "/" as "\/".
func Hide(v string) []string {
	out := []string{v, Mark}
	if strings.Contains(v, "/") {
		out = append(out, strings.ReplaceAll(v, "/", `\/`), Mark)
	}
	return out
}

// URLValues lists, as strings.Replacer pairs, the ${ENV} values of u that
// an answer must not quote: a key in its query, a token in its path, a
// password. A value naming the host is the address (${APP_URL}/zones),
// not a secret. Each goes as written and as an app decodes it. u's
// password, wherever it came from, is hidden too, and so is the Basic
// credential it is sent as (base64 of user:password).
func URLValues(values []string, u *url.URL) []string {
	var hidden []string
	if pw, ok := u.User.Password(); ok && pw != "" {
		for _, v := range []string{pw, base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + pw))} {
			if len(v) >= MinLen {
				hidden = append(hidden, Hide(v)...)
			}
		}
	}
	host := u.Hostname()
	for _, v := range values {
		if len(v) < MinLen || strings.Contains(v, host) {
			continue
		}
		hidden = append(hidden, Hide(v)...)
		for _, unescape := range []func(string) (string, error){url.QueryUnescape, url.PathUnescape} {
			if d, err := unescape(v); err == nil && d != v && len(d) >= MinLen {
				hidden = append(hidden, Hide(d)...)
			}
		}
	}
	return hidden
}

// URLPassword lists, as strings.Replacer pairs, the password of the URL
// v holds, alone or as a flag's value (--db=postgres://u:pw@host/db), as
// written and as decoded: a URL's password is a credential whatever its
// variable or flag is named (DATABASE_URL), while its host still shows.
func URLPassword(v string) []string {
	for _, s := range []string{v, v[strings.IndexByte(v, '=')+1:]} {
		u, err := url.Parse(s)
		if err != nil || u.User == nil || !strings.Contains(s, "://") {
			continue
		}
		hidden := URLValues(nil, u)
		if _, raw, ok := strings.Cut(u.User.String(), ":"); ok && len(raw) >= MinLen && strings.Contains(s, raw) {
			hidden = append(hidden, Hide(raw)...)
		}
		return hidden
	}
	return nil
}

// SecretName reports whether an environment variable's name says it
// holds a credential (CRM_TOKEN, API_KEY, DB_PASSWORD, …): such a value
// is hidden, while others (a directory, a log level) still show.
func SecretName(name string) bool {
	name = strings.ToLower(name)
	for _, w := range []string{"key", "token", "secret", "password", "passwd", "credential", "auth"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// EscapePassword is rawURL with its password percent-encoded, for a
// driver to be handed: a password may hold '@' (net/url and pgx read the
// user info to the last one), and pgx quotes a URL it cannot parse (a
// wrong sslmode, port or timeout) with the password masked only up to its
// first '@'. ok is false when net/url cannot parse rawURL (nor then can
// pgx); its reason is not given, since it may hold the password
// (postgres://app:pw/x@host reads pw/x's start as a port).
func EscapePassword(rawURL string) (escaped string, ok bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false
	}
	if pw, set := u.User.Password(); set {
		u.User = url.UserPassword(u.User.Username(), pw)
		return u.String(), true
	}
	return rawURL, true
}
