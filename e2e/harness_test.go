package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/internal/syncbuf"
)

// env is one running coachd with its fake model, the proxy in front of it
// and a browser tab.
type env struct {
	t      *testing.T
	fake   *anthropictest.Server
	faults *faults
	url    string // the proxy, which the browser uses
	key    string // the demo user's API key
	ctx    context.Context
}

// newEnv starts everything at the given viewport size; args go to
// coachd serve (--pack ...).
func newEnv(t *testing.T, width, height int, args ...string) *env {
	t.Helper()
	requireChromium(t)
	bin := coachdBinary(t)
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)

	base, key := startCoachd(t, bin, fake.URL(), args...)
	f := &faults{}
	upstream, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	proxy.FlushInterval = -1 // SSE: pass every write through at once
	// Its own transport: httptest.Server.Close closes the idle connections
	// of http.DefaultTransport, which must not touch this proxy's.
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	proxy.Transport = tr
	proxy.ErrorLog = nil
	var h http.Handler = proxy
	if !servesUI(t, base) {
		t.Fatal("coachd serve does not serve the UI (web.Handler) at GET /")
	}
	front := httptest.NewServer(f.wrap(h))
	t.Cleanup(front.Close)

	ctx := newBrowser(t, width, height)
	tctx, cancel := context.WithTimeout(ctx, testTimeout)
	t.Cleanup(cancel)
	return &env{t: t, fake: fake, faults: f, url: front.URL, key: key, ctx: tctx}
}

// startCoachd runs `coachd serve --demo` on a free port with a fresh
// SQLite file and returns its base URL and the demo key it printed.
func startCoachd(t *testing.T, bin, anthropicURL string, args ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "coachd.db"), "--demo"}, args...)...)
	cmd.Env = append(cmd.Environ(),
		"ANTHROPIC_BASE_URL="+anthropicURL,
		"ANTHROPIC_API_KEY=test",
		"COACHD_PROVIDER=anthropic",
	)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start coachd: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("coachd stderr:\n%s", stderr.String())
		}
	})

	type ready struct{ base, key string }
	got := make(chan ready, 1)
	go func() {
		var r ready
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if k, ok := strings.CutPrefix(line, "API key: "); ok {
				r.key = strings.TrimSpace(k)
			}
			if u, ok := strings.CutPrefix(line, "coachd listening on "); ok {
				r.base = strings.TrimSpace(u)
				got <- r
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case r := <-got:
		if r.key == "" {
			t.Fatal("coachd serve --demo printed no API key")
		}
		waitHealthy(t, r.base)
		return r.base, r.key
	case <-time.After(20 * time.Second):
		t.Fatalf("coachd did not start; stderr:\n%s", stderr.String())
	}
	return "", ""
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s/healthz never answered 200", base)
}

func servesUI(t *testing.T, base string) bool {
	t.Helper()
	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK && strings.HasPrefix(res.Header.Get("Content-Type"), "text/html")
}

// faults fails chosen requests on their way to coachd, and counts them.
type faults struct {
	mu      sync.Mutex
	next    []fault
	cuts    []*cut         // cutAnswers
	counted map[string]int // "METHOD path-prefix" → requests seen
	streams map[*http.Request]context.CancelFunc
	changed chan struct{} // closed, and replaced, when a stream ends
}

// waitStreamsClosed waits until no stream passes through the proxy: the
// browser has closed every one it opened.
func (f *faults) waitStreamsClosed(t *testing.T) {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		f.mu.Lock()
		n, changed := len(f.streams), f.ended()
		f.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("%d streams still open after %s", n, waitTimeout)
		}
	}
}

// ended is the channel closed when the next stream ends; f.mu is held.
func (f *faults) ended() chan struct{} {
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
	return f.changed
}

// cutStreams cuts the streams passing through the proxy now, as a network
// drop would: the browser's connection ends mid-reply.
func (f *faults) cutStreams() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cancel := range f.streams {
		cancel()
	}
	n := len(f.streams)
	f.streams = nil
	return n
}

