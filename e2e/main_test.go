// Package e2e drives coachd's browser UI in a real Chromium against a real
// `coachd serve`: the binary is built from ./cmd/coachd, talks to an
// in-test fake of the Anthropic API (anthropictest), and sits behind a
// small proxy that can fail chosen requests. Only the model is fake.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write docs/screenshot-*.png from the screenshot test")

// chromiumPath is Debian's Chromium.
const chromiumPath = "/usr/bin/chromium"

// Timeouts: every wait in a test is a DOM condition, bounded by these.
// They are guards against a hang, not speed checks: CI runs this package
// with -race beside the others on two cores, where a page can take a while.
const (
	testTimeout = 90 * time.Second
	waitTimeout = 30 * time.Second
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// repoRoot is the module root, one level up from this package.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("cannot find the e2e package directory")
	}
	return filepath.Dir(filepath.Dir(file))
}

// coachdBinary builds ./cmd/coachd once per test run.
func coachdBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "coachd-e2e-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "coachd")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/coachd")
		cmd.Dir = repoRoot(tb)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/coachd: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// requireChromium skips without Chromium, except in CI, where a missing
// browser is a broken setup and fails.
func requireChromium(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(chromiumPath); err == nil {
		return
	}
	msg := "Chromium not found at " + chromiumPath + "; install it to run the browser tests: sudo apt-get install chromium"
	if os.Getenv("CI") != "" {
		tb.Fatal(msg + " (CI is set, so this fails instead of skipping)")
	}
	tb.Skip(msg)
}

// newBrowser starts a headless Chromium with a fresh profile and returns a
// tab context; everything is closed when the test ends.
func newBrowser(t *testing.T, width, height int) context.Context {
	t.Helper()
	requireChromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox, // tests run as root in containers
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("font-render-hinting", "none"),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("viewport: %v", err)
	}
	logConsole(t, ctx)
	return ctx
}

// logConsole collects the page's console messages and uncaught
// exceptions, and logs them when the test fails.
func logConsole(t *testing.T, ctx context.Context) {
	var (
		mu    sync.Mutex
		lines []string
	)
	err := chromedp.Listen(ctx, func(ev any) {
		var line string
		switch ev := ev.(type) {
		case *cdpruntime.EventConsoleAPICalled:
			line = "console." + string(ev.Type) + ":"
			for _, a := range ev.Args {
				if len(a.Value) > 0 {
					line += " " + string(a.Value)
				} else {
					line += " " + a.Description
				}
			}
		case *network.EventLoadingFailed:
			line = "network: loading failed: " + ev.ErrorText + " " + string(ev.BlockedReason)
			if ev.Canceled {
				line += " (canceled)"
			}
		case *cdpruntime.EventExceptionThrown:
			line = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				line += " " + ev.ExceptionDetails.Exception.Description
			}
		default:
			return
		}
		mu.Lock()
		lines = append(lines, line)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if t.Failed() && len(lines) > 0 {
			t.Logf("browser console:\n%s", strings.Join(lines, "\n"))
		}
	})
}
