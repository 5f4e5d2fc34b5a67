package server_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncBuf is a log sink.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// rig is a server with one tool behind a URL flow, a principal taken from
// the X-Principal header, and the flow's handler with the browser's user
// taken from the X-Browser-User header (the test plays the browser).
type rig struct {
	flow      *server.URLFlow
	store     server.URLFlowStore
	clk       *clock
	log       *syncBuf
	mcp       http.Handler
	browser   http.Handler
	exchanges []string // codes Complete was given
	mu        sync.Mutex
}

func newRig(t *testing.T, fallback server.URLFallback) *rig {
	t.Helper()
	return newRigWith(t, func(c *server.URLFlowConfig) { c.Fallback = fallback })
}

// newRigWith is newRig with the flow's configuration changed by tune; the
// server serves 2025-11-25 sessions too.
func newRigWith(t *testing.T, tune func(*server.URLFlowConfig)) *rig {
	t.Helper()
	key, err := mrtr.RandomKey()
	if err != nil {
		t.Fatal(err)
	}
	ring, err := mrtr.NewKeyRing(key)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{clk: &clock{t: time.Now()}, log: &syncBuf{}}
	r.store = server.NewMemoryURLFlowStore(r.clk.now)
	cfg := server.URLFlowConfig{
		Keys:     ring,
		Store:    r.store,
		BaseURL:  "http://app.test/connect",
		TTL:      time.Minute,
		Leeway:   time.Second,
		Logger:   slog.New(slog.NewTextHandler(r.log, nil)),
		Now:      r.clk.now,
		Identify: func(req *http.Request) (string, error) { return req.Header.Get("X-Browser-User"), nil },
		Begin: func(_ context.Context, l *server.URLLink) (string, error) {
			return "http://thirdparty.test/authorize?" + url.Values{"state": {l.State()}}.Encode(), nil
		},
		Complete: func(_ context.Context, l *server.URLLink, req *http.Request) (server.URLOutcome, error) {
			code := req.URL.Query().Get("code")
			r.mu.Lock()
			r.exchanges = append(r.exchanges, code)
			r.mu.Unlock()
			if code == "bad" {
				return server.URLOutcome{}, errors.New("token endpoint said invalid_grant for secret-code-xyz")
			}
			return server.URLOutcome{Detail: "connected " + l.Principal}, nil
		},
	}
	tune(&cfg)
	r.flow, err = server.NewURLFlow(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(mcp.Implementation{Name: "urlflow-test", Version: "1"}, &server.Options{StateKeys: ring, Legacy: legacy.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	type in struct {
		Repo string `json:"repo"`
	}
	type out struct {
		Detail string `json:"detail"`
	}
	err = server.AddTool(srv, server.Tool{Name: "connect", Description: "connects an account"},
		func(ctx context.Context, req *server.ToolRequest, a in) (out, error) {
			o, err := r.flow.AwaitTool(ctx, req, "Connect your account to read "+a.Repo+".", "demo")
			if err != nil {
				return out{}, err
			}
			if !o.OK {
				return out{}, errors.New(o.Error)
			}
			return out{Detail: o.Detail}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	r.mcp = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if p := req.Header.Get("X-Principal"); p != "" {
			req = req.WithContext(server.ContextWithPrincipal(req.Context(), p))
		}
		srv.ServeHTTP(w, req)
	})
	r.browser = r.flow.Handler()
	return r
}

// visit plays the browser: GET u as user, returning the status, the
// page and the Location.
func (r *rig) visit(u, user string) (int, string, string) {
	req := httptest.NewRequest(http.MethodGet, u, nil)
	if user != "" {
		req.Header.Set("X-Browser-User", user)
	}
	w := httptest.NewRecorder()
	r.browser.ServeHTTP(w, req)
	return w.Code, w.Body.String(), w.Header().Get("Location")
}

// authorize plays the whole browser trip: open the link, follow to the
// third party, come back to the callback with code (or with error).
func (r *rig) authorize(t *testing.T, link, user, code, thirdPartyErr string) (int, string) {
	t.Helper()
	st, body, loc := r.visit(link, user)
	if st != http.StatusSeeOther {
		return st, body
	}
	u, err := url.Parse(loc)
	if err != nil || u.Host != "thirdparty.test" {
		t.Fatalf("start redirected to %q", loc)
	}
	q := url.Values{"state": {u.Query().Get("state")}}
	if thirdPartyErr != "" {
		q.Set("error", thirdPartyErr)
	} else {
		q.Set("code", code)
	}
	st, body, _ = r.visit(r.flow.CallbackURL()+"?"+q.Encode(), user)
	return st, body
}

func (r *rig) client(t *testing.T, principal string, el func(context.Context, *elicit.Request) (*elicit.Result, error)) *mcptest.Client {
	t.Helper()
	c, err := mcptest.New(mcptest.Handler(r.mcp), &mcptest.Options{Elicitation: el, Header: http.Header{"X-Principal": {principal}}, MaxRounds: 6})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestModernFlow: the first round offers a link; accepting without going
// there gets the same link again; after the browser trip the retry
// completes with what Complete recorded.
func TestURLFlowModern(t *testing.T) {
	r := newRig(t, server.URLFallbackRefuse)
	var urls []string
	c := r.client(t, "alice", func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
		if req.Mode != elicit.ModeURL || req.ElicitationID != "" {
			t.Errorf("request %+v: want URL mode without elicitationId", req)
		}
		urls = append(urls, req.URL)
		if len(urls) == 2 {
			if st, body := r.authorize(t, req.URL, "alice", "good", ""); st != http.StatusOK || !strings.Contains(body, "Done") {
				t.Errorf("callback: %d %s", st, body)
			}
		}
		return mcptest.Accept(nil)
	})
	res, err := c.CallTool(context.Background(), "connect", map[string]any{"repo": "baton"})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(string(res.StructuredContent), `"connected alice"`) {
		t.Fatalf("result %s %s", res.StructuredContent, res.Text())
	}
	if len(urls) != 2 || urls[0] != urls[1] {
		t.Fatalf("links offered %q: want the same link twice", urls)
	}
	if n := len(res.Exchange.Rounds); n != 3 {
		t.Fatalf("%d rounds, want 3", n)
	}
	for _, bad := range []string{"good", "state="} {
		if strings.Contains(r.log.String(), bad) {
			t.Fatalf("log holds %q:\n%s", bad, r.log.String())
		}
	}
}

// TestRefusals is the table of bad links: each answered with its page and
// status, and what the client sees next.
func TestURLFlowRefusals(t *testing.T) {
	cases := []struct {
		name    string
		browse  func(t *testing.T, r *rig, link string) (int, string)
		status  int
		page    string
		logWant string
		next    string // what the client's next retry gets: "same link", "done", or an error text
	}{
		{"tampered", func(t *testing.T, r *rig, link string) (int, string) {
			u, _ := url.Parse(link)
			tok := u.Query().Get("l")
			flip := "A"
			if strings.HasSuffix(tok, "A") {
				flip = "B"
			}
			st, body, _ := r.visit(strings.Replace(link, tok, tok[:len(tok)-1]+flip, 1), "alice")
			return st, body
		}, 400, "This link is not valid", "link signature does not verify", "same link"},
		{"wrong user", func(t *testing.T, r *rig, link string) (int, string) {
			return r.authorize(t, link, "mallory", "good", "")
		}, 403, "This link belongs to another account", "link opened by a different user", "same link"},
		{"not signed in", func(t *testing.T, r *rig, link string) (int, string) {
			return r.authorize(t, link, "", "good", "")
		}, 401, "Please sign in first", "no signed-in user", "same link"},
		{"reused", func(t *testing.T, r *rig, link string) (int, string) {
			if st, _ := r.authorize(t, link, "alice", "good", ""); st != 200 {
				t.Fatalf("first use: %d", st)
			}
			return r.authorize(t, link, "alice", "good", "")
		}, 409, "This link has already been used", "link reused", "done"},
		{"expired", func(t *testing.T, r *rig, link string) (int, string) {
			r.clk.add(2 * time.Minute)
			return r.authorize(t, link, "alice", "good", "")
		}, 410, "This link has expired", "link expired", server.ErrURLExpired.Error()},
		{"dropped", func(t *testing.T, r *rig, link string) (int, string) {
			r.clk.add(3 * time.Minute) // past the record's life
			st, body, _ := r.visit(link, "alice")
			return st, body
		}, 404, "This link is unknown", "link not in the store", server.ErrURLExpired.Error()},
		{"third party error", func(t *testing.T, r *rig, link string) (int, string) {
			return r.authorize(t, link, "alice", "", "access_denied")
		}, 200, "Access was not granted", "the third party answered an error", "the other service did not grant access: access_denied"},
		{"exchange fails", func(t *testing.T, r *rig, link string) (int, string) {
			return r.authorize(t, link, "alice", "bad", "")
		}, 502, "Could not finish", "completion failed", "the other service's answer could not be used"},
		{"never comes", func(t *testing.T, r *rig, link string) (int, string) {
			r.clk.add(2 * time.Minute)
			return 0, ""
		}, 0, "", "", server.ErrURLExpired.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, server.URLFallbackRefuse)
			var urls []string
			c := r.client(t, "alice", func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
				urls = append(urls, req.URL)
				if len(urls) == 1 {
					st, body := tc.browse(t, r, req.URL)
					if st != tc.status || !strings.Contains(body, tc.page) {
						t.Errorf("browser got %d %q, want %d %q", st, body, tc.status, tc.page)
					}
					for _, secret := range []string{"secret-code-xyz", "invalid_grant", "goroutine"} {
						if strings.Contains(body, secret) {
							t.Errorf("page holds %q", secret)
						}
					}
				}
				return mcptest.Accept(nil)
			})
			res, err := c.CallTool(context.Background(), "connect", map[string]any{"repo": "baton"})
			switch tc.next {
			case "same link":
				if !errors.Is(err, mcptest.ErrTooManyRounds) {
					t.Fatalf("got %v, %+v; want the link offered until the client gives up", err, res)
				}
				for _, u := range urls[1:] {
					if u != urls[0] {
						t.Fatalf("links %q differ", urls)
					}
				}
			case "done":
				if err != nil || res.IsError || !strings.Contains(string(res.StructuredContent), "connected alice") {
					t.Fatalf("got %v, %+v", err, res)
				}
			default:
				if err != nil || !res.IsError || !strings.Contains(res.Text(), tc.next) {
					t.Fatalf("got %v, %+v; want an error result with %q", err, res, tc.next)
				}
			}
			if tc.logWant != "" && !strings.Contains(r.log.String(), tc.logWant) {
				t.Fatalf("log lacks %q:\n%s", tc.logWant, r.log.String())
			}
			t.Logf("%s → HTTP %d %q; client next: %s", tc.name, tc.status, tc.page, tc.next)
		})
	}
}