type fault struct {
	method, prefix   string
	status           int
	body, retryAfter string
	hold             chan struct{} // not nil: pass the request on once closed
	holdAnswer       chan struct{} // not nil: pass the request on, and its answer once closed
	answered         chan struct{} // closed when coachd has answered (holdAnswer)
	cutHeld          bool          // holdAnswer: cut the answer on the network once released
	shutdownAfter    int           // > 0: end the stream after this many events as a server going down does
	endType          string        // the error that ends it then: server_shutdown by default
}

// shutdownNext ends the next stream with this method and path prefix
// after n events the way a replica that shuts down ends its streams: with
// a retryable server_shutdown error carrying the last event id. The
// request to coachd is cut there; the turn goes on.
func (f *faults) shutdownNext(method, prefix string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next = append(f.next, fault{method: method, prefix: prefix, shutdownAfter: n})
}

// unavailableNext ends the next stream with this method and path prefix
// after n events the way a follower that cannot read the event log (the
// database down) ends it: with a retryable unavailable error carrying
// the last event id. The turn goes on.
func (f *faults) unavailableNext(method, prefix string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next = append(f.next, fault{method: method, prefix: prefix, shutdownAfter: n, endType: "unavailable"})
}

// shutdownWriter passes whole SSE frames through until it has passed
// after events, then writes the shutdown notice (or, with typ
// unavailable, the database's) and cuts the request.
type shutdownWriter struct {
	http.ResponseWriter
	typ           string
	after, events int
	buf           []byte
	lastID        string
	done          bool
	cut           context.CancelFunc
}

func (w *shutdownWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, io.ErrClosedPipe
	}
	w.buf = append(w.buf, p...)
	for !w.done {
		i := strings.Index(string(w.buf), "\n\n")
		if i < 0 {
			break
		}
		frame := string(w.buf[:i+2])
		w.buf = w.buf[i+2:]
		for _, line := range strings.Split(frame, "\n") {
			if id, ok := strings.CutPrefix(line, "id: "); ok {
				w.lastID = id
			}
			if strings.HasPrefix(line, "event: ") {
				w.events++
			}
		}
		io.WriteString(w.ResponseWriter, frame)
		if w.events >= w.after {
			if w.typ == "unavailable" {
				fmt.Fprintf(w.ResponseWriter, "id: %s\nevent: error\ndata: {\"type\":\"unavailable\",\"message\":\"the database is unavailable for now: reconnect with Last-Event-ID %s\",\"retryable\":true,\"retry_after\":1,\"last_event_id\":%q}\n\n", w.lastID, w.lastID, w.lastID)
			} else {
				fmt.Fprintf(w.ResponseWriter, "id: %s\nevent: error\ndata: {\"type\":\"server_shutdown\",\"message\":\"the server is restarting: reconnect with Last-Event-ID %s\",\"retryable\":true,\"last_event_id\":%q}\n\n", w.lastID, w.lastID, w.lastID)
			}
			w.done = true
			w.cut()
		}
	}
	w.Flush()
	return len(p), nil
}

func (w *shutdownWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// holdNext holds the next request with this method and path prefix on its
// way to coachd until release is called.
func (f *faults) holdNext(method, prefix string) (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	hold := make(chan struct{})
	f.next = append(f.next, fault{method: method, prefix: prefix, hold: hold})
	var once sync.Once
	return func() { once.Do(func() { close(hold) }) }
}

// holdAnswerNext passes the next request with this method and path
// prefix on to coachd at once, but holds its answer on the way back until
// release is called (or the browser gives up on it); answered is closed
// once coachd has answered, its status and headers held.
func (f *faults) holdAnswerNext(method, prefix string) (answered <-chan struct{}, release func()) {
	return f.holdAnswer(method, prefix, false)
}

// holdAnswerThenCutNext is holdAnswerNext whose answer, at release, is
// cut on the network instead of passed on: coachd took the request (a
// chat turn admitted and running) while the browser, which waited for
// the answer meanwhile, sees a network error.
func (f *faults) holdAnswerThenCutNext(method, prefix string) (answered <-chan struct{}, cut func()) {
	return f.holdAnswer(method, prefix, true)
}

func (f *faults) holdAnswer(method, prefix string, cut bool) (answered <-chan struct{}, release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	hold, done := make(chan struct{}), make(chan struct{})
	f.next = append(f.next, fault{method: method, prefix: prefix, holdAnswer: hold, answered: done, cutHeld: cut})
	var once sync.Once
	return done, func() { once.Do(func() { close(hold) }) }
}

// cutAnswers passes the requests with this method and path prefix on to
// coachd, and cuts the browser's connection as coachd answers each, before
// its status and headers, until stop is called: the request was taken (a
// chat turn admitted and running) while the browser sees a network error,
// however often it sends it again by itself. answered is closed once
// coachd has answered the first.
func (f *faults) cutAnswers(method, prefix string) (answered <-chan struct{}, stop func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &cut{method: method, prefix: prefix, answered: make(chan struct{})}
	f.cuts = append(f.cuts, c)
	return c.answered, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.cuts = slices.DeleteFunc(f.cuts, func(x *cut) bool { return x == c })
	}
}

