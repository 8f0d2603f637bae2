package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/envsecret"
	"github.com/coachd/coachd/internal/yamlerr"
	"go.opentelemetry.io/otel/propagation"
	"gopkg.in/yaml.v3"
)

// Webhook defaults and bounds.
const (
	DefaultWebhookTimeout  = 30 * time.Second // seed 004's function timeout
	DefaultWebhookMaxBytes = 64 << 10
	MaxWebhookMaxBytes     = 4 << 20
)

var (
	toolNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// Webhook is a pack tool that calls an app's own HTTP endpoint, defined in
// tools/<name>.yaml. Secrets in its URL and headers are ${ENV} references
// resolved once, at load; they never appear in results or logs. Every call
// carries the user id and session id, as X-Coachd-User-Id and
// X-Coachd-Session-Id headers and, for methods with a body, in the JSON
// body {input, user_id, session_id, tool_use_id}. GET and DELETE send the
// input's top-level fields as query parameters instead. With a secret,
// each call is signed (signing.go).
type Webhook struct {
	def      coachd.ToolDef
	method   string
	url      string
	headers  http.Header
	timeout  time.Duration
	maxBytes int64
	client   *http.Client
	query    url.Values    // the URL's own query: GET input may not override it
	secret   WebhookSecret // signs each call; nil: unsigned
	// hide replaces the ${ENV} values of its headers and URL (credentials)
	// in an answer: an app that quotes the token it was sent ("invalid
	// token sk_…", "GET /x?api_key=…") must not hand it to the model, the
	// session and the user.
	hide *strings.Replacer
}

// minHidden is the shortest ${ENV} value hidden in answers.
const minHidden = envsecret.MinLen

// UseSecret signs the tool's calls with secret unless the tool has its own
// (secret: in its file).
func (w *Webhook) UseSecret(secret WebhookSecret) {
	if w.secret == nil {
		w.secret = secret
	}
}

// webhookFile is the YAML shape of tools/<name>.yaml.
type webhookFile struct {
	Name             string            `yaml:"name"`
	Description      string            `yaml:"description"`
	Kind             string            `yaml:"kind"`
	Method           string            `yaml:"method"`
	URL              string            `yaml:"url"`
	Headers          map[string]string `yaml:"headers"`
	Timeout          string            `yaml:"timeout"`
	MaxResponseBytes int64             `yaml:"max_response_bytes"`
	InputSchema      yaml.Node         `yaml:"input_schema"`
	Allow            []string          `yaml:"allow"`
	Secret           string            `yaml:"secret"`
	Category         string            `yaml:"category"`
	// RequiresApproval pauses the turn before each call until the user
	// approves it.
	RequiresApproval bool `yaml:"requires_approval"`
}

// ParseWebhook reads a webhook tool definition. path prefixes every
// problem as path:line; all problems are returned, joined. getenv resolves
// ${NAME} references (a missing variable is a problem). policy is the
// operator's address policy (nil: public addresses only); the tool's own
// allow list may narrow it, never widen it.
func ParseWebhook(path string, data []byte, getenv func(string) string, policy *AddrPolicy) (*Webhook, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlerr.Error(path, nil, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:1: a tool file is a YAML mapping", path)
	}
	root := doc.Content[0]
	var f webhookFile
	if err := root.Decode(&f); err != nil {
		return nil, yamlerr.Error(path, root, err)
	}
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", path, keyLine(root, key), fmt.Sprintf(format, args...)))
	}
	known := map[string]bool{"name": true, "description": true, "kind": true, "method": true, "url": true,
		"headers": true, "timeout": true, "max_response_bytes": true, "input_schema": true, "category": true, "allow": true,
		"secret": true, "requires_approval": true}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; !known[k.Value] {
			errs = append(errs, fmt.Errorf("%s:%d: unknown key %q", path, k.Line, k.Value))
		}
	}
	w := &Webhook{headers: http.Header{}}
	if policy == nil {
		policy = &AddrPolicy{flag: "--webhook-allow"}
	}
	policy, err := policy.Narrow(f.Allow)
	if err != nil {
		bad("allow", "allow: %v", err)
		policy = &AddrPolicy{flag: "--webhook-allow"}
	}
	w.client = policy.client()
	if !toolNameRe.MatchString(f.Name) {
		bad("name", "name must be lowercase letters, digits and underscores, starting with a letter")
	}
	if f.Kind != "" && f.Kind != "webhook" {
		bad("kind", "kind must be webhook")
	}
	if f.Category != "" && f.Category != string(coachd.ToolInstant) {
		bad("category", "category must be instant: a webhook runs and returns its result (requires_approval: true waits for the user first)")
	}
	if strings.TrimSpace(f.Description) == "" {
		bad("description", "description is required: the model reads it to decide when to call the tool")
	}
	w.method = strings.ToUpper(f.Method)
	if w.method == "" {
		w.method = http.MethodPost
	}
	switch w.method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		bad("method", "method must be GET, POST, PUT, PATCH or DELETE")
	}
	resolve := func(key, s string) string {
		return coachd.ExpandEnv(s, getenv, func(name string) { bad(key, "%s", coachd.EnvProblem(name)) })
	}
	var urlValues []string // the URL's ${ENV} values
	w.url = coachd.ExpandEnv(f.URL, func(name string) string {
		s := getenv(name)
		urlValues = append(urlValues, s)
		return s
	}, func(name string) { bad("url", "%s", coachd.EnvProblem(name)) })
	var hidden []string
	if u, err := url.Parse(w.url); f.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("url", "url must be an absolute http or https URL")
	} else if err := policy.checkURLHost(u.Hostname()); err != nil {
		bad("url", "url: %v", err)
	} else {
		w.query = u.Query()
		hidden = envsecret.URLValues(urlValues, u)
	}
	for k, v := range f.Headers {
		// A header's problem is on its own line, not on headers:.
		line := subKeyLine(root, "headers", k)
		bad := func(_, format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...)))
		}
		if k == "" || strings.ContainsAny(k, " :\r\n") {
			bad("headers", "invalid header name %q", k)
			continue
		}
		v = coachd.ExpandEnv(v, func(name string) string {
			s := getenv(name)
			if len(s) >= minHidden {
				hidden = append(hidden, envsecret.Hide(s)...)
			}
			return s
		}, func(name string) { bad("headers", "%s", coachd.EnvProblem(name)) })
		if strings.ContainsAny(v, "\r\n") {
			// A key read from a file keeps its newline: every call would
			// fail with "invalid header field value".
			bad("headers", "header %s has a line break", k)
		}
		w.headers.Set(k, v)
	}
	w.hide = strings.NewReplacer(hidden...)
	if f.Secret != "" {
		v := resolve("secret", f.Secret)
		if k, err := ParseWebhookSecret(v); err != nil {
			bad("secret", "secret: %v", err)
		} else {
			w.secret = k
		}
	}
	w.timeout = DefaultWebhookTimeout
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		if err != nil || d <= 0 || d > 5*time.Minute {
			bad("timeout", "timeout must be a duration like 5s, at most 5m")
		}
		w.timeout = d
	}
	w.maxBytes = DefaultWebhookMaxBytes
	if f.MaxResponseBytes != 0 {
		if f.MaxResponseBytes < 0 || f.MaxResponseBytes > MaxWebhookMaxBytes {
			bad("max_response_bytes", "max_response_bytes must be between 1 and %d", MaxWebhookMaxBytes)
		}
		w.maxBytes = f.MaxResponseBytes
	}
	schema := json.RawMessage(`{"type":"object"}`)
	if f.InputSchema.Kind != 0 {
		var v any
		if err := f.InputSchema.Decode(&v); err != nil {
			bad("input_schema", "input_schema: %v", err)
		} else if m, ok := v.(map[string]any); !ok || m["type"] != "object" {
			bad("input_schema", "input_schema must be a JSON Schema of type object")
		} else if schema, err = json.Marshal(v); err != nil {
			bad("input_schema", "input_schema: %v", err)
		}
	}
	w.def = coachd.ToolDef{Name: f.Name, Description: f.Description, InputSchema: schema, Category: coachd.ToolInstant,
		RequiresApproval: f.RequiresApproval}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return w, nil
}

