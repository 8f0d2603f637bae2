package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore"
)

// syncBuffer is a bytes.Buffer safe for the program's goroutines.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	grown chan struct{} // closed by the next Write; nil when nobody waits
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grown != nil {
		close(b.grown)
		b.grown = nil
	}
	return b.buf.Write(p)
}

// waitFor returns re's submatches in the buffer once it matches. A child
// process's stderr is copied by its own goroutine, so a line it logged
// before its stdout said "listening" may not be here yet when that arrives.
func (b *syncBuffer) waitFor(t testing.TB, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		b.mu.Lock()
		m := re.FindStringSubmatch(b.buf.String())
		if m == nil && b.grown == nil {
			b.grown = make(chan struct{})
		}
		grown := b.grown
		b.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-grown:
		case <-deadline:
			t.Fatalf("no %q in the log after 10s:\n%s", re, b)
		}
	}
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func getenvFrom(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// program is coachd serve running in a goroutine.
type program struct {
	url            string
	stdout, stderr *syncBuffer
	cancel         context.CancelFunc
	done           chan error
}

var listeningRe = regexp.MustCompile(`coachd listening on (http://\S+)`)

// MustServe runs "coachd serve args..." on a free port and waits until
// /healthz answers.
func MustServe(t *testing.T, env map[string]string, args ...string) *program {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	p := &program{stdout: &syncBuffer{}, stderr: &syncBuffer{}, cancel: cancel, done: make(chan error, 1)}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.stdout.Write([]byte(sc.Text() + "\n"))
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	go func() {
		err := run(ctx, append([]string{"coachd", "serve"}, args...), getenvFrom(env), pw, p.stderr)
		pw.Close()
		p.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	select {
	case p.url = <-urls:
	case err := <-p.done:
		p.done <- err
		t.Fatalf("serve exited before listening: %v\nstderr:\n%s", err, p.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not print its address; stderr:\n%s", p.stderr)
	}
	for i := 0; ; i++ {
		resp, err := http.Get(p.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if i == 200 {
			t.Fatalf("/healthz never answered 200: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p
}

// stop cancels the program's context and returns what run returned.
func (p *program) stop(t *testing.T) error {
	t.Helper()
	p.cancel()
	select {
	case err := <-p.done:
		p.done <- err // for Cleanup
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after cancel")
		return nil
	}
}

var apiKeyRe = regexp.MustCompile(`API key: (ck_[A-Za-z0-9_-]+)`)

func TestServe(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	env := map[string]string{"COACHD_ADDR": "127.0.0.1:0", "COACHD_ADMIN_KEY": "s3cret-admin"}
	p := MustServe(t, env, "--db", dbPath, "--demo", "--log-format", "json")
	ctx := context.Background()

	m := apiKeyRe.FindStringSubmatch(p.stdout.String())
	if m == nil {
		t.Fatalf("no demo API key in stdout:\n%s", p.stdout)
	}
	demo := client.New(p.url, m[1], nil)
	me, err := demo.Me(ctx)
	if err != nil || me.Name != "demo" {
		t.Fatalf("me = %+v, %v", me, err)
	}
	admin := client.New(p.url, "s3cret-admin", nil)
	u, key, err := admin.CreateUser(ctx, "dana", nil)
	if err != nil {
		t.Fatal(err)
	}
	dana := client.New(p.url, key, nil)
	sess, err := dana.CreateSession(ctx, "", "first")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := dana.Session(ctx, sess.ID); err != nil || got.UserID != u.ID {
		t.Fatalf("session = %+v, %v", got, err)
	}
	if _, err := demo.Session(ctx, sess.ID); coachd.ErrorCode(err) != coachd.ENOTFOUND {
		t.Fatalf("demo reading dana's session: %v, want not_found", err)
	}

	if err := p.stop(t); err != nil {
		t.Fatalf("run returned %v after cancel", err)
	}
	logs := p.stderr.String()
	for _, want := range []string{`"msg":"listening"`, `"addr":"` + strings.TrimPrefix(p.url, "http://") + `"`, `"admin_key":"(set)"`, `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
	for _, secret := range []string{"s3cret-admin", m[1], key} {
		if strings.Contains(logs, secret) {
			t.Errorf("secret %q in the log:\n%s", secret, logs)
		}
	}

	// A second start finds the demo user instead of making another.
	p = MustServe(t, env, "--db", dbPath, "--demo")
	if out := p.stdout.String(); !strings.Contains(out, "demo user "+me.ID) {
		t.Errorf("second start does not name demo user %s:\n%s", me.ID, out)
	}
	// It prints a fresh key that works; the old one stops working.
	m2 := apiKeyRe.FindStringSubmatch(p.stdout.String())
	if m2 == nil || m2[1] == m[1] {
		t.Fatalf("second start printed no new key:\n%s", p.stdout)
	}
	if me2, err := client.New(p.url, m2[1], nil).Me(ctx); err != nil || me2.ID != me.ID {
		t.Errorf("new demo key: %v, %v", me2, err)
	}
	if _, err := client.New(p.url, m[1], nil).Me(ctx); coachd.ErrorCode(err) != coachd.EUNAUTHORIZED {
		t.Errorf("old demo key: got %v, want unauthorized", err)
	}
	if err := p.stop(t); err != nil {
		t.Fatal(err)
	}
	db := mustOpen(t, dbPath)
	if users, _, err := db.ListUsers(ctx, coachd.Page{}); err != nil || len(users) != 2 {
		t.Errorf("users = %d, %v; want demo and dana", len(users), err)
	}
}

// TestGracefulShutdown cancels the program while a request is in flight:
// the request completes, new connections are refused, run returns nil.
func TestGracefulShutdown(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	key := mustCreateUser(t, dbPath, "erin")
	p := MustServe(t, nil, "--addr", "127.0.0.1:0", "--db", dbPath)

	// With Expect: 100-continue the body is sent only once the handler
	// reads it, so when the first write returns the handler is running.
	body, bodyW := io.Pipe()
	req, _ := http.NewRequest("POST", p.url+"/v1/notes", body)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	hc := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := hc.Do(req)
		done <- result{resp, err}
	}()
	if _, err := bodyW.Write([]byte(`{"note_type":"tip","title":"in flight",`)); err != nil {
		t.Fatal(err)
	}

	p.cancel()
	addr := strings.TrimPrefix(p.url, "http://")
	for i := 0; ; i++ { // wait until Shutdown has closed the listener
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if i == 500 {
			t.Fatal("listener still open after cancel")
		}
		time.Sleep(10 * time.Millisecond)
	}
	bodyW.Write([]byte(`"content":"finishes after shutdown began"}`))
	bodyW.Close()
	r := <-done
	if r.err != nil {
		t.Fatalf("in-flight request: %v", r.err)
	}
	r.resp.Body.Close()
	if r.resp.StatusCode != http.StatusCreated {
		t.Errorf("in-flight request: %s, want 201", r.resp.Status)
	}
	if err := p.stop(t); err != nil {
		t.Errorf("run = %v, want nil", err)
	}
}

func mustOpen(t *testing.T, dsn string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mustCreateUser runs "coachd users create" and returns the key it printed.
func mustCreateUser(t *testing.T, dbPath, name string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "users", "create", "--name", name, "--budget", "1000"}, getenvFrom(map[string]string{"COACHD_DB": dbPath}), &stdout, &stderr); err != nil {
		t.Fatalf("users create: %v\n%s", err, stderr.String())
	}
	return strings.TrimSuffix(stdout.String(), "\n")
}

func TestUsersCreate(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	key := mustCreateUser(t, dbPath, "frank")
	if !regexp.MustCompile(`^ck_[A-Za-z0-9_-]{43}$`).MatchString(key) {
		t.Fatalf("stdout %q: want the API key alone", key)
	}
	u, err := mustOpen(t, dbPath).FindUserByKeyHash(context.Background(), server.HashAPIKey(key))
	if err != nil || u.Name != "frank" || u.TokenBudget != 1000 {
		t.Fatalf("user = %+v, %v", u, err)
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "users", "list", "--db", dbPath}, getenvFrom(nil), &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.Contains(out, u.ID) || !strings.Contains(out, "frank") || strings.Contains(out, key) {
		t.Errorf("users list:\n%s", out)
	}
}

func TestMigrate(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	for range 2 {
		var stdout bytes.Buffer
		if err := run(context.Background(), []string{"coachd", "migrate", "--db", dbPath}, getenvFrom(nil), &stdout, io.Discard); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		if !strings.Contains(stdout.String(), "migrated") {
			t.Errorf("stdout %q", stdout.String())
		}
	}
	if _, err := os.Stat(dbPath); err != nil {
		t.Error(err)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"-h"}, {"help"}, {"serve", "-h"}, {"serve", "--help"}, {"users", "-h"}, {"users", "create", "-h"},
		{"users", "list", "-h"}, {"migrate", "-h"}, {"version", "-h"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"coachd"}, args...), getenvFrom(nil), &stdout, &stderr)
		if err != nil || !strings.Contains(stdout.String(), "Usage") {
			t.Errorf("coachd %s: %v; stdout %q", strings.Join(args, " "), err, stdout.String())
		}
	}
	var stdout bytes.Buffer
	_ = run(context.Background(), []string{"coachd", "serve", "-h"}, getenvFrom(nil), &stdout, io.Discard)
	for _, flag := range []string{"-addr", "-db", "-admin-key", "-demo", "-log-format", "COACHD_ADDR"} {
		if !strings.Contains(stdout.String(), flag) {
			t.Errorf("serve -h lacks %s", flag)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{}, {"bogus"}, {"serve", "--bogus"}, {"serve", "extra"}, {"serve", "--log-format", "xml", "--db", filepath.Join(t.TempDir(), "x.db")},
		{"users"}, {"users", "delete"}, {"users", "create"}, {"users", "create", "--name", "x", "--budget", "-5"},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), append([]string{"coachd"}, args...), getenvFrom(nil), io.Discard, &stderr)
		if !errors.Is(err, errUsage) || stderr.Len() == 0 {
			t.Errorf("coachd %s: %v, stderr %q; want a usage error", strings.Join(args, " "), err, stderr.String())
		}
	}
}

func TestVersion(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "version"}, getenvFrom(nil), &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "coachd ") || !strings.Contains(stdout.String(), "go1.") {
		t.Errorf("version %q", stdout.String())
	}
}

func TestMaskDSN(t *testing.T) {
	for in, want := range map[string]string{
		"./coachd.db": "./coachd.db",
		"postgres://app:hunter2@db:5432/coachd?sslmode=disable": "postgres://app:xxxxx@db:5432/coachd?sslmode=disable",
		"postgres://db/coachd?password=hunter2":                 "postgres://db/coachd?password=xxxxx",
	} {
		if got := maskDSN(in); got != want {
			t.Errorf("maskDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorLine: a failed command says "coachd:" once, though the coded
// error it wraps says it too (users create with a taken name printed
// "coachd: create user: coachd: conflict: …").
func TestErrorLine(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("create user: %w", coachd.Errorf(coachd.ECONFLICT, "a user named %q exists already", "ada")): `coachd: create user: conflict: a user named "ada" exists already`,
		coachd.Errorf(coachd.EINVALID, "bad"): "coachd: invalid_request: bad",
		errors.New("open db: no such file"):   "coachd: open db: no such file",
	} {
		if got := errorLine(err); got != want {
			t.Errorf("errorLine(%v) = %q, want %q", err, got, want)
		}
	}
}