type cut struct {
	method, prefix string
	answered       chan struct{}
	once           sync.Once
}

// cutAnswer cuts the connection at the response's status: nothing of it
// reaches the browser.
type cutAnswer struct {
	http.ResponseWriter
	cut *cut
}

func (w *cutAnswer) WriteHeader(int) {
	w.cut.once.Do(func() { close(w.cut.answered) })
	// net/http closes the connection without a response.
	panic(http.ErrAbortHandler)
}

func (w *cutAnswer) Write([]byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return 0, io.ErrClosedPipe
}

func (w *cutAnswer) Flush() {}

// heldAnswer holds a response's status and headers until hold is closed
// or ctx is done.
type heldAnswer struct {
	http.ResponseWriter
	ctx            context.Context
	hold, answered chan struct{}
	cut            bool // cut the connection at release instead
	once           sync.Once
}

func (w *heldAnswer) WriteHeader(status int) {
	w.once.Do(func() { close(w.answered) })
	select {
	case <-w.hold:
	case <-w.ctx.Done():
	}
	if w.cut {
		// net/http closes the connection without a response.
		panic(http.ErrAbortHandler)
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *heldAnswer) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// failNext makes the next request with this method and path prefix fail
// with status and the API's JSON error body.
func (f *faults) failNext(method, prefix string, status int) {
	f.failNextWith(method, prefix, status, fmt.Sprintf(`{"error":{"code":"internal","message":"injected failure (%d)"}}`, status), "")
}

// failNextWith is failNext with a chosen error body and Retry-After.
func (f *faults) failNextWith(method, prefix string, status int, body, retryAfter string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next = append(f.next, fault{method: method, prefix: prefix, status: status, body: body, retryAfter: retryAfter})
}

// count returns how many requests with this method and path prefix the
// proxy saw.
func (f *faults) count(method, prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counted[method+" "+prefix]
}

func (f *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// coachd may answer (a stream's first event) before the proxy has
		// read the request's body to its end; net/http would then read
		// the rest itself and close the body under the proxy, which cuts
		// the request to coachd, and with it the stream.
		_ = http.NewResponseController(w).EnableFullDuplex()
		f.mu.Lock()
		if f.counted == nil {
			f.counted = map[string]int{}
		}
		for _, p := range []string{"/v1/chat/stream", "/v1/notes", "/v1/sessions", "/v1/me"} {
			if strings.HasPrefix(r.URL.Path, p) {
				f.counted[r.Method+" "+p]++
			}
		}
		if strings.HasSuffix(r.URL.Path, "/stream") {
			if strings.HasPrefix(r.URL.Path, "/v1/sessions/") {
				f.counted[r.Method+" session stream"]++
			}
			ctx, cancel := context.WithCancel(r.Context())
			r = r.WithContext(ctx)
			if f.streams == nil {
				f.streams = map[*http.Request]context.CancelFunc{}
			}
			f.streams[r] = cancel
			defer func() {
				f.mu.Lock()
				delete(f.streams, r)
				close(f.ended())
				f.changed = nil
				f.mu.Unlock()
				cancel()
			}()
		}
		var hit *fault
		for i, ft := range f.next {
			if ft.method == r.Method && strings.HasPrefix(r.URL.Path, ft.prefix) {
				hit = &ft
				f.next = append(f.next[:i], f.next[i+1:]...)
				break
			}
		}
		var cutting *cut
		for _, c := range f.cuts {
			if c.method == r.Method && strings.HasPrefix(r.URL.Path, c.prefix) {
				cutting = c
			}
		}
		f.mu.Unlock()
		if cutting != nil {
			next.ServeHTTP(&cutAnswer{ResponseWriter: w, cut: cutting}, r)
			return
		}
		if hit != nil && hit.shutdownAfter > 0 {
			ctx, cut := context.WithCancel(r.Context())
			defer cut()
			sw := &shutdownWriter{ResponseWriter: w, typ: hit.endType, after: hit.shutdownAfter, cut: cut}
			// The proxy aborts the response when its request is cut (a
			// panic with ErrAbortHandler), which resets the connection: the
			// browser may then never read the notice. A server going down
			// ends its stream after the notice; so does this one.
			defer func() {
				if v := recover(); v != nil && (v != http.ErrAbortHandler || !sw.done) {
					panic(v)
				}
			}()
			next.ServeHTTP(sw, r.WithContext(ctx))
			return
		}
		if hit != nil && hit.holdAnswer != nil {
			next.ServeHTTP(&heldAnswer{ResponseWriter: w, ctx: r.Context(), hold: hit.holdAnswer, answered: hit.answered, cut: hit.cutHeld}, r)
			return
		}
		if hit != nil && hit.hold != nil {
			select {
			case <-hit.hold:
				next.ServeHTTP(w, r)
			case <-r.Context().Done():
			}
			return
		}
		if hit != nil {
			w.Header().Set("Content-Type", "application/json")
			if hit.retryAfter != "" {
				w.Header().Set("Retry-After", hit.retryAfter)
			}
			w.WriteHeader(hit.status)
			io.WriteString(w, hit.body)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ---- browser helpers ----------------------------------------------------------

// sub returns the env for a subtest: failures are reported there.
func (e *env) sub(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// run runs actions, failing the test on error.
func (e *env) run(actions ...chromedp.Action[chromedp.Void]) {
	e.t.Helper()
	if err := chromedp.Do(e.ctx, actions...); err != nil {
		e.t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](e *env, expr string) T {
	e.t.Helper()
	v, err := chromedp.Run(e.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		e.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS waits until a JavaScript condition holds, checked on every DOM
// change and every 50 ms.
func (e *env) waitJS(what, cond string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		state, _ := chromedp.Run(e.ctx, chromedp.Evaluate[string](`"phase=" + document.body.dataset.phase + " banner=" + (document.getElementById("banner-host")?.textContent ?? "") + " transcript=" + (document.getElementById("transcript")?.textContent ?? "")`))
		e.t.Fatalf("waiting for %s (%s): %v\npage: %s", what, cond, err, state)
	}
}

// waitVisible waits until an element matching sel is visible.
func (e *env) waitVisible(sel string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		e.t.Fatalf("waiting for %s to be visible: %v", sel, err)
	}
}

// create POSTs body to the API's path as the demo user and wants 201.
func (e *env) create(path, body string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		e.t.Fatalf("POST %s %s: %s", path, body, res.Status)
	}
}

// signIn opens the app the way `serve --demo` tells people to: with the
// key in the URL fragment.
func (e *env) signIn() {
	e.t.Helper()
	e.run(chromedp.Navigate(e.url + "/#key=" + e.key))
	e.waitVisible("#composer")
	e.waitJS("the key to leave the address bar", `location.hash === "" && localStorage.getItem("coachd.key") !== null`)
}

// send types a message and presses Enter.
func (e *env) send(text string) {
	e.t.Helper()
	e.run(
		chromedp.WaitVisible(chromedp.CSS("#input")),
		chromedp.SendKeys(chromedp.CSS("#input"), text),
		pressEnter(),
	)
}

// pressEnter presses Enter the way a keyboard does: one keyDown that
// carries the text, so a handled (preventDefault) keydown types nothing.
// chromedp.KeyEvent sends a separate char event, which would type a
// newline whatever the page does.
func pressEnter() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		down := input.DispatchKeyEventParams{
			Type: input.DispatchKeyEventTypeKeyDown, Key: "Enter", Code: "Enter", Text: "\r", UnmodifiedText: "\r",
			WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13,
		}
		if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, down); err != nil {
			return err
		}
		up := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, up)
		return err
	})
}

