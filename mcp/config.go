// Package mcp connects coachd to the Model Context Protocol, over the
// official Go SDK: a pack's MCP servers (mcp/*.yaml) become tools of its
// agents (client side), and coachd serves a user's notes, files and
// coaches to desktop MCP clients (server side).
package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/envsecret"
	"github.com/coachd/coachd/internal/yamlerr"
	"gopkg.in/yaml.v3"
)

// Limits of a server file.
const (
	DefaultTimeout   = 30 * time.Second
	MaxTimeout       = 5 * time.Minute
	DefaultMaxOutput = 32 << 10
	MaxMaxOutput     = 1 << 20
	// MaxStartWait bounds a file's start_wait (and so does its timeout).
	MaxStartWait = time.Minute
	// Sep joins a server's prefix and a tool's own name: <prefix>__<tool>.
	Sep = "__"
)

var (
	nameRe = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	// prefixRe leaves room for "__" and a tool name within the 64
	// characters the Messages API allows.
	prefixRe = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]{0,23}$`)
	// ToolNameRe is the Messages API's rule for tool names.
	ToolNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
)

// Config is one mcp/<name>.yaml, checked and with ${ENV} resolved.
type Config struct {
	Name    string
	Command string   // stdio: the program, run in Dir
	Args    []string // stdio
	Env     map[string]string
	Dir     string // the pack directory, where a stdio command runs
	URL     string // streamable HTTP
	Headers http.Header
	Prefix  string
	Timeout time.Duration
	// StartWait is how long a turn waits for the server to start and
	// list its tools (zero: the Options' wait, else DefaultStartWait).
	StartWait time.Duration
	// MaxOutput caps one result's text, in bytes.
	MaxOutput int
	// Allow and Deny filter the server's own tool names (path.Match
	// patterns); an empty Allow allows every tool Deny does not name.
	Allow, Deny []string

	file        string // the file's name, and command's line in it, for CheckCommand
	commandLine int
	// hidden pairs each ${ENV} value of the headers, of the URL but its
	// host and of an env variable or argument named like a credential,
	// and the password of a URL in any env value or argument, with its
	// stand-in in what the server answers or prints: a server that
	// quotes the key it was given must not hand it to the model, the
	// user or logs.
	hidden []string
}

// minHidden is the shortest ${ENV} value hidden in answers.
const minHidden = envsecret.MinLen

// file is the YAML shape of mcp/<name>.yaml.
type file struct {
	Name      string            `yaml:"name"`
	Command   string            `yaml:"command"`
	Args      []string          `yaml:"args"`
	Env       map[string]string `yaml:"env"`
	URL       string            `yaml:"url"`
	Headers   map[string]string `yaml:"headers"`
	Prefix    string            `yaml:"prefix"`
	Timeout   string            `yaml:"timeout"`
	StartWait string            `yaml:"start_wait"`
	MaxOutput int               `yaml:"max_output"`
	Allow     []string          `yaml:"allow"`
	Deny      []string          `yaml:"deny"`
}

var fileKeys = map[string]bool{"name": true, "command": true, "args": true, "env": true, "url": true,
	"headers": true, "prefix": true, "timeout": true, "start_wait": true, "max_output": true, "allow": true, "deny": true}

// ParseConfig reads mcp/<name>.yaml. file prefixes every problem as
// file:line; all problems are returned, joined. getenv resolves ${NAME}
// and ${NAME:-default} in command, args, env, url and headers (a missing
// variable is a problem).
func ParseConfig(fileName string, data []byte, getenv func(string) string) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlerr.Error(fileName, nil, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:1: an MCP server file is a YAML mapping", fileName)
	}
	root := doc.Content[0]
	var f file
	if err := root.Decode(&f); err != nil {
		return nil, yamlerr.Error(fileName, root, err)
	}
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", fileName, keyLine(root, key), fmt.Sprintf(format, args...)))
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; !fileKeys[k.Value] {
			errs = append(errs, fmt.Errorf("%s:%d: unknown key %q", fileName, k.Line, k.Value))
		}
	}
	resolve := func(key, s string) string {
		return coachd.ExpandEnv(s, getenv, func(name string) { bad(key, "%s", coachd.EnvProblem(name)) })
	}
	c := &Config{Name: f.Name, Prefix: f.Prefix, Timeout: DefaultTimeout, MaxOutput: DefaultMaxOutput, Headers: http.Header{},
		file: fileName, commandLine: keyLine(root, "command")}
	base := strings.TrimSuffix(strings.TrimSuffix(path.Base(fileName), ".yaml"), ".yml")
	switch {
	case !nameRe.MatchString(f.Name):
		bad("name", "name must be a lowercase name (letters, digits, - and _; at most 32)")
	case f.Name != base:
		bad("name", "name %q must match the file name %q", f.Name, base)
	}
	if c.Prefix == "" {
		c.Prefix = strings.ReplaceAll(f.Name, "_", "-")
	}
	if !prefixRe.MatchString(c.Prefix) {
		bad("prefix", "prefix must be letters, digits and -, starting with a letter, at most 24 (tools are named <prefix>__<tool>)")
	}
	switch {
	case f.Command != "" && f.URL != "":
		bad("url", "command (stdio) and url (streamable HTTP) exclude each other")
	case f.Command == "" && f.URL == "":
		bad("command", "command (a stdio server) or url (a streamable HTTP server) is required")
	case f.Command != "":
		c.Command = resolve("command", f.Command)
		for i, a := range f.Args {
			// --api-key ${CRM} and --api-key=${CRM} name a credential too.
			flag, _, _ := strings.Cut(a, "=")
			secretFlag := strings.HasPrefix(flag, "-") && envsecret.SecretName(flag) ||
				i > 0 && strings.HasPrefix(f.Args[i-1], "-") && envsecret.SecretName(f.Args[i-1])
			c.Args = append(c.Args, coachd.ExpandEnv(a, func(name string) string {
				s := getenv(name)
				if len(s) >= minHidden && (secretFlag || envsecret.SecretName(name)) {
					c.hidden = append(c.hidden, envsecret.Hide(s)...)
				}
				return s
			}, func(name string) { bad("args", "%s", coachd.EnvProblem(name)) }))
			c.hidden = append(c.hidden, envsecret.URLPassword(c.Args[i])...)
		}
		c.Env = map[string]string{}
		for k, v := range f.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				bad("env", "invalid environment variable name %q", k)
				continue
			}
			c.Env[k] = coachd.ExpandEnv(v, func(name string) string {
				s := getenv(name)
				if len(s) >= minHidden && (envsecret.SecretName(k) || envsecret.SecretName(name)) {
					c.hidden = append(c.hidden, envsecret.Hide(s)...)
				}
				return s
			}, func(name string) { bad("env", "%s", coachd.EnvProblem(name)) })
			c.hidden = append(c.hidden, envsecret.URLPassword(c.Env[k])...)
		}
		if len(f.Headers) > 0 {
			bad("headers", "headers go with url, not with a stdio command")
		}
	default:
		var urlValues []string
		c.URL = coachd.ExpandEnv(f.URL, func(name string) string {
			s := getenv(name)
			urlValues = append(urlValues, s)
			return s
		}, func(name string) { bad("url", "%s", coachd.EnvProblem(name)) })
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("url", "url must be an absolute http or https URL")
		} else {
			c.hidden = envsecret.URLValues(urlValues, u)
		}
		for k, v := range f.Headers {
			if k == "" || strings.ContainsAny(k, " :\r\n") {
				bad("headers", "invalid header name %q", k)
				continue
			}
			v = coachd.ExpandEnv(v, func(name string) string {
				s := getenv(name)
				if len(s) >= minHidden {
					c.hidden = append(c.hidden, envsecret.Hide(s)...)
				}
				return s
			}, func(name string) { bad("headers", "%s", coachd.EnvProblem(name)) })
			if strings.ContainsAny(v, "\r\n") {
				bad("headers", "header %s has a line break", k)
			}
			c.Headers.Set(k, v)
		}
		if len(f.Args) > 0 || len(f.Env) > 0 {
			bad("args", "args and env go with command, not with url")
		}
	}
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		if err != nil || d <= 0 || d > MaxTimeout {
			bad("timeout", "timeout must be a duration like 30s, at most 5m")
		}
		c.Timeout = d
	}
	if f.StartWait != "" {
		d, err := time.ParseDuration(f.StartWait)
		if err != nil || d <= 0 || d > MaxStartWait || d > c.Timeout {
			bad("start_wait", "start_wait must be a duration like 10s, at most 1m and at most the timeout (%s)", c.Timeout)
		}
		c.StartWait = d
	}
	if f.MaxOutput != 0 {
		if f.MaxOutput < 256 || f.MaxOutput > MaxMaxOutput {
			bad("max_output", "max_output must be between 256 and %d bytes", MaxMaxOutput)
		}
		c.MaxOutput = f.MaxOutput
	}
	for key, list := range map[string][]string{"allow": f.Allow, "deny": f.Deny} {
		if err := checkPatterns(list); err != nil {
			bad(key, "%s: %v", key, err)
		}
		for _, p := range list {
			// A full name never matches: a deny so written hides nothing.
			if own, ok := strings.CutPrefix(p, c.Prefix+Sep); ok {
				bad(key, "%s: %q names the tool with its prefix: this file's allow and deny take the server's own names (%q)", key, p, own)
			}
		}
	}
	c.Allow, c.Deny = f.Allow, f.Deny
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// checkPatterns checks a list of tool names or path.Match patterns.
func checkPatterns(list []string) error {
	for _, p := range list {
		if p == "" || len(p) > 128 {
			return fmt.Errorf("%q is not a tool name or pattern", p)
		}
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("%q is not a valid pattern", p)
		}
	}
	return nil
}

// CheckPatterns checks an agent's allow or deny list.
func CheckPatterns(list []string) error { return checkPatterns(list) }

// Allowed reports whether name passes an allow list (empty: everything)
// and a deny list.
func Allowed(name string, allow, deny []string) bool {
	match := func(list []string) bool {
		for _, p := range list {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
	return (len(allow) == 0 || match(allow)) && !match(deny)
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
