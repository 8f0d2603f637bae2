// Package deploy_test builds the repository's Dockerfile into an image
// with buildah (no Docker engine runs here) and runs what it built: the
// image alone, as `docker run` would, and the compose file's replicas.
//
// No registry is reachable either, so the Dockerfile's FROM images are
// stood in for by local ones of the same names, made from this machine:
// golang's by its Go toolchain and a static busybox (for RUN's shell),
// distroless static's by what the real one gives a static binary (a
// nonroot user of uid 65532, CA certificates, /tmp). The build reads the
// modules from the machine's module cache and talks to nothing.
package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

// image is the name the test builds the Dockerfile as.
const image = "localhost/coachd-image-test"

// nonroot is distroless's unprivileged user, which the image runs as.
const nonroot = 65532

// buildah runs buildah on a store of the test binary's own.
type buildah struct {
	bin  string
	root string   // the store's root
	args []string // the store's flags
}

func (b *buildah) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, b.bin, append(slices.Clone(b.args), args...)...)
	c.Env = append(os.Environ(), "BUILDAH_ISOLATION=chroot")
	return c
}

// out runs buildah and returns its output, trimmed.
func (b *buildah) out(args ...string) (string, error) {
	var out, errb bytes.Buffer
	c := b.cmd(context.Background(), args...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("buildah %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// run is out that fails the test.
func (b *buildah) run(tb testing.TB, args ...string) string {
	tb.Helper()
	out, err := b.out(args...)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

var (
	built    sync.Once
	builder  *buildah
	buildErr error
	skipWhy  string
	storeDir string
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	if storeDir != "" {
		os.RemoveAll(storeDir)
	}
	os.Exit(code)
}

// mustImage builds the image once for the test binary and returns the
// buildah that holds it; without buildah, a static busybox or root it
// skips, or fails when $CI is set (nothing may be skipped in CI).
func mustImage(t *testing.T) *buildah {
	t.Helper()
	built.Do(func() { builder, buildErr = buildImage(t) })
	if skipWhy != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s (CI is set: nothing may be skipped)", skipWhy)
		}
		t.Skip(skipWhy)
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builder
}

// staticBusybox is a statically linked busybox on this machine, or "".
func staticBusybox() string {
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		if isStatic(p) == nil {
			return p
		}
	}
	return ""
}

// isStatic says why the ELF file at path is not statically linked, or
// nil: no interpreter, no shared library needed.
func isStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s has an interpreter: dynamically linked", path)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return fmt.Errorf("%s needs %v", path, libs)
	}
	return nil
}

// imageRevision is the REVISION the test builds the image with.
const imageRevision = "0123456789abcdef0123456789abcdef01234567"

func buildImage(t *testing.T) (*buildah, error) {
	bin, err := exec.LookPath("buildah")
	if err != nil {
		skipWhy = "buildah is not installed: the image is not built (apt-get install buildah busybox-static)"
		return nil, nil
	}
	if os.Geteuid() != 0 {
		skipWhy = "not root: buildah's chroot builds and the stand-ins' nonroot files need root here; the image is not built"
		return nil, nil
	}
	busybox := staticBusybox()
	if busybox == "" {
		skipWhy = "no static busybox for the Go image's stand-in: the image is not built (apt-get install busybox-static)"
		return nil, nil
	}
	if storeDir, err = os.MkdirTemp("", "coachd-image-"); err != nil {
		return nil, err
	}
	root := filepath.Join(storeDir, "storage")
	b := &buildah{bin: bin, root: root, args: []string{"--root", root, "--runroot", filepath.Join(storeDir, "run"), "--storage-driver", "vfs"}}
	froms, err := dockerfileFroms("../Dockerfile")
	if err != nil {
		return nil, err
	}
	for _, from := range froms {
		switch {
		case strings.HasPrefix(from, "golang:"):
			err = goStandIn(b, from, busybox)
		case strings.Contains(from, "distroless/static"):
			err = staticStandIn(b, from)
		default:
			err = fmt.Errorf("the Dockerfile's FROM %s has no stand-in here", from)
		}
		if err != nil {
			return nil, err
		}
	}
	// The build's `go mod download` reads this machine's module cache:
	// what it lacks (a module no package of the tests imports) comes now,
	// as `go test` fetches what it builds.
	if out, err := exec.Command("go", "mod", "download").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go mod download: %v\n%s", err, out)
	}
	modcache, err := goEnv("GOMODCACHE")
	if err != nil {
		return nil, err
	}
	// A build cache of its own that outlives the test: a second run
	// compiles nothing again (the image's flags are not the tests').
	gocache := filepath.Join(os.TempDir(), "coachd-image-gocache")
	if err := os.MkdirAll(gocache, 0o755); err != nil {
		return nil, err
	}
	var errb bytes.Buffer
	c := b.cmd(context.Background(), "bud", "--pull=never", "--isolation", "chroot", "--network", "host",
		"--volume", filepath.Join(modcache, "cache", "download")+":/gomodcache:ro",
		"--volume", gocache+":/gocache",
		"--build-arg", "REVISION="+imageRevision,
		"-f", "../Dockerfile", "-t", image, "..")
	c.Stdout, c.Stderr = io.Discard, &errb
	start := time.Now()
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("buildah bud: %v\n%s", err, errb.String())
	}
	t.Logf("built the Dockerfile in %s", time.Since(start).Round(time.Second))
	return b, nil
}