// waitIdle waits for the turn to be over.
func (e *env) waitIdle() {
	e.t.Helper()
	e.waitJS("the stream phase to be idle", `document.body.dataset.phase === "idle"`)
}

// recordPhases records every stream phase and every appearance of the
// tool-activity shimmer, with timestamps, into window.__rec.
func (e *env) recordPhases() {
	e.t.Helper()
	eval[chromedp.Void](e, `(() => {
		const rec = window.__rec = { phases: [document.body.dataset.phase], shimmer: [] };
		new MutationObserver(() => {
			const p = document.body.dataset.phase;
			if (rec.phases[rec.phases.length - 1] !== p) rec.phases.push(p);
		}).observe(document.body, { attributes: true, attributeFilter: ["data-phase"] });
		// The shimmer's times are taken as the page adds and removes it, not
		// when the observer runs: that is after the task that added it, which
		// on a loaded machine goes on for milliseconds (the tool's result and
		// the round's end often arrive in the same read). atEnd says it was
		// removed with the turn's end (the phase completing or idle), which
		// takes it down however long it has been up.
		let addedAt = 0, removedAt = 0, shownAt = 0, atEnd = false;
		const isActivity = (n) => n instanceof Element && n.classList.contains("activity");
		const append = Element.prototype.append, remove = Element.prototype.remove;
		Element.prototype.append = function (...nodes) {
			if (nodes.some(isActivity)) addedAt = performance.now();
			return append.apply(this, nodes);
		};
		Element.prototype.remove = function () {
			if (isActivity(this)) {
				removedAt = performance.now();
				atEnd = ["completing", "idle"].includes(document.body.dataset.phase);
			}
			return remove.call(this);
		};
		new MutationObserver(() => {
			const on = document.querySelector(".activity") !== null;
			if (on && !shownAt) { shownAt = addedAt || performance.now(); rec.shimmer.push({ text: document.querySelector(".activity").textContent, ms: -1 }); }
			if (!on && shownAt) {
				const s = rec.shimmer[rec.shimmer.length - 1];
				s.ms = (removedAt || performance.now()) - shownAt;
				s.atEnd = removedAt > 0 && atEnd;
				shownAt = 0;
			}
			addedAt = removedAt = 0;
		}).observe(document.getElementById("transcript"), { childList: true, subtree: true });
	})()`)
}

