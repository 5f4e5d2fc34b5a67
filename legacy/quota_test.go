package legacy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/server"
)

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)} }

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// proxyAddr is the address in-process requests come from (httptest's
// NewRequest sets it): the tests trust it as a proxy.
const proxyAddr = "192.0.2.1"

// inProcess sends one legacy request straight to the server's handler, as
// the proxy forwarding for client (X-Forwarded-For; "" for none), with the
// principal if not "". It is built by hand, not with mcptest, on purpose:
// these tests choose the peer address and the forwarded one request by
// request and send thousands of initializes, so the bytes and the address
// are the point.
func inProcess(tb testing.TB, h http.Handler, sid, client, principal string, msg any) *httptest.ResponseRecorder {
	tb.Helper()
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(mustJSON(tb, msg)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		r.Header.Set(rpcwire.HeaderSessionID, sid)
		r.Header.Set(rpcwire.HeaderProtocolVersion, legacyVersion)
	}
	if client != "" {
		r.Header.Set("X-Forwarded-For", client)
	}
	if principal != "" {
		r = r.WithContext(server.ContextWithPrincipal(r.Context(), principal))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func initMsg() map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initParams(legacyVersion, `{}`)}
}

// rpcErrorOf decodes the JSON-RPC error of a recorded response.
func rpcErrorOf(tb testing.TB, w *httptest.ResponseRecorder) *rpcError {
	tb.Helper()
	var m message
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || m.Error == nil {
		tb.Fatalf("HTTP %d %s: want a JSON-RPC error", w.Code, w.Body.Bytes())
	}
	return m.Error
}