// keyLine is the line of key in a mapping node (the mapping's line when
// the key is absent).
func keyLine(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return m.Line
}

// subKeyLine is the line of sub in the mapping under key (key's line
// when either is absent).
func subKeyLine(m *yaml.Node, key, sub string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return keyLine(m.Content[i+1], sub)
		}
	}
	return m.Line
}

func (w *Webhook) Definition() coachd.ToolDef { return w.def }

func (w *Webhook) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req, refusal, err := w.request(ctx, call, env)
	if err != nil {
		return coachd.ToolResult{}, err
	}
	if refusal != "" {
		return refuse(refusal)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		// The client's error text holds the URL, which may hold a secret;
		// a policy refusal names only the address.
		var ae *AddrError
		if errors.As(err, &ae) {
			return refuse(fmt.Sprintf("%s: refused to connect: %v", w.def.Name, ae))
		}
		if ctx.Err() != nil {
			return refuse(fmt.Sprintf("%s: the endpoint did not answer within %s", w.def.Name, w.timeout))
		}
		return refuse(fmt.Sprintf("%s: the endpoint could not be reached", w.def.Name))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, w.maxBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return refuse(fmt.Sprintf("%s: the endpoint did not answer within %s", w.def.Name, w.timeout))
		}
		return refuse(fmt.Sprintf("%s: reading the response failed", w.def.Name))
	}
	if int64(len(body)) > w.maxBytes {
		return refuse(fmt.Sprintf("%s: the response is larger than %d bytes and was dropped", w.def.Name, w.maxBytes))
	}
	text := w.hide.Replace(string(body)) // what the model may read of it
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		// Following it could lead anywhere, headers and secrets included.
		return refuse(fmt.Sprintf("%s: the endpoint answered a redirect (HTTP %d); webhooks do not follow redirects: point the tool at the final URL", w.def.Name, resp.StatusCode))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return refuse(fmt.Sprintf("%s: the endpoint answered HTTP %d: %s", w.def.Name, resp.StatusCode, snippet([]byte(text), 300)))
	}
	if !utf8.Valid(body) {
		return refuse(fmt.Sprintf("%s: the response is not text", w.def.Name))
	}
	if bytes.IndexByte(body, 0) >= 0 {
		return refuse(fmt.Sprintf("%s: the response is not text (it holds a NUL byte)", w.def.Name))
	}
	if isJSON(resp.Header.Get("Content-Type")) {
		// Declared JSON must be JSON: a cut or padded body is the app's
		// error, not data for the model to guess at. It is checked, never
		// decoded (the model reads the text as sent).
		var v json.RawMessage
		if err := json.Unmarshal(body, &v); err != nil {
			return refuse(fmt.Sprintf("%s: the response says it is JSON but is not valid JSON: %s", w.def.Name, snippet([]byte(err.Error()), 200)))
		}
	}
	return coachd.ToolResult{Content: text}, nil
}

