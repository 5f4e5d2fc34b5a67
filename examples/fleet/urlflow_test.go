//go:build linux

package fleet_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/mcptest"
)

// The demo sign-in's key (examples/everything's BATON_DEMO_USER_KEY): the
// test signs the MCP principal's bearer token and the browser's cookie
// with it.
const demoUserKey = "fleet-demo-user-key-0123456789abcdef"

// The third party's user (zitadel's example storage, issuer on 127.0.0.1).
const (
	opUser     = "test-user@127.0.0.1"
	opPassword = "verysecure"
)

func chromiumBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BATON_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("BATON_CHROMIUM=%s: %v", p, err)
		}
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	t.Skip("chromium not found: apt-get install chromium (Debian's package; .ci/run installs it), or set BATON_CHROMIUM to its path")
	return ""
}

// artifacts is where the screenshots go: BATON_ARTIFACTS, or a temporary
// directory.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BATON_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func demoToken(t *testing.T, sub string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(demoUserKey))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var issuerRE = regexp.MustCompile(`msg="serving OAuth" issuer=(\S+)`)

// newURLFleet is the fleet of fleet_test.go with examples/oauthprovider
// as the third party and examples/everything's authorize_account on:
// links point at nginx's front, so the browser's callback lands on
// whichever instance nginx picks.
func newURLFleet(t *testing.T, nginxBin string) (*fleet, string, string) {
	t.Helper()
	f := &fleet{t: t, dir: t.TempDir(), redis: testredis.Start(t)}
	f.bin = buildEverything(t, f.dir)
	goBin, _ := exec.LookPath("go")
	opBin := filepath.Join(f.dir, "oauthprovider")
	if out, err := exec.Command(goBin, "build", "-o", opBin, "github.com/baton-mcp/baton/examples/oauthprovider").CombinedOutput(); err != nil {
		t.Fatalf("build oauthprovider: %v\n%s", err, out)
	}
	f.port = freePort(t)
	public := fmt.Sprintf("http://127.0.0.1:%d", f.port)
	op, err := startProc("oauthprovider", baseEnv(), opBin, "-addr", "127.0.0.1:0", "-redirect", public+"/connect/callback")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.stop(5 * time.Second) })
	var issuer string
	for deadline := time.Now().Add(30 * time.Second); ; {
		if m := issuerRE.FindStringSubmatch(op.log.String()); m != nil {
			issuer = m[1]
			break
		}
		if op.exited() || time.Now().After(deadline) {
			t.Fatalf("oauthprovider did not start:\n%s", op.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.env = []string{
		"BATON_OAUTH_ISSUER=" + issuer,
		"BATON_OAUTH_CLIENT_ID=baton",
		"BATON_OAUTH_CLIENT_SECRET=baton-secret",
		"BATON_PUBLIC_URL=" + public,
		"BATON_DEMO_USER_KEY=" + demoUserKey,
	}
	for i := range f.inst {
		f.inst[i] = f.startInstance(i, "127.0.0.1:0", keyOne, "")
	}
	t.Cleanup(func() {
		for _, in := range f.inst {
			in.p.stop(10 * time.Second)
		}
		for i, in := range f.inst {
			if log := in.p.log.String(); strings.Contains(log, "DATA RACE") || strings.Contains(log, "panic:") {
				t.Errorf("instance %d:\n%s", i, log)
			}
		}
	})
	f.startNginx(nginxBin)
	return f, public, issuer
}

// browser is one headless Chromium with a fresh profile.
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string // screenshots
	n   int
	mu  sync.Mutex
	saw []string // the screenshots, in order
}

func newBrowser(t *testing.T, bin, dir string) *browser {
	t.Helper()
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx, dir: dir}
}

// as signs user in to origin in the browser (the demo sign-in's cookie;
// the tabs of one browser share it) and returns the browser's tab.
func (b *browser) as(origin, user string) context.Context {
	ctx := b.ctx
	if user != "" {
		if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: "baton_demo_user", Value: demoToken(b.t, user), URL: origin + "/"}); err != nil {
			b.t.Fatal(err)
		}
	}
	return ctx
}

// shot saves a screenshot of the tab's page as NN-name.png.
func (b *browser) shot(ctx context.Context, name string) {
	b.t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	b.mu.Lock()
	b.n++
	p := filepath.Join(b.dir, fmt.Sprintf("%02d-%s.png", b.n, name))
	b.saw = append(b.saw, p)
	b.mu.Unlock()
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Error(err)
	}
	b.t.Logf("screenshot: %s", p)
}