// openNotes opens the notes panel and waits for it to stop sliding, so
// clicks land where the buttons are.
func (e *env) openNotes() {
	e.t.Helper()
	e.run(chromedp.Click(chromedp.CSS("#notes-open")))
	e.waitVisible(".notes-panel .add-note")
	e.settle()
}

// secondTab opens the conversation e shows in a second tab of the same
// browser (its storage shared) and waits until the tab shows text; the
// tab closes at cancel.
func (e *env) secondTab(text string) (*env, context.CancelFunc) {
	e.t.Helper()
	hash := eval[string](e, `location.hash`)
	tab, cancel := chromedp.NewContext(e.ctx)
	b := *e
	b.ctx = tab
	b.run(chromedp.Navigate(e.url + "/" + hash))
	b.waitJS("the conversation in the second tab", `document.getElementById("transcript").textContent.includes(`+strconv.Quote(text)+`)`)
	return &b, cancel
}

// nightPlan is a reply long enough, paced by replyUnderWay, to act on
// while it is written.
const nightPlan = "Start at the airport, then the stadium at ten, then downtown until two, and rest on Sunday."

// replyUnderWay signs in, asks for nightPlan, streamed a word every
// 40 ms, and waits until its first words show.
func (e *env) replyUnderWay() {
	e.t.Helper()
	e.fake.Enqueue(anthropictest.Text(nightPlan, 4).Paced(0, 40*time.Millisecond))
	e.signIn()
	e.send("Plan my night")
	e.waitJS("the reply under way", `document.getElementById("transcript").textContent.includes("airport")`)
}
