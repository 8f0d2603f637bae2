package deploy_test

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
	"gopkg.in/yaml.v3"
)

// composeService is the part of a compose service the test reads.
type composeService struct {
	Image       string            `yaml:"image"`
	Build       composeBuild      `yaml:"build"`
	Environment map[string]string `yaml:"environment"`
}

// composeBuild is a service's build: its context and build arguments.
type composeBuild struct {
	Context string            `yaml:"context"`
	Args    map[string]string `yaml:"args"`
}

func readCompose(t *testing.T) map[string]composeService {
	t.Helper()
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return f.Services
}

// composeVar is a compose ${NAME}, ${NAME:-default} or ${NAME:?message}.
var composeVar = regexp.MustCompile(`\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}`)

// interpolate fills compose's variables from vars: a missing one takes
// its default, or fails the test when the file says it is required.
func interpolate(t *testing.T, v string, vars map[string]string) string {
	t.Helper()
	return composeVar.ReplaceAllStringFunc(v, func(m string) string {
		g := composeVar.FindStringSubmatch(m)
		if val, ok := vars[g[1]]; ok {
			return val
		}
		if g[2] == "?" {
			t.Fatalf("compose.yaml requires %s (%s): the test does not set it", g[1], g[3])
		}
		return g[3]
	})
}

// The compose file's topology, run from the built image without a Docker
// engine: its two coachd replicas (buildah containers with the service's
// environment) on one PostgreSQL (pgtest's, for the postgres service),
// behind Caddy with the file's Caddyfile, the model a fake Anthropic run
// from the same image. A user created through the proxy chats through
// it, streamed, and the proxy spreads requests over both replicas, which
// share every state in the database. What differs from compose is the
// network: every process shares the host's, so each listens on a
// loopback port of its own, the proxy's upstreams and the database's URL
// name those ports instead of the services, and ANTHROPIC_BASE_URL points
// at the fake.
func TestComposeReplicas(t *testing.T) {
	services := readCompose(t)
	c1, c2, proxy := services["coachd1"], services["coachd2"], services["proxy"]
	if c1.Build.Context != ".." {
		t.Fatalf("coachd1 builds %q, want the repository (..), the Dockerfile this package builds", c1.Build.Context)
	}
	if _, ok := c1.Build.Args["REVISION"]; !ok {
		t.Fatalf("coachd1's build passes no REVISION: its coachd version would name no commit")
	}
	if !maps.Equal(c1.Environment, c2.Environment) || c2.Build.Context != c1.Build.Context || !maps.Equal(c1.Build.Args, c2.Build.Args) {
		t.Fatalf("the two replicas differ: %+v and %+v", c1, c2)
	}
	if _, ok := services["postgres"]; !ok || !strings.HasPrefix(proxy.Image, "caddy:") {
		t.Fatalf("compose.yaml wants a postgres service and a caddy proxy: %v", slices.Sorted(maps.Keys(services)))
	}
	caddy, err := exec.LookPath("caddy")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("caddy is not installed (apt-get install caddy; CI is set: nothing may be skipped)")
		}
		t.Skip("caddy is not installed: the compose file's proxy is not run (apt-get install caddy)")
	}
	b := mustImage(t)
	dsn := pgtest.NewDatabase(t)

	fakeAddr := freeAddr(t)
	// Its events paced, so a turn lasts seconds: long enough to see its
	// first text come through the proxy while it still runs.
	fake := runInImage(t, b, nil, "/coachd", "fake-anthropic", "--addr", fakeAddr, "--event-delay", "300ms")
	fake.out.wait(t, `"fake Anthropic…"`, prefixed("fake Anthropic"))

	const adminKey = "compose-test-admin-key-0123456789"
	vars := map[string]string{"COACHD_ADMIN_KEY": adminKey, "ANTHROPIC_API_KEY": "sk-ant-test"}
	addrs := []string{freeAddr(t), freeAddr(t)}
	replicas := make([]*container, len(addrs))
	for i, addr := range addrs {
		env := []string{"COACHD_ADDR=" + addr, "ANTHROPIC_BASE_URL=http://" + fakeAddr}
		for _, k := range slices.Sorted(maps.Keys(c1.Environment)) {
			v := interpolate(t, c1.Environment[k], vars)
			if k == "COACHD_DB" {
				if !strings.HasPrefix(v, "postgres://") {
					t.Fatalf("the replicas' COACHD_DB is %q, want the postgres service's URL", v)
				}
				v = dsn
			}
			env = append(env, k+"="+v)
		}
		replicas[i] = runImage(t, b, env)
	}
	for _, r := range replicas {
		r.out.wait(t, `"coachd listening on"`, prefixed("coachd listening on"))
	}

	proxyAddr := freeAddr(t)
	startCaddy(t, caddy, proxyAddr, addrs)
	base := "http://" + proxyAddr

	var created struct {
		ID     string `json:"id"`
		APIKey string `json:"api_key"`
	}
	if status := call(t, "POST", base+"/v1/users", adminKey, `{"name":"compose"}`, &created); status != 201 || created.APIKey == "" {
		t.Fatalf("POST /v1/users through the proxy: %d %+v", status, created)
	}
	for range 4 {
		var me struct{ ID string }
		if status := call(t, "GET", base+"/v1/me", created.APIKey, "", &me); status != 200 || me.ID != created.ID {
			t.Fatalf("GET /v1/me through the proxy: %d %+v, want %s", status, me, created.ID)
		}
	}
	text, session, stop := chatStream(t, base, created.APIKey, "hello through the proxy", nil)
	if !strings.Contains(text, "hello through the proxy") || stop != "end_turn" {
		t.Fatalf("the streamed reply %q (%s) does not echo the message", text, stop)
	}
	var msgs struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if status := call(t, "GET", base+"/v1/sessions/"+session+"/messages", created.APIKey, "", &msgs); status != 200 || len(msgs.Messages) != 2 {
		t.Fatalf("the session's messages through the proxy: %d, %d messages, want 2", status, len(msgs.Messages))
	}
	// SSE unbuffered (flush_interval -1): the first text of a turn comes
	// through while the turn still runs, so a stop asked then (through
	// the proxy, to whichever replica) finds it running and ends it. A
	// proxy that held the response back would deliver the text once the
	// turn had ended, and the stop would find none (404).
	_, _, stop = chatStream(t, base, created.APIKey, "stop me halfway", func(session string) {
		if status := call(t, "POST", base+"/v1/sessions/"+session+"/stop", created.APIKey, "", nil); status != 202 {
			t.Errorf("the stop asked at the first text through the proxy: %d, want 202 (the turn running)", status)
		}
	})
	if stop != "aborted" {
		t.Errorf("the stopped turn ended %q, want aborted", stop)
	}
	// Round robin: each replica answered some of the requests, and its log
	// lines are JSON (COACHD_LOG_FORMAT).
	for i, r := range replicas {
		if n := jsonRequests(t, r.out.String(), "/v1/me"); n == 0 {
			t.Errorf("replica %d answered none of the four GET /v1/me:\n%s", i+1, r.out.String())
		}
	}
}