// page navigates to u and returns the urlflow page's title (waiting for
// it, through any redirects and sign-in steps done by steps).
func (b *browser) page(ctx context.Context, u string) string {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("#title"))); err != nil {
		b.t.Fatalf("navigate %s: %v", u, err)
	}
	title, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS("#title")))
	if err != nil {
		b.t.Fatal(err)
	}
	return title
}

// signIn navigates to the link, signs in on the third party's page and
// returns the page the callback answered, and the callback URL.
func (b *browser) signIn(ctx context.Context, link string) (string, string) {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#username"))); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
		b.t.Fatalf("open %s: %v; the browser is at %s showing %q", link, err, loc, text)
	}
	b.shot(ctx, "third-party-sign-in")
	if err := chromedp.Do(sctx,
		chromedp.SendKeys(chromedp.CSS("#username"), opUser),
		chromedp.SendKeys(chromedp.CSS("#password"), opPassword),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#title")),
	); err != nil {
		b.t.Fatalf("sign in: %v", err)
	}
	title, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS("#title")))
	if err != nil {
		b.t.Fatal(err)
	}
	loc, err := chromedp.Run(sctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return title, loc
}

// steer sends GETs to nginx's front until the last went to the instance
// before addr in nginx's round-robin order (the upstream block's order),
// so that the next request goes to addr.
func (f *fleet) steer(addr string) {
	f.t.Helper()
	prev := ""
	for i, in := range f.inst {
		if in.addr == addr {
			prev = f.inst[(i+2)%3].addr
		}
	}
	for range 12 {
		resp, err := http.Get(f.front)
		if err != nil {
			f.t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.Header.Get("X-Upstream") == prev {
			return
		}
	}
	f.t.Fatalf("could not steer nginx to %s", addr)
}

// which returns the address of the instance whose log holds s.
func (f *fleet) which(s string) []string {
	var out []string
	for _, in := range f.inst {
		if strings.Contains(in.p.log.String(), s) {
			out = append(out, in.addr)
		}
	}
	return out
}

// pinned is an http.RoundTripper that sends every request through nginx
// until pin names an instance; from then on it sends them to that
// instance directly. It records where the last request went.
//
// The retry that completes the URL flow must reach the instance that
// neither minted the link nor took the callback. Steering nginx's
// round-robin for it was not reliable: the browser's own requests
// through nginx, made on Chromium's schedule, move the round-robin
// between the steer and the retry (seen twice in CI).
type pinned struct {
	mu   sync.Mutex
	pin  string // host:port of an instance, or "" for nginx
	last string // where the last request went: an X-Upstream or the pin
}

func (p *pinned) set(addr string) {
	p.mu.Lock()
	p.pin = addr
	p.mu.Unlock()
}

func (p *pinned) lastTo() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

func (p *pinned) RoundTrip(req *http.Request) (*http.Response, error) {
	p.mu.Lock()
	pin := p.pin
	p.mu.Unlock()
	if pin != "" {
		req = req.Clone(req.Context())
		req.URL.Host, req.Host = pin, pin
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	to := resp.Header.Get("X-Upstream")
	if pin != "" {
		to = pin
	}
	p.mu.Lock()
	p.last = to
	p.mu.Unlock()
	return resp, nil
}

// TestURLElicitationBrowser: a 2026-07-28 client calls authorize_account
// through nginx; the link is minted on one instance, a real Chromium signs
// in at the real third party and lands on the callback on another
// instance, and the client's retry, sent to the third instance directly,
// completes with the account the third party names. On the way the browser is refused for
// another user's cookie, a tampered link and a reused callback.
func TestURLElicitationBrowser(t *testing.T) {
	nginxBin := requireNginx(t)
	chromium := chromiumBinary(t)
	if testing.Short() {
		t.Skip("starts nginx, Redis, three instances, an OAuth provider and Chromium")
	}
	f, public, issuer := newURLFleet(t, nginxBin)
	b := newBrowser(t, chromium, artifacts(t))

	var links []string
	var minted, callback string
	pin := &pinned{}
	el := func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
		if req.Mode != elicit.ModeURL || req.ElicitationID != "" || !strings.HasPrefix(req.URL, public+"/connect/start?l=") {
			t.Errorf("elicitation %+v: want a URL-mode request for a link on the front, without elicitationId", req)
		}
		links = append(links, req.URL)
		if len(links) == 1 {
			return mcptest.Accept(nil) // accepted, but not been there yet: the retry must offer the same link
		}
		if len(links) > 2 {
			t.Errorf("link offered %d times", len(links))
			return mcptest.Cancel()
		}
		minted = one(t, f.which("urlflow: link minted"))

		// Bob's browser on alice's link.
		bob := b.as(public, "bob")
		if title := b.page(bob, req.URL); title != "This link belongs to another account" {
			t.Errorf("bob's browser: %q", title)
		}
		b.shot(bob, "wrong-user")
		// A tampered link.
		u, _ := url.Parse(req.URL)
		tok := u.Query().Get("l")
		alice := b.as(public, "alice")
		bad := strings.Replace(req.URL, tok, tok[:len(tok)-2]+flip(tok[len(tok)-2:]), 1)
		if title := b.page(alice, bad); title != "This link is not valid" {
			t.Errorf("tampered link: %q", title)
		}
		b.shot(alice, "tampered")

		// The real trip: start on the minting instance, so the callback
		// (the next request nginx sees) lands on another.
		f.steer(minted)
		title, cb := b.signIn(alice, req.URL)
		if title != "Done" {
			t.Errorf("callback page %q", title)
		}
		b.shot(alice, "done")
		callback = one(t, f.which("urlflow: link completed"))

		// The same callback again.
		if title := b.page(alice, cb); title != "This link has already been used" {
			t.Errorf("reused callback: %q", title)
		}
		b.shot(alice, "reused")

		// The retry goes to the third instance.
		for _, in := range f.inst {
			if in.addr != minted && in.addr != callback {
				pin.set(in.addr)
			}
		}
		return mcptest.Accept(nil)
	}
	c, err := mcptest.New(mcptest.URL(f.front, &http.Client{Transport: pin}), &mcptest.Options{
		Elicitation: el,
		Header:      http.Header{"Authorization": {"Bearer " + demoToken(t, "alice")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t2 := time.Now()
	res, err := c.CallTool(ctx, "authorize_account", map[string]any{})
	t.Logf("alice's call took %v: three rounds, and the browser's refusals and sign-in between them", time.Since(t2))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Account string `json:"account"`
	}
	if res.IsError || json.Unmarshal(res.StructuredContent, &out) != nil || out.Account != opUser {
		t.Fatalf("result %s %s: want the third party's account %s", res.StructuredContent, res.Text(), opUser)
	}
	if len(links) != 2 || links[0] != links[1] {
		t.Fatalf("links %q: want the same link offered twice", links)
	}
	final := pin.lastTo()
	t.Logf("link minted on %s, callback on %s, final retry on %s", minted, callback, final)
	if minted == callback || final == minted || final == callback {
		t.Fatalf("want three instances: minted on %s, callback on %s, completed on %s", minted, callback, final)
	}
	// Nothing secret in any log: no access token, no code, no link tag.
	for i, in := range f.inst {
		log := in.p.log.String()
		if strings.Contains(log, "code=") || strings.Contains(log, "state=") || strings.Contains(log, "access_token") {
			t.Errorf("instance %d logs a secret:\n%s", i, log)
		}
	}

	// Bob's flow: the third party answers the authorization request with
	// an error (prompt=none without a session there: login_required),
	// which reaches the callback; bob's retry ends with an error result
	// that names it.
	var bobAsked int
	cb, err := mcptest.New(mcptest.URL(f.front, nil), &mcptest.Options{
		Header: http.Header{"Authorization": {"Bearer " + demoToken(t, "bob")}},
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			bobAsked++
			if bobAsked == 1 {
				u, _ := url.Parse(req.URL)
				q := url.Values{
					"response_type": {"code"}, "client_id": {"baton"}, "scope": {"openid"}, "prompt": {"none"},
					"redirect_uri": {public + "/connect/callback"}, "state": {u.Query().Get("l")},
				}
				bob := b.as(public, "bob")
				if title := b.page(bob, issuer+"auth?"+q.Encode()); title != "Access was not granted" {
					t.Errorf("the third party's error: page %q", title)
				}
				b.shot(bob, "third-party-error")
			}
			return mcptest.Accept(nil)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err = cb.CallTool(ctx, "authorize_account", map[string]any{})
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "did not grant access: login_required") || bobAsked != 1 {
		t.Fatalf("bob: %v %+v (asked %d)", err, res, bobAsked)
	}
	t.Logf("bob's result: %s", res.Text())
	if len(b.saw) != 6 {
		t.Errorf("screenshots %q", b.saw)
	}
}

func one(t *testing.T, addrs []string) string {
	t.Helper()
	if len(addrs) != 1 {
		t.Fatalf("want one instance, got %q", addrs)
	}
	return addrs[0]
}

// flip changes the characters of a base64url tail.
func flip(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == 'A' {
			b.WriteRune('B')
		} else {
			b.WriteRune('A')
		}
	}
	return b.String()
}

// urlflowSession is a bare 2025-11-25 client over HTTP: a session, and
// each POST's answer read as JSON or as an SSE stream.
type urlflowSession struct {
	t       *testing.T
	front   string
	bearer  string
	session string
}

func (s *urlflowSession) post(ctx context.Context, msg map[string]any) (*http.Response, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.front, strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.bearer)
	if s.session != "" {
		req.Header.Set("Mcp-Session-Id", s.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	return http.DefaultClient.Do(req)
}

// messages reads the JSON-RPC messages of a response (one JSON body, or
// SSE events) into ch, closing it at the end.
func messages(resp *http.Response, ch chan<- map[string]json.RawMessage) {
	defer close(ch)
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]json.RawMessage
		if json.NewDecoder(resp.Body).Decode(&m) == nil {
			ch <- m
		}
		return
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case line == "" && data.Len() > 0:
			var m map[string]json.RawMessage
			if json.Unmarshal([]byte(data.String()), &m) == nil {
				ch <- m
			}
			data.Reset()
		}
	}
}

// TestURLElicitationBrowserLegacy: a 2025-11-25 session calls
// authorize_account through nginx; the call parks on one instance with
// an elicitation/create (URL mode, with elicitationId); the client
// accepts; Chromium signs in and the callback lands on another instance;
// the parked call sends notifications/elicitation/complete and then its
// result.
func TestURLElicitationBrowserLegacy(t *testing.T) {
	nginxBin := requireNginx(t)
	chromium := chromiumBinary(t)
	if testing.Short() {
		t.Skip("starts nginx, Redis, three instances, an OAuth provider and Chromium")
	}
	f, public, _ := newURLFleet(t, nginxBin)
	b := newBrowser(t, chromium, artifacts(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := &urlflowSession{t: t, front: f.front, bearer: demoToken(t, "alice")}
	resp, err := s.post(ctx, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"elicitation": map[string]any{"url": map[string]any{}}},
		"clientInfo":      map[string]any{"name": "fleet-legacy", "version": "1.0.0"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s.session = resp.Header.Get("Mcp-Session-Id")
	init := make(chan map[string]json.RawMessage, 4)
	messages(resp, init)
	if s.session == "" || len(init) == 0 {
		t.Fatalf("initialize: status %d, no session", resp.StatusCode)
	}
	if resp, err = s.post(ctx, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()

	resp, err = s.post(ctx, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "authorize_account", "arguments": map[string]any{}}})
	if err != nil {
		t.Fatal(err)
	}
	parked := resp.Header.Get("X-Upstream")
	ch := make(chan map[string]json.RawMessage, 16)
	go messages(resp, ch)

	var elicitationID, link string
	var completed bool
	var result json.RawMessage
	for m := range ch {
		var method string
		_ = json.Unmarshal(m["method"], &method)
		switch {
		case method == "elicitation/create":
			var p struct {
				Mode, Message, URL string
				ElicitationID      string `json:"elicitationId"`
			}
			if err := json.Unmarshal(m["params"], &p); err != nil || p.Mode != "url" || p.ElicitationID == "" || !strings.HasPrefix(p.URL, public+"/connect/start?l=") {
				t.Fatalf("elicitation/create %s", m["params"])
			}
			elicitationID, link = p.ElicitationID, p.URL
			// Accept (consent to open the link), then go there.
			ans, err := s.post(ctx, map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"action": "accept"}})
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, ans.Body)
			_ = ans.Body.Close()
			if ans.StatusCode/100 != 2 {
				t.Fatalf("the answer to elicitation/create: HTTP %d", ans.StatusCode)
			}
			alice := b.as(public, "alice")
			f.steer(parked) // the callback then lands on the next instance
			title, _ := b.signIn(alice, link)
			if title != "Done" {
				t.Errorf("callback page %q", title)
			}
			b.shot(alice, "done")
		case method == "notifications/elicitation/complete":
			var p struct {
				ElicitationID string `json:"elicitationId"`
			}
			_ = json.Unmarshal(m["params"], &p)
			if p.ElicitationID != elicitationID || result != nil {
				t.Fatalf("notifications/elicitation/complete %s (want %s, before the result)", m["params"], elicitationID)
			}
			completed = true
		case string(m["id"]) == "2":
			result = m["result"]
			if result == nil {
				t.Fatalf("tools/call answered %s", m["error"])
			}
		}
	}
	if !completed {
		t.Fatal("no notifications/elicitation/complete")
	}
	var res struct {
		StructuredContent struct {
			Account string `json:"account"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(result, &res) != nil || res.IsError || res.StructuredContent.Account != opUser {
		t.Fatalf("result %s", result)
	}
	callback := one(t, f.which("urlflow: link completed"))
	minted := one(t, f.which("urlflow: link minted"))
	t.Logf("call parked on %s (link minted on %s), callback on %s", parked, minted, callback)
	if callback == parked || minted != parked {
		t.Fatalf("want the callback on another instance than the parked call: parked %s, minted %s, callback %s", parked, minted, callback)
	}
}

// TestURLElicitationBrowserTypeScript is TestURLElicitationBrowserLegacy
// with the official TypeScript SDK as the 2025-11-25 client
// (testdata/urlflow-client.mjs).
func TestURLElicitationBrowserTypeScript(t *testing.T) {
	nginxBin := requireNginx(t)
	chromium := chromiumBinary(t)
	node, nodeDir := nodeClient(t)
	if testing.Short() {
		t.Skip("starts nginx, Redis, three instances, an OAuth provider, Chromium and Node")
	}
	f, public, _ := newURLFleet(t, nginxBin)
	b := newBrowser(t, chromium, artifacts(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	script, err := filepath.Abs(filepath.Join("testdata", "urlflow-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, script, f.front, demoToken(t, "alice"))
	cmd.Env = append(os.Environ(), "BATON_NODE_DIR="+nodeDir)
	cmd.WaitDelay = 5 * time.Second
	stderr := &logBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var elicitationID, parked string
	var completed bool
	var final struct {
		Result struct {
			StructuredContent struct {
				Account string `json:"account"`
			} `json:"structuredContent"`
			IsError bool `json:"isError"`
		} `json:"result"`
		CallUpstream string `json:"callUpstream"`
		Error        string `json:"error"`
	}
	gotFinal := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Final         json.RawMessage `json:"final"`
			Event         string          `json:"event"`
			Mode          string          `json:"mode"`
			URL           string          `json:"url"`
			ElicitationID string          `json:"elicitationId"`
			CallUpstream  string          `json:"callUpstream"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Errorf("client printed %q", sc.Text())
			continue
		}
		switch {
		case line.Final != nil:
			gotFinal = json.Unmarshal(line.Final, &final) == nil
		case line.Event == "elicit":
			if line.Mode != "url" || line.ElicitationID == "" || !strings.HasPrefix(line.URL, public+"/connect/start?l=") {
				t.Fatalf("elicitation %s", sc.Text())
			}
			elicitationID, parked = line.ElicitationID, line.CallUpstream
			alice := b.as(public, "alice")
			f.steer(parked)
			if title, _ := b.signIn(alice, line.URL); title != "Done" {
				t.Errorf("callback page %q", title)
			}
			b.shot(alice, "done")
		case line.Event == "complete":
			if line.ElicitationID != elicitationID {
				t.Errorf("notifications/elicitation/complete for %q, want %q", line.ElicitationID, elicitationID)
			}
			completed = true
		}
	}
	runErr := cmd.Wait()
	if !gotFinal || final.Error != "" || runErr != nil {
		t.Fatalf("TypeScript client: %v %q; stderr:\n%s", runErr, final.Error, stderr.String())
	}
	if !completed {
		t.Fatal("the TypeScript client got no notifications/elicitation/complete")
	}
	if final.Result.IsError || final.Result.StructuredContent.Account != opUser {
		t.Fatalf("result %+v", final.Result)
	}
	callback := one(t, f.which("urlflow: link completed"))
	t.Logf("TypeScript call parked on %s, callback on %s", parked, callback)
	if parked == "" || callback == parked {
		t.Fatalf("want the callback on another instance than the parked call (%s)", parked)
	}
}