// dockerfileFroms lists the images the Dockerfile's stages start from.
func dockerfileFroms(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var froms []string
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) >= 2 && strings.EqualFold(f[0], "FROM") {
			froms = append(froms, f[1])
		}
	}
	if len(froms) == 0 {
		return nil, fmt.Errorf("%s has no FROM", path)
	}
	return froms, nil
}

func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// standIn makes an image named name from scratch: fill writes its files
// into the root it is given, env is its environment.
func standIn(b *buildah, name string, env []string, fill func(root string) error) error {
	ctr, err := b.out("from", "scratch")
	if err != nil {
		return err
	}
	root, err := b.out("mount", ctr)
	if err != nil {
		return err
	}
	if err := fill(root); err != nil {
		return fmt.Errorf("stand-in for %s: %v", name, err)
	}
	args := []string{"config"}
	for _, e := range env {
		args = append(args, "--env", e)
	}
	for _, step := range [][]string{append(args, ctr), {"commit", "-q", ctr, qualified(name)}, {"rm", ctr}} {
		if _, err := b.out(step...); err != nil {
			return err
		}
	}
	return nil
}

// baseRoot lays out what both stand-ins have in root: dirs, a /tmp
// anyone may write to, and this machine's CA certificates, if any.
func baseRoot(root string, dirs ...string) error {
	for _, d := range append([]string{"etc/ssl/certs", "tmp"}, dirs...) {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777); err != nil {
		return err
	}
	data, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		return nil // none on this machine: the image gets none either
	}
	return os.WriteFile(filepath.Join(root, "etc", "ssl", "certs", "ca-certificates.crt"), data, 0o644)
}

// qualified is a short image name as the build resolves it (docker.io's
// library for a bare name).
func qualified(name string) string {
	first, _, ok := strings.Cut(name, "/")
	switch {
	case !ok:
		return "docker.io/library/" + name
	case !strings.ContainsAny(first, ".:"):
		return "docker.io/" + name
	}
	return name
}

// goStandIn is golang's image: this machine's Go toolchain, a shell for
// RUN, and the module cache and build cache the build mounts.
func goStandIn(b *buildah, name, busybox string) error {
	goroot, err := goEnv("GOROOT")
	if err != nil {
		return err
	}
	env := []string{"PATH=/usr/local/go/bin:/go/bin:/bin", "GOPATH=/go", "GOTOOLCHAIN=local",
		"GOPROXY=file:///gomodcache", "GOSUMDB=off", "GOCACHE=/gocache"}
	return standIn(b, name, env, func(root string) error {
		if err := baseRoot(root, "bin", "usr/local", "go"); err != nil {
			return err
		}
		if out, err := exec.Command("cp", "-a", busybox, filepath.Join(root, "bin", "busybox")).CombinedOutput(); err != nil {
			return fmt.Errorf("cp busybox: %v %s", err, out)
		}
		for _, cmd := range []string{"sh", "mkdir", "cp", "ls"} {
			if err := os.Symlink("busybox", filepath.Join(root, "bin", cmd)); err != nil {
				return err
			}
		}
		if out, err := exec.Command("cp", "-a", goroot, filepath.Join(root, "usr", "local", "go")).CombinedOutput(); err != nil {
			return fmt.Errorf("cp GOROOT: %v %s", err, out)
		}
		return nil
	})
}

