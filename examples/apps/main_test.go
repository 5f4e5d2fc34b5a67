package main

import (
	"bytes"
	"context"
	_ "embed"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

//go:embed testdata/host.html
var hostHTML string

// The page is served as an App, and the tool links it.
func TestAppServed(t *testing.T) {
	srv, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, err := mcptest.New(mcptest.Handler(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := c.ReadResource(ctx, appURI)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MimeType != server.AppMIMEType || !strings.Contains(res.Contents[0].Text, "ui/initialize") {
		t.Errorf("contents = %+v", res.Contents)
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "shout" {
		t.Fatalf("tools = %+v", tools)
	}
	out, err := c.CallTool(ctx, "shout", map[string]any{"text": "hi"})
	if err != nil || out.IsError || !strings.Contains(string(out.StructuredContent), `"HI!"`) {
		t.Errorf("shout: %+v, %v", out, err)
	}
}

// chromiumPath finds the browser, or skips.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("headless Chromium is needed for the MCP Apps browser test: apt-get install chromium")
	return ""
}

// artifactDir is where screenshots go: $BATON_ARTIFACTS, or the test's
// temporary directory.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("BATON_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// The App runs in headless Chromium inside a host page that implements the
// Apps postMessage bridge: the host reads the page from the server's ui://
// resource, frames it, hands it the tool's result, and relays the page's
// own tools/call to the server; the page shows both results.
func TestAppInChromium(t *testing.T) {
	browser := chromiumPath(t)
	srv, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	mux.HandleFunc("/host.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(hostHTML))
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// The sandboxed frame stays in the page's process, so that the
		// test can read its DOM through the page's session.
		chromedp.Flag("disable-features", "IsolateSandboxedIframes"),
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(640, 480),
	)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer bcancel()

	if err := chromedp.Do(bctx, chromedp.Navigate(hs.URL+"/host.html"), chromedp.WaitReady(chromedp.CSS("iframe"))); err != nil {
		t.Fatalf("loading the host page: %v", err)
	}
	frames, err := chromedp.Run(bctx, chromedp.Nodes(chromedp.CSSAll("iframe")))
	if err != nil || len(frames) != 1 {
		t.Fatalf("the host framed %d pages: %v", len(frames), err)
	}
	frame := frames[0]
	// appText polls the page's element until its text is want.
	appText := func(sel, want string) {
		t.Helper()
		for {
			got, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel), chromedp.FromNode(frame)))
			if err != nil {
				t.Fatalf("reading %s in the app: %v", sel, err)
			}
			if strings.TrimSpace(got) == want {
				return
			}
			select {
			case <-ctx.Done():
				errs, _ := chromedp.Run(bctx, chromedp.Evaluate[[]string](`window.hostErrors`))
				t.Fatalf("the app's %s shows %q, want %q (host errors: %q)", sel, got, want, errs)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	// The tool's result, sent by the host as ui/notifications/tool-result.
	appText("#result", "HELLO FROM THE HOST!")
	appText("#status", "connected to baton-test-host")

	// The page calls the tool itself, through the host's bridge.
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#again"), chromedp.FromNode(frame))); err != nil {
		t.Fatalf("clicking the app's button: %v", err)
	}
	appText("#result", "HELLO FROM THE HOST AGAIN!")
	appText("#status", "called shout through the host")
	relayed, err := chromedp.Run(bctx, chromedp.Evaluate[int](`window.relayed.length`))
	if err != nil {
		t.Fatal(err)
	}
	errs, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`window.hostErrors`))
	if err != nil {
		t.Fatal(err)
	}
	if relayed != 1 || len(errs) != 0 {
		t.Errorf("the host relayed %d tools/call from the app (want 1), errors %q", relayed, errs)
	}

	if _, err := chromedp.Run(bctx, chromedp.Evaluate[any](`window.scrollTo(0, 0)`)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("the screenshot is not a PNG (%d bytes)", len(png))
	}
	path := filepath.Join(artifactDir(t), "apps-example.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the App in its host: %s (%d bytes)", path, len(png))
}
