package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coachd/coachd"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Backoff bounds the wait before a crashed or unreachable server is
// started again: Base after the first failure, doubling, at most Max.
type Backoff struct {
	Base, Max time.Duration
}

// DefaultBackoff is the restart policy of pack servers.
var DefaultBackoff = Backoff{Base: 250 * time.Millisecond, Max: 30 * time.Second}

// delay is the wait after n consecutive failures (n ≥ 1).
func (b Backoff) delay(n int) time.Duration {
	d := b.Base
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// DefaultStartWait is how long a turn waits for a server's tools while
// the server starts (or lists them): longer, the turn goes on without
// them, the start goes on in the background, and later turns do not wait
// for the server until it has answered.
const DefaultStartWait = 2 * time.Second

// toolsTTL is how long a server's tool list is reused before it is
// listed again (a restart lists it again at once).
const toolsTTL = 5 * time.Minute

// Server is one mounted MCP server: started on first use, started again
// (after a backoff) when it crashed, stopped by Close. It implements
// agent.MCPServer.
type Server struct {
	cfg     Config
	log     *slog.Logger
	backoff Backoff
	hc      *http.Client      // streamable HTTP; nil for stdio
	hide    *strings.Replacer // the file's ${ENV} secrets, in answers, errors and stderr
	wait    time.Duration
	bg      context.Context // the background listings', ended by Close
	stop    context.CancelFunc

	dial chan struct{} // one connection attempt at a time

	mu       sync.Mutex
	sess     *sdk.ClientSession
	tools    []coachd.Tool
	listedAt time.Time
	changes  int       // list changes the server announced (toolsChanged)
	listGen  int       // changes when the last listing began
	streams  int       // event streams the connection opened (streamOpened)
	failures int       // consecutive failed starts or crashes
	retryAt  time.Time // no start before this
	starts   int
	// checkedStart is the start whose listing warnUnlisted checked.
	checkedStart int
	closed       bool
	listing      chan struct{} // closed when the background listing ends; nil when none runs
	since        time.Time     // when it began
	listErr      error         // the last listing's failure
	slow         bool          // a listing outlasted the wait, and none has succeeded since
}

// Options tune a Server.
type Options struct {
	Logger  *slog.Logger
	Backoff Backoff // zero: DefaultBackoff
	// HTTPClient carries streamable HTTP requests (nil: a plain client);
	// the server's headers are added to each request.
	HTTPClient *http.Client
	StartWait  time.Duration // zero: DefaultStartWait; a file's start_wait wins
}

// NewServer returns a server that starts on first use.
func NewServer(cfg *Config, opts Options) *Server {
	s := &Server{cfg: *cfg, log: opts.Logger, backoff: opts.Backoff, wait: opts.StartWait, dial: make(chan struct{}, 1),
		hide: strings.NewReplacer(cfg.hidden...)}
	s.bg, s.stop = context.WithCancel(context.Background())
	if cfg.StartWait > 0 {
		s.wait = cfg.StartWait
	}
	if s.wait <= 0 {
		s.wait = DefaultStartWait
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With("mcp_server", cfg.Name)
	if s.backoff.Base <= 0 || s.backoff.Max < s.backoff.Base {
		s.backoff = DefaultBackoff
	}
	if cfg.URL != "" {
		base := opts.HTTPClient
		if base == nil {
			base = &http.Client{}
		}
		hc := *base
		rt := hc.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		wait := streamWait
		if cfg.Timeout > 0 { // the connection's initialize and GET share it
			wait = min(wait, cfg.Timeout/3)
		}
		hc.Transport = headerTransport{h: cfg.Headers, next: streamTransport{next: rt, wait: wait, log: s.log, opened: s.streamOpened, backoff: s.backoff}}
		s.hc = &hc
	}
	return s
}

// Name is the server's name (its file's).
func (s *Server) Name() string { return s.cfg.Name }

// Prefix begins its tools' names: <prefix>__<tool>.
func (s *Server) Prefix() string { return s.cfg.Prefix }

// Starts is how many times the server was started (or connected to).
func (s *Server) Starts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// session returns the running session, starting the server when it is
// not running; after a failure it first waits out the backoff (within
// ctx).
func (s *Server) session(ctx context.Context) (*sdk.ClientSession, error) {
	select {
	case s.dial <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("the MCP server is starting: %w", ctx.Err())
	}
	defer func() { <-s.dial }()
	s.mu.Lock()
	sess, closed, wait := s.sess, s.closed, time.Until(s.retryAt)
	s.mu.Unlock()
	switch {
	case closed:
		return nil, errors.New("the MCP server is shut down")
	case sess != nil:
		return sess, nil
	case wait > 0:
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// Waiting could only end in this same error, later.
			return nil, fmt.Errorf("the MCP server is restarting (next attempt in %s)", wait.Round(time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("the MCP server is restarting (next attempt in %s)", wait.Round(time.Millisecond))
		}
	}
	sess, err := s.connect(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.fail()
		s.log.Warn("mcp server did not start", "err", err, "failures", s.failures, "retry_in", time.Until(s.retryAt).Round(time.Millisecond))
		return nil, err
	}
	if s.closed {
		sess.Close()
		return nil, errors.New("the MCP server is shut down")
	}
	s.sess, s.tools = sess, nil
	s.starts++
	s.log.Info("mcp server started", "starts", s.starts)
	go s.watch(sess)
	return sess, nil
}

// fail counts a failed start or a crash; s.mu is held.
func (s *Server) fail() {
	s.failures++
	s.retryAt = time.Now().Add(s.backoff.delay(s.failures))
}

// watch waits for the session to end; an end nobody asked for is a
// crash, answered by a restart on next use, after the backoff.
func (s *Server) watch(sess *sdk.ClientSession) {
	err := sess.Wait()
	s.drop(sess, err)
}

// drop forgets a session that ended (once), and reaps its process.
func (s *Server) drop(sess *sdk.ClientSession, err error) {
	s.mu.Lock()
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	s.sess, s.tools = nil, nil
	closed := s.closed
	if !closed {
		s.fail()
		s.log.Warn("mcp server stopped; it is restarted on next use", "err", s.redact(err), "failures", s.failures,
			"retry_in", time.Until(s.retryAt).Round(time.Millisecond))
	}
	s.mu.Unlock()
	go sess.Close() // reaps the process; the caller does not wait for it
}

func (s *Server) connect(ctx context.Context) (*sdk.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "coachd", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			s.toolsChanged()
		},
	})
	s.mu.Lock()
	s.streams = 0
	s.mu.Unlock()
	var t sdk.Transport
	var started atomic.Pointer[sdk.ClientSession] // for a cut write (groupConn.Write) or a flood (answerTransport)
	cut := func(why error) {
		if sess := started.Load(); sess != nil {
			s.drop(sess, why)
		}
	}
	if s.cfg.URL != "" {
		// The event stream carries the server's notifications; one that
		// lasted is opened again under the SDK when it ends (resumeBody):
		// the SDK's own reopening ends the session after 5 in a row
		// without a new event id, a proxy's idle cuts among them.
		hc := *s.hc
		hc.Transport = newAnswerTransport(s.hc.Transport, cut)
		t = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &hc}
	} else {
		// Not exec.CommandContext: the process outlives this call.
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.cfg.Dir
		cmd.Env = childEnv(s.cfg.Env)
		cmd.Stderr = &logWriter{log: s.log, hide: s.hide}
		gt := newGroupTransport(cmd, 2*time.Second)
		gt.answerWait = s.cfg.Timeout
		gt.cut = cut
		t = gt
	}
	sess, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", s.redact(err))
	}
	started.Store(sess)
	return sess, nil
}