// TestLinksPerPrincipal: another principal calling with the same
// arguments gets a link of its own, not alice's.
func TestURLFlowLinksPerPrincipal(t *testing.T) {
	r := newRig(t, server.URLFallbackRefuse)
	var got []string
	el := func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
		got = append(got, req.URL)
		return mcptest.Decline()
	}
	for _, p := range []string{"alice", "bob", "alice"} {
		res, err := r.client(t, p, el).CallTool(context.Background(), "connect", map[string]any{"repo": "baton"})
		if err != nil || !res.IsError || !strings.Contains(res.Text(), server.ErrURLDeclined.Error()) {
			t.Fatalf("%s: %v %+v", p, err, res)
		}
	}
	if got[0] == got[1] || got[0] != got[2] {
		t.Fatalf("links %q: want alice's reused for alice only", got)
	}
	// bob's browser on alice's link is refused.
	if st, body := r.authorize(t, got[0], "bob", "good", ""); st != 403 || !strings.Contains(body, "another account") {
		t.Fatalf("%d %s", st, body)
	}
}

// TestFallbacks: a client that declares form elicitation only.
func TestURLFlowFallbacks(t *testing.T) {
	formOnly := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: &mcp.Empty{}}}
	t.Run("refuse", func(t *testing.T) {
		r := newRig(t, server.URLFallbackRefuse)
		c, err := mcptest.New(mcptest.Handler(r.mcp), &mcptest.Options{Capabilities: formOnly, Header: http.Header{"X-Principal": {"alice"}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CallTool(context.Background(), "connect", map[string]any{"repo": "baton"})
		var re *mcptest.Error
		if !errors.As(err, &re) || re.Code != -32021 || !strings.Contains(string(re.Data), "url") {
			t.Fatalf("got %v, want -32021 naming elicitation.url", err)
		}
	})
	t.Run("form", func(t *testing.T) {
		r := newRig(t, server.URLFallbackForm)
		var msgs []string
		c, err := mcptest.New(mcptest.Handler(r.mcp), &mcptest.Options{Capabilities: formOnly, Header: http.Header{"X-Principal": {"alice"}},
			Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
				if req.Mode != elicit.ModeForm {
					t.Errorf("mode %q", req.Mode)
				}
				msgs = append(msgs, req.Message)
				if len(msgs) == 2 {
					link := req.Message[strings.Index(req.Message, "http://"):]
					link = link[:strings.IndexByte(link, ' ')]
					if st, _ := r.authorize(t, link, "alice", "good", ""); st != 200 {
						t.Errorf("callback %d", st)
					}
				}
				return mcptest.Accept(map[string]any{"done": true})
			}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.CallTool(context.Background(), "connect", map[string]any{"repo": "baton"})
		if err != nil || res.IsError || !strings.Contains(string(res.StructuredContent), "connected alice") {
			t.Fatalf("%v %+v", err, res)
		}
		if len(msgs) != 2 || msgs[0] != msgs[1] || !strings.Contains(msgs[0], "/connect/start?l=") {
			t.Fatalf("messages %q", msgs)
		}
	})
	t.Run("tool result", func(t *testing.T) {
		r := newRig(t, server.URLFallbackToolResult)
		c, err := mcptest.New(mcptest.Handler(r.mcp), &mcptest.Options{Capabilities: &mcp.ClientCapabilities{}, Header: http.Header{"X-Principal": {"alice"}}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.CallTool(context.Background(), "connect", map[string]any{"repo": "baton"})
		if err != nil || !res.IsError || !strings.Contains(res.Text(), "call this tool again") {
			t.Fatalf("%v %+v", err, res)
		}
		text := res.Text()
		link := text[strings.Index(text, "http://"):]
		link = link[:strings.IndexByte(link, ' ')]
		if st, _ := r.authorize(t, link, "alice", "good", ""); st != 200 {
			t.Fatalf("callback %d", st)
		}
		// The same call again finds the completed link.
		res, err = c.CallTool(context.Background(), "connect", map[string]any{"repo": "baton"})
		if err != nil || res.IsError || !strings.Contains(string(res.StructuredContent), "connected alice") {
			t.Fatalf("%v %+v", err, res)
		}
	})
}

// TestAnonymousAndAfresh: an anonymous call is refused before any link is
// minted; a call after a failed flow gets a new link, one after a
// successful flow its outcome.
func TestURLFlowAnonymousAndAfresh(t *testing.T) {
	r := newRig(t, server.URLFallbackRefuse)
	res, err := r.client(t, "", func(context.Context, *elicit.Request) (*elicit.Result, error) {
		t.Error("an anonymous call must not be asked")
		return mcptest.Cancel()
	}).CallTool(context.Background(), "connect", map[string]any{"repo": "baton"})
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "sign in first") {
		t.Fatalf("%v %+v", err, res)
	}
	var links []string
	c := r.client(t, "alice", func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
		links = append(links, req.URL)
		switch len(links) {
		case 1:
			r.authorize(t, req.URL, "alice", "", "access_denied")
		case 2:
			r.authorize(t, req.URL, "alice", "good", "")
		}
		return mcptest.Accept(nil)
	})
	for i, want := range []string{"did not grant access", "connected alice", "connected alice"} {
		res, err := c.CallTool(context.Background(), "connect", map[string]any{"repo": "baton"})
		if err != nil || !strings.Contains(res.Text(), want) {
			t.Fatalf("call %d: %v %+v, want %q", i+1, err, res, want)
		}
	}
	if len(links) != 2 || links[0] == links[1] {
		t.Fatalf("links %q: want a new link after the denial and none after the success", links)
	}
}