// staticStandIn is distroless static's nonroot image: what it gives a
// static binary.
func staticStandIn(b *buildah, name string) error {
	return standIn(b, name, []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, func(root string) error {
		if err := baseRoot(root, "home/nonroot"); err != nil {
			return err
		}
		if err := os.Chown(filepath.Join(root, "home", "nonroot"), nonroot, nonroot); err != nil {
			return err
		}
		passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonroot, nonroot)
		group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonroot)
		if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte(passwd), 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, "etc", "group"), []byte(group), 0o644)
	})
}

// imageConfig is the part of an OCI image's config the test checks.
type imageConfig struct {
	User         string
	Env          []string
	Entrypoint   []string
	ExposedPorts map[string]struct{}
	Volumes      map[string]struct{}
}

// The image is what the Dockerfile promises: a static binary as its
// entrypoint, run as the unprivileged nonroot user, serving on 8080
// with its SQLite file on the /data volume.
func TestImageConfig(t *testing.T) {
	b := mustImage(t)
	var info struct {
		OCIv1 struct{ Config imageConfig } `json:"OCIv1"`
	}
	if err := json.Unmarshal([]byte(b.run(t, "inspect", "--type", "image", image)), &info); err != nil {
		t.Fatal(err)
	}
	cfg := info.OCIv1.Config
	if cfg.User != "nonroot:nonroot" {
		t.Errorf("User %q, want nonroot:nonroot", cfg.User)
	}
	if !slices.Equal(cfg.Entrypoint, []string{"/coachd", "serve"}) {
		t.Errorf("Entrypoint %q, want [/coachd serve]", cfg.Entrypoint)
	}
	for _, e := range []string{"COACHD_ADDR=0.0.0.0:8080", "COACHD_DB=/data/coachd.db"} {
		if !slices.Contains(cfg.Env, e) {
			t.Errorf("Env %q has no %s", cfg.Env, e)
		}
	}
	for _, e := range cfg.Env {
		if strings.HasPrefix(e, "GO") {
			t.Errorf("the build's environment leaked into the image: %s", e)
		}
	}
	if _, ok := cfg.ExposedPorts["8080/tcp"]; !ok {
		t.Errorf("ExposedPorts %v, want 8080/tcp", cfg.ExposedPorts)
	}
	if _, ok := cfg.Volumes["/data"]; !ok {
		t.Errorf("Volumes %v, want /data", cfg.Volumes)
	}
	ctr := b.run(t, "from", "--pull-never", image)
	defer b.run(t, "rm", ctr)
	root := b.run(t, "mount", ctr)
	bin := filepath.Join(root, "coachd")
	if err := isStatic(bin); err != nil {
		t.Errorf("the image's binary is not static (CGO off, pure-Go SQLite): %v", err)
	}
	// What the binary records of its build: cgo off, a path-free build of
	// cmd/coachd. (The stand-in has no C compiler, so cgo would be off
	// here anyway; with golang's, which has one, the Dockerfile's
	// CGO_ENABLED=0 keeps it off.)
	build, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	for _, want := range []string{"\tCGO_ENABLED=0\n", "\t-trimpath=true\n", "\tpath\tgithub.com/coachd/coachd/cmd/coachd\n"} {
		if !strings.Contains(string(build), want) {
			t.Errorf("the binary's build info has no %q:\n%s", strings.TrimSpace(want), build)
		}
	}
	// The build context has no .git: the revision is the build's
	// argument.
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(out), "("+imageRevision[:12]) {
		t.Errorf("coachd version in the image: %q %v; want it to name the revision %s", out, err, imageRevision[:12])
	}
	if fi, err := os.Stat(filepath.Join(root, "data")); err != nil || fi.Sys().(*syscall.Stat_t).Uid != nonroot {
		t.Errorf("/data is not nonroot's: %v", err)
	}
	if ents, err := os.ReadDir(filepath.Join(root, "examples")); err != nil || len(ents) == 0 {
		t.Errorf("the image has no /examples: %v", err)
	}
}

// container is coachd running from the image (buildah run: the image's
// user, environment and root; the host's network).
type container struct {
	b   *buildah
	id  string // buildah's ID of the container
	out *lineWaiter
}

// runImage starts the image's binary with args (after "serve", as its
// entrypoint has it) and env, and stops it when the test ends.
func runImage(t *testing.T, b *buildah, env []string, args ...string) *container {
	t.Helper()
	return runInImage(t, b, env, append([]string{"/coachd", "serve"}, args...)...)
}