// TestSessionFlood is the flood of issue 13: one client sends 10,000
// initialize calls. Before, they filled the global limit and every new
// client got 503 until the sessions expired. Now the client fills only
// its own quota, is told when to retry, and every other client still gets
// a session.
func TestSessionFlood(t *testing.T) {
	clock := newTestClock()
	srv := newLegacyServer(t, &legacy.Options{
		MaxSessionsPerClient: 8,
		MaxSessions:          40,
		TrustedProxies:       []netip.Prefix{netip.MustParsePrefix(proxyAddr + "/32")},
		Now:                  clock.now,
	}, nil)
	h := handlerOf(t, srv)
	t.Cleanup(h.Close)
	handler := srv

	const flood = 10000
	created, refused := 0, 0
	var firstRefusal *httptest.ResponseRecorder
	for range flood {
		w := inProcess(t, handler, "", "198.51.100.66", "", initMsg())
		switch w.Code {
		case http.StatusOK:
			created++
		case http.StatusTooManyRequests:
			refused++
			if firstRefusal == nil {
				firstRefusal = w
			}
		default:
			t.Fatalf("initialize %d of the flood: HTTP %d %s", created+refused+1, w.Code, w.Body.Bytes())
		}
	}
	if created != 8 || refused != flood-8 {
		t.Fatalf("flood of %d: %d sessions, %d refused; want 8 and %d", flood, created, refused, flood-8)
	}
	e := rpcErrorOf(t, firstRefusal)
	if e.Code != -32600 || !strings.Contains(e.Message, "this client address has its limit of 8") {
		t.Errorf("refusal: %d %q", e.Code, e.Message)
	}
	// Nothing was used since: the soonest slot frees when the first
	// session has been idle for 30 minutes.
	if ra := firstRefusal.Header().Get("Retry-After"); ra != "1800" {
		t.Errorf("Retry-After = %q, want 1800 (the idle time)", ra)
	}
	t.Logf("one client, %d initialize: %d sessions, %d refused with 429 (Retry-After %s); SessionCount %d",
		flood, created, refused, firstRefusal.Header().Get("Retry-After"), h.SessionCount())

	// Another client still gets a session.
	if w := inProcess(t, handler, "", "198.51.100.7", "", initMsg()); w.Code != http.StatusOK {
		t.Fatalf("another client after the flood: HTTP %d %s", w.Code, w.Body.Bytes())
	}
	// A peer that is not a trusted proxy cannot pick its address with the
	// header: its sessions count against its own address.
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(mustJSON(t, initMsg())))
	r.RemoteAddr = "198.51.100.66:5555"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("X-Forwarded-For", "203.0.113.1")
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, r)
	if w.Code != http.StatusTooManyRequests {
		t.Errorf("the flooding address behind a forged X-Forwarded-For: HTTP %d, want 429", w.Code)
	}

	// Ten minutes on, the retry time is twenty minutes.
	clock.advance(10 * time.Minute)
	if w := inProcess(t, handler, "", "198.51.100.66", "", initMsg()); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1200" {
		t.Errorf("ten minutes later: HTTP %d, Retry-After %q; want 429 and 1200", w.Code, w.Header().Get("Retry-After"))
	}
	// Principals have quotas of their own, whatever address they use.
	for i := range 9 {
		w := inProcess(t, handler, "", "198.51.100.66", "alice", initMsg())
		want := http.StatusOK
		if i == 8 {
			want = http.StatusTooManyRequests
		}
		if w.Code != want {
			t.Fatalf("alice's initialize %d: HTTP %d, want %d", i+1, w.Code, want)
		}
		if i == 8 && !strings.Contains(rpcErrorOf(t, w).Message, "this principal has its limit of 8") {
			t.Errorf("alice over her quota: %s", w.Body.Bytes())
		}
	}
	// The total: 8 + 1 + 8 so far; 23 more clients fill it, the next is
	// refused with 503, told to come back when the flood's first session
	// expires (in 20 minutes).
	for i := range 23 {
		if w := inProcess(t, handler, "", netip.AddrFrom4([4]byte{203, 0, 113, byte(i + 10)}).String(), "", initMsg()); w.Code != http.StatusOK {
			t.Fatalf("client %d: HTTP %d %s", i, w.Code, w.Body.Bytes())
		}
	}
	w = inProcess(t, handler, "", "203.0.113.200", "", initMsg())
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1200" {
		t.Errorf("over the total: HTTP %d, Retry-After %q; want 503 and 1200", w.Code, w.Header().Get("Retry-After"))
	}
	if e := rpcErrorOf(t, w); e.Code != -32603 || !strings.Contains(e.Message, "too many sessions (40)") {
		t.Errorf("over the total: %d %q", e.Code, e.Message)
	}
	// Once the flood's sessions have been idle for 30 minutes they are
	// gone, exactly then (no sweep to wait for): new clients get sessions.
	clock.advance(20 * time.Minute)
	if w := inProcess(t, handler, "", "198.51.100.66", "", initMsg()); w.Code != http.StatusOK {
		t.Errorf("after the flood's sessions expired: HTTP %d %s", w.Code, w.Body.Bytes())
	}
	// Left: alice's 8 and the 23 (ten minutes younger), and the new one.
	if n := h.SessionCount(); n != 8+23+1 {
		t.Errorf("SessionCount = %d, want %d", n, 8+23+1)
	}
}

