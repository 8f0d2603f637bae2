package e2e

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/coachd/coachd/web"
)

// TestJSUnits runs testdata/units.js in Chromium against the embedded
// modules: the SSE parser, the phase machine, the batcher, the Markdown
// renderer, the answer schemas and the error banners.
func TestJSUnits(t *testing.T) {
	requireChromium(t)
	src, err := os.ReadFile(filepath.Join("testdata", "units.js"))
	if err != nil {
		t.Fatal(err)
	}
	ui := httptest.NewServer(web.Handler())
	t.Cleanup(ui.Close)
	ctx := newBrowser(t, 800, 600)
	// The page's CSP forbids eval; the test code is ours, so let it run.
	bypass := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true})
		return err
	})
	if err := chromedp.Do(ctx, bypass, chromedp.Navigate(ui.URL+"/")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		Name string `json:"name"`
		Err  string `json:"err"`
	}
	script := `(async () => {
		const url = URL.createObjectURL(new Blob([` + jsString(string(src)) + `], { type: "text/javascript" }));
		const { tests } = await import(url);
		const out = [];
		for (const [name, fn] of Object.entries(tests)) {
			try { await fn(); out.push({ name, err: "" }); }
			catch (e) { out.push({ name, err: String(e && e.stack || e) }); }
		}
		return out;
	})()`
	results, err := chromedp.Run(ctx, chromedp.Evaluate[[]result](script, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) < 15 {
		t.Fatalf("ran %d JS tests, want all of them", len(results))
	}
	for _, r := range results {
		t.Run(r.Name, func(t *testing.T) {
			if r.Err != "" {
				t.Error(r.Err)
			}
		})
	}
}