// runInImage runs command in a container of the image, as runImage.
func runInImage(t *testing.T, b *buildah, env []string, command ...string) *container {
	t.Helper()
	ctr := b.run(t, "from", "--pull-never", image)
	id := b.run(t, "inspect", "--type", "container", "--format", "{{.ContainerID}}", ctr)
	runArgs := []string{"run", "--isolation", "chroot", "--network", "host"}
	for _, e := range env {
		runArgs = append(runArgs, "--env", e)
	}
	runArgs = append(runArgs, ctr, "--")
	ctx, cancel := context.WithCancel(context.Background())
	c := b.cmd(ctx, append(runArgs, command...)...)
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	c.WaitDelay = 10 * time.Second
	out := newLineWaiter()
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		c.Wait()
		b.run(t, "rm", ctr)
		if t.Failed() {
			t.Logf("coachd's output:\n%s", out.String())
		}
	})
	return &container{b: b, id: id, out: out}
}

// volume is the host's folder of the container's volume at path: as
// `docker run` does for a VOLUME it is not given, buildah makes one
// that starts as the image's folder there (its owner included).
func (c *container) volume(t *testing.T, path string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(c.b.root, "vfs-containers", c.id, "userdata", "buildah-volumes", "*"))
	if len(dirs) != 1 {
		t.Fatalf("the container has %d volumes (%v), want its one, %s", len(dirs), dirs, path)
	}
	return dirs[0]
}

// lineWaiter keeps a process's output and lets a test wait for a line.
type lineWaiter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	added chan struct{} // closed and replaced on every write
}

func newLineWaiter() *lineWaiter { return &lineWaiter{added: make(chan struct{})} }

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	close(w.added)
	w.added = make(chan struct{})
	return len(p), nil
}

func (w *lineWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// wait returns the first line that match accepts, once it is written.
func (w *lineWaiter) wait(t *testing.T, what string, match func(string) bool) string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		w.mu.Lock()
		sc := bufio.NewScanner(bytes.NewReader(w.buf.Bytes()))
		added := w.added
		w.mu.Unlock()
		for sc.Scan() {
			if match(sc.Text()) {
				return sc.Text()
			}
		}
		select {
		case <-added:
		case <-deadline:
			t.Fatalf("no line %s in a minute:\n%s", what, w.String())
		}
	}
}

// prefixed matches a line that starts with p.
func prefixed(p string) func(string) bool {
	return func(line string) bool { return strings.HasPrefix(line, p) }
}

// freeAddr is a loopback address with a port free when it was asked.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// send sends a request with key (when not "") and a JSON body (when not
// "") and returns its response.
func send(t *testing.T, method, url, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp
}

// call sends a request as send does and decodes its JSON answer into
// out; it returns the status.
func call(t *testing.T, method, url, key, body string, out any) int {
	t.Helper()
	resp := send(t, method, url, key, body)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, data)
		}
	}
	return resp.StatusCode
}

// The image runs as `docker run coachd --demo` does: as nonroot, its
// database created on /data, answering the API with the key it prints
// and running a turn on its demo model.
func TestImageRuns(t *testing.T) {
	b := mustImage(t)
	addr := freeAddr(t)
	c := runImage(t, b, nil, "--demo", "--addr", addr)
	key := strings.TrimPrefix(c.out.wait(t, `"API key: …"`, prefixed("API key: ")), "API key: ")
	c.out.wait(t, `"coachd listening on"`, prefixed("coachd listening on"))
	base := "http://" + addr
	for _, path := range []string{"/healthz", "/readyz"} {
		if status := call(t, "GET", base+path, "", "", nil); status != 200 {
			t.Errorf("GET %s: %d", path, status)
		}
	}
	var me struct{ ID string }
	if status := call(t, "GET", base+"/v1/me", key, "", &me); status != 200 || me.ID == "" {
		t.Fatalf("GET /v1/me with the printed key: %d %+v", status, me)
	}
	var chat struct {
		SessionID string `json:"session_id"`
		Text      string `json:"text"`
	}
	if status := call(t, "POST", base+"/v1/chat", key, `{"message":"hello from the image"}`, &chat); status != 200 || chat.SessionID == "" || chat.Text == "" {
		t.Fatalf("POST /v1/chat: %d %+v", status, chat)
	}
	fi, err := os.Stat(filepath.Join(c.volume(t, "/data"), "coachd.db"))
	if err != nil {
		t.Fatalf("the database is not on /data: %v", err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != nonroot {
		t.Errorf("/data/coachd.db belongs to uid %d: coachd ran as that user, want %d (nonroot)", uid, nonroot)
	}
}