// collides reports whether an input field would be read as one of the
// URL's own query parameters: apps read names loosely (ASP.NET ignores
// case; PHP reads "a.b", "a b" and "a_b[]" as a_b, the last one winning).
func (w *Webhook) collides(field string) bool {
	name := queryName(field)
	for k := range w.query {
		if queryName(k) == name {
			return true
		}
	}
	return false
}

// queryName is a query parameter's name as the loosest reader sees it.
func queryName(k string) string {
	if i := strings.IndexByte(k, '['); i > 0 {
		k = k[:i]
	}
	return strings.Map(func(r rune) rune {
		if r == '.' || r == ' ' {
			return '_'
		}
		return r
	}, strings.ToLower(k))
}

// request builds the call; a refusal is a tool error for the model.
func (w *Webhook) request(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (*http.Request, string, error) {
	u := w.url
	var body io.Reader
	var raw []byte
	if w.method == http.MethodGet || w.method == http.MethodDelete {
		var in map[string]any
		// Numbers as written: through float64 a 64-bit id would reach the
		// app as another id, and 1e999 as null.
		dec := json.NewDecoder(bytes.NewReader(call.Input))
		dec.UseNumber()
		_ = dec.Decode(&in) // validated as an object before Execute
		q := url.Values{}
		for k, v := range in {
			if w.collides(k) {
				// Merged, the app would see both values and might read ours.
				return nil, fmt.Sprintf("%s: input field %q collides with the URL's own query parameter", w.def.Name, k), nil
			}
			if s, ok := v.(string); ok {
				q.Set(k, s)
			} else {
				b, _ := json.Marshal(v)
				q.Set(k, string(b))
			}
		}
		if len(q) > 0 {
			sep := "?"
			if strings.Contains(u, "?") {
				sep = "&"
			}
			u += sep + q.Encode()
		}
	} else {
		b, err := json.Marshal(map[string]any{
			"input": json.RawMessage(call.Input), "user_id": env.User.ID,
			"session_id": env.Session.ID, "tool_use_id": call.ID,
		})
		if err != nil {
			return nil, "", err
		}
		body, raw = bytes.NewReader(b), b
	}
	req, err := http.NewRequestWithContext(ctx, w.method, u, body)
	if err != nil {
		return nil, "", coachd.Errorf(coachd.EINTERNAL, "%s: build request", w.def.Name)
	}
	for k, v := range w.headers {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Coachd-User-Id", env.User.ID)
	req.Header.Set("X-Coachd-Session-Id", env.Session.ID)
	req.Header.Set("X-Coachd-Tool-Use-Id", call.ID)
	// The turn's trace goes on into the app (traceparent, tracestate).
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	if w.secret != nil {
		if body == nil {
			raw = bodilessPayload(req) // after the headers it signs are set
		}
		w.secret.sign(req.Header, raw, time.Now())
	}
	return req, "", nil
}

// isJSON reports whether a Content-Type names JSON (application/json or
// a +json type).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// snippet is the start of b as text for the model: at most n runes, valid
// UTF-8, without NUL bytes.
func snippet(b []byte, n int) string {
	r := []rune(strings.ReplaceAll(strings.ToValidUTF8(string(b), ""), "\x00", ""))
	if len(r) > n {
		return strings.TrimSpace(string(r[:n])) + "…"
	}
	return strings.TrimSpace(string(r))
}