// startCaddy runs caddy on the compose file's Caddyfile, its site on
// addr and its upstreams the replicas', and waits until it answers.
func startCaddy(t *testing.T, caddy, addr string, upstreams []string) {
	t.Helper()
	data, err := os.ReadFile("Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	conf := string(data)
	for _, old := range []string{":8080 {", "coachd1:8080 coachd2:8080"} {
		if !strings.Contains(conf, old) {
			t.Fatalf("the Caddyfile has no %q to point at this test's ports", old)
		}
	}
	conf = strings.Replace(conf, ":8080 {", "http://"+addr+" {", 1)
	conf = strings.Replace(conf, "coachd1:8080 coachd2:8080", strings.Join(upstreams, " "), 1)
	conf = "{\n\tadmin off\n}\n" + conf // no admin endpoint on a port of its own
	dir := t.TempDir()
	file := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(caddy, "run", "--config", file, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	out := newLineWaiter()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("caddy's output:\n%s", out.String())
		}
	})
	// Caddy says when its configuration is served (a JSON log line).
	out.wait(t, "serving initial configuration", func(line string) bool {
		var rec struct{ Msg string }
		return json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving initial configuration"
	})
	if status := call(t, "GET", "http://"+addr+"/readyz", "", "", nil); status != 200 {
		t.Fatalf("GET /readyz through the proxy: %d", status)
	}
}

// chatStream sends a message on a new session through /v1/chat/stream
// and returns the reply's text, the session's id and the turn's stop
// reason; atFirstText, when not nil, is called at the first text.
func chatStream(t *testing.T, base, key, msg string, atFirstText func(session string)) (text, session, stop string) {
	t.Helper()
	body, err := json.Marshal(map[string]string{"message": msg})
	if err != nil {
		t.Fatal(err)
	}
	resp := send(t, "POST", base+"/v1/chat/stream", key, string(body))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /v1/chat/stream: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	session = resp.Header.Get("X-Coachd-Session-Id")
	var sb strings.Builder
	event := ""
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		data, isData := strings.CutPrefix(line, "data: ")
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case isData && event == "content_delta":
			var d struct{ Text string }
			if err := json.Unmarshal([]byte(data), &d); err != nil {
				t.Fatal(err)
			}
			if sb.Len() == 0 && atFirstText != nil {
				atFirstText(session)
			}
			sb.WriteString(d.Text)
		case isData && event == "message_end":
			var end struct {
				StopReason string `json:"stop_reason"`
			}
			if err := json.Unmarshal([]byte(data), &end); err != nil {
				t.Fatal(err)
			}
			return sb.String(), session, end.StopReason
		}
	}
	t.Fatalf("the stream ended without message_end: %v", sc.Err())
	return "", "", ""
}

// jsonRequests counts a replica's JSON log lines of a request to path;
// a line that is not JSON fails the test.
func jsonRequests(t *testing.T, log, path string) int {
	t.Helper()
	n := 0
	for line := range strings.Lines(log) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue // buildah's own lines, or coachd's banner on stdout
		}
		var rec struct{ Msg, Path string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line is not JSON: %q", line)
			continue
		}
		if rec.Msg == "request" && rec.Path == path {
			n++
		}
	}
	return n
}