// childEnv is a stdio server's environment: what a program needs to run
// (PATH, HOME, locale, temp dir) and what its file sets, never coachd's
// own secrets.
func childEnv(set map[string]string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

// Close stops the server (closing stdin, then SIGTERM, then SIGKILL for a
// stdio one); later uses fail.
func (s *Server) Close() error {
	s.stop()
	s.mu.Lock()
	sess := s.sess
	s.closed, s.sess, s.tools = true, nil, nil
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	if err := sess.Close(); err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return fmt.Errorf("mcp %s: close: %w", s.cfg.Name, err)
		}
	}
	return nil
}

// broken drops a session whose connection failed under a request, or
// that the server no longer knows (an HTTP server that restarted): the
// watcher may not have seen it yet.
func (s *Server) broken(sess *sdk.ClientSession, err error) {
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "connection closed") ||
		strings.Contains(err.Error(), "session not found") || frameTooLarge(err) {
		s.drop(sess, err)
	}
}

// frameTooLarge reports whether err is the SDK's refusal of a stdio
// frame over sdk.DefaultMaxLineLength: the connection reads no more, and
// is dropped at once.
func frameTooLarge(err error) bool {
	return errFrameTooLarge != nil && errors.Is(err, errFrameTooLarge)
}

// errFrameTooLarge is the error the SDK's stdio connection reads when a
// frame is over its limit. The SDK does not export it: it is had here
// from a connection refusing a frame over a limit of one byte, so that
// it is known as a value, not by its text (which a server's own error
// may quote).
var errFrameTooLarge = func() error {
	ctx := context.Background()
	c, err := (&sdk.IOTransport{Reader: io.NopCloser(strings.NewReader("[1]\n")), Writer: nopWriteCloser{}, MaxLineLength: 1}).Connect(ctx)
	if err != nil {
		return nil
	}
	defer c.Close()
	_, err = c.Read(ctx)
	return err
}()