// TestPingIsNotUse checks what keeps a session: a request other than
// ping does; a ping, a notification or an unknown response do not.
func TestPingIsNotUse(t *testing.T) {
	clock := newTestClock()
	srv := newLegacyServer(t, &legacy.Options{Now: clock.now}, nil)
	addTool(t, srv, "echo", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("echo"), nil
	})
	h := handlerOf(t, srv)
	t.Cleanup(h.Close)
	handler := srv
	open := func() string {
		w := inProcess(t, handler, "", "", "", initMsg())
		if w.Code != http.StatusOK {
			t.Fatalf("initialize: HTTP %d", w.Code)
		}
		return w.Header().Get(rpcwire.HeaderSessionID)
	}
	pinged, used := open(), open()
	ping := map[string]any{"jsonrpc": "2.0", "id": 2, "method": "ping"}
	list := map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
	note := map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}
	answer := map[string]any{"jsonrpc": "2.0", "id": 99, "result": map[string]any{}}
	// Every 10 minutes for 40 minutes: pings (and a notification and a
	// stray response) to one session, a tools/list to the other.
	for i := 1; i <= 4; i++ {
		clock.advance(10 * time.Minute)
		if i < 3 {
			if w := inProcess(t, handler, pinged, "", "", ping); w.Code != http.StatusOK {
				t.Fatalf("ping after %d minutes: HTTP %d", 10*i, w.Code)
			}
			for m, want := range map[any]int{&note: http.StatusAccepted, &answer: http.StatusBadRequest} {
				if w := inProcess(t, handler, pinged, "", "", m); w.Code != want {
					t.Fatalf("POST %v after %d minutes: HTTP %d", m, 10*i, w.Code)
				}
			}
		}
		if w := inProcess(t, handler, used, "", "", list); w.Code != http.StatusOK {
			t.Fatalf("tools/list after %d minutes: HTTP %d", 10*i, w.Code)
		}
	}
	// 40 minutes after its last use, the pinged session is gone.
	if w := inProcess(t, handler, pinged, "", "", ping); w.Code != http.StatusNotFound {
		t.Errorf("the session that was only pinged, 40 minutes on: HTTP %d, want 404", w.Code)
	}
	if w := inProcess(t, handler, used, "", "", ping); w.Code != http.StatusOK {
		t.Errorf("the session that was used: HTTP %d, want 200", w.Code)
	}
}

// TestSessionFloodDefaults is the flood of issue 13 against the default
// options: 10,000 initialize from one client address.
func TestSessionFloodDefaults(t *testing.T) {
	srv := newLegacyServer(t, &legacy.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix(proxyAddr + "/32")}}, nil)
	const perClient = 100 // Options.MaxSessionsPerClient's documented default
	h := handlerOf(t, srv)
	t.Cleanup(h.Close)
	handler := srv
	codes := map[int]int{}
	retry := ""
	for range 10000 {
		w := inProcess(t, handler, "", "198.51.100.66", "", initMsg())
		codes[w.Code]++
		if w.Code == http.StatusTooManyRequests {
			retry = w.Header().Get("Retry-After")
		}
	}
	if codes[http.StatusOK] != perClient || codes[http.StatusTooManyRequests] != 10000-perClient {
		t.Errorf("10,000 initialize from one client: %v, want %d sessions and the rest 429", codes, perClient)
	}
	if w := inProcess(t, handler, "", "198.51.100.7", "", initMsg()); w.Code != http.StatusOK {
		t.Errorf("another client after the flood: HTTP %d %s", w.Code, w.Body.Bytes())
	}
	t.Logf("defaults: one client, 10,000 initialize: HTTP status counts %v (Retry-After %s s); another client still gets a session; %d sessions open", codes, retry, h.SessionCount())
}

// TestInitializeParamsAreBounded checks that what a session keeps of
// initialize for its whole life (and every request rereads) is bounded.
func TestInitializeParamsAreBounded(t *testing.T) {
	srv := newLegacyServer(t, nil, nil)
	h := handlerOf(t, srv)
	t.Cleanup(h.Close)
	p := initParams(legacyVersion, `{}`)
	p["clientInfo"] = map[string]any{"name": strings.Repeat("x", 70<<10), "version": "1"}
	w := inProcess(t, srv, "", "", "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": p})
	if w.Code != http.StatusBadRequest || w.Header().Get(rpcwire.HeaderSessionID) != "" {
		t.Fatalf("initialize with a 70 KiB clientInfo: HTTP %d, session %q; want 400 and none", w.Code, w.Header().Get(rpcwire.HeaderSessionID))
	}
	if e := rpcErrorOf(t, w); e.Code != -32602 || !strings.Contains(e.Message, "64 KiB") {
		t.Errorf("error = %d %q, want -32602 naming the limit", e.Code, e.Message)
	}
}