// nopWriteCloser writes nothing.
type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

// redact replaces the server's URL in err's text by its origin: the HTTP
// client quotes the URL, whose path or query may hold a key from ${ENV},
// and the text goes to logs and to the model (and the user's stream).
// The file's ${ENV} secrets (URL, headers, env), which a refusal may
// quote alone, are hidden too, and the text is cut to MaxUpstreamText.
func (s *Server) redact(err error) error {
	if err == nil {
		return err
	}
	msg := err.Error()
	out := msg
	if s.cfg.URL != "" {
		forms := []string{s.cfg.URL}
		origin := "the server's URL"
		if u, perr := url.Parse(s.cfg.URL); perr == nil {
			origin = u.Scheme + "://" + u.Host + "/…"
			forms = append(forms, u.String())
			if u.User != nil { // net/http quotes it with the password as ***
				v := *u
				v.User = url.UserPassword(u.User.Username(), "***")
				forms = append(forms, v.String())
			}
		}
		for _, f := range forms {
			out = strings.ReplaceAll(out, f, origin)
		}
	}
	// The server chose the rest of the text: bounded and clean, as
	// coachd passes on any upstream's error.
	if out = coachd.UpstreamText(s.hide.Replace(out), coachd.MaxUpstreamText); out == msg {
		return err
	}
	return coachd.Masked(err, out)
}

// succeeded ends a run of failures: the next crash waits Base again.
func (s *Server) succeeded() {
	s.mu.Lock()
	s.failures = 0
	s.mu.Unlock()
}

// headerTransport adds a server file's headers to every request.
type headerTransport struct {
	h    http.Header
	next http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.h {
			r.Header[k] = v
		}
	}
	resp, err := t.next.RoundTrip(r)
	if err == nil && !eventStream(resp) {
		// The SDK reads a JSON answer whole, and an error's body whatever
		// its type (an event stream is bounded per event): bound it as a
		// stdio frame is.
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: sdk.DefaultMaxLineLength}
	}
	return resp, err
}

// eventStream reports whether resp is a successful event stream, the one
// answer the SDK reads a piece at a time. Media types are matched as the
// SDK matches them: "Text/Event-Stream; charset=utf-8" is one.
func eventStream(resp *http.Response) bool {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == "text/event-stream" && resp.StatusCode >= 200 && resp.StatusCode < 300
}

// cappedBody fails a read past its limit.
type cappedBody struct {
	io.ReadCloser
	left int
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, fmt.Errorf("the MCP server's answer is larger than %d bytes", sdk.DefaultMaxLineLength)
	}
	if len(p) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= n
	if b.left < 0 {
		return 0, fmt.Errorf("the MCP server's answer is larger than %d bytes", sdk.DefaultMaxLineLength)
	}
	return n, err
}

// logWriter logs a stdio server's stderr, line by line, bounded, its
// file's secrets hidden.
type logWriter struct {
	log  *slog.Logger
	hide *strings.Replacer
	mu   sync.Mutex
	n    int
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n > 1000 {
		return len(p), nil // a chatty server cannot fill the log
	}
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if w.n++; line != "" && w.n <= 1000 {
			w.log.Info("mcp server stderr", "line", truncate(w.hide.Replace(line), 500))
		}
	}
	return len(p), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cut(s, n) + "…"
}
