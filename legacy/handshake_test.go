package legacy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/server"
)

var visibleASCII = regexp.MustCompile(`^[\x21-\x7E]+$`)

func TestInitializeNegotiatesVersion(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "echo", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("ok"), nil
	})
	f := newFixture(t, srv)

	seen := map[string]bool{}
	for _, tc := range []struct {
		name, requested, header, want string
	}{
		{"2025-11-25 without header", "2025-11-25", "", "2025-11-25"},
		{"2025-11-25 with header", "2025-11-25", "2025-11-25", "2025-11-25"},
		{"2025-06-18", "2025-06-18", "", "2025-06-18"},
		{"2025-03-26", "2025-03-26", "", "2025-03-26"},
		{"unknown future", "2030-01-01", "", "2025-11-25"},
		{"unknown past", "2024-11-05", "", "2025-11-25"},
		{"modern version asked by initialize", modernVersion, "", "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, f)
			// The bytes are the point: the requested version and the
			// header vary by case, which a client never sends so.
			s := c.do(http.MethodPost, mustJSON(t, map[string]any{
				"jsonrpc": "2.0", "id": 7, "method": "initialize",
				"params": initParams(tc.requested, `{"sampling":{},"elicitation":{}}`),
			}), map[string]string{rpcwire.HeaderProtocolVersion: tc.header})
			if s.status != http.StatusOK {
				t.Fatalf("HTTP %d, want 200", s.status)
			}
			if s.ctype != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", s.ctype)
			}
			raw := s.result("7")
			res := legacyShape(t, "initialize", raw)
			if res["protocolVersion"] != tc.want {
				t.Errorf("protocolVersion = %v, want %s", res["protocolVersion"], tc.want)
			}
			info, _ := res["serverInfo"].(map[string]any)
			if info["name"] != testInfo.Name || info["version"] != testInfo.Version {
				t.Errorf("serverInfo = %v", res["serverInfo"])
			}
			caps, _ := res["capabilities"].(map[string]any)
			if tools, _ := caps["tools"].(map[string]any); tools["listChanged"] != true {
				t.Errorf("capabilities.tools = %v, want listChanged true", caps["tools"])
			}
			if _, ok := caps["logging"].(map[string]any); !ok {
				t.Errorf("capabilities.logging missing: %v", caps)
			}
			if _, ok := caps["prompts"]; ok {
				t.Errorf("capabilities.prompts advertised without prompts: %v", caps)
			}
			sid := s.header.Get(rpcwire.HeaderSessionID)
			if len(sid) < 32 || !visibleASCII.MatchString(sid) {
				t.Errorf("Mcp-Session-Id %q: want >= 32 visible ASCII characters", sid)
			}
			if seen[sid] {
				t.Errorf("Mcp-Session-Id %q issued twice", sid)
			}
			seen[sid] = true

			// The negotiated version is the session's: later requests
			// carry it.
			c.sid, c.version = sid, tc.want
			c.notify("notifications/initialized", nil)
			if got := c.call(8, "ping", nil); string(got) != "{}" {
				t.Errorf("ping = %s", got)
			}
		})
	}
	if got := f.h.SessionCount(); got != len(seen) {
		t.Errorf("SessionCount = %d, want %d", got, len(seen))
	}
}

func TestInitializeErrors(t *testing.T) {
	f := newFixture(t, newServer(t))
	live := connect(t, f, `{}`)

	t.Run("with a session id", func(t *testing.T) {
		c := newClient(t, f)
		c.sid = live.sid
		s := c.request(1, "initialize", initParams(legacyVersion, `{}`))
		if s.status != http.StatusBadRequest {
			t.Errorf("HTTP %d, want 400", s.status)
		}
		if e := s.rpcErr("1"); e.Code != -32600 || !strings.Contains(e.Message, rpcwire.HeaderSessionID) {
			t.Errorf("error = %d %q, want -32600 naming %s", e.Code, e.Message, rpcwire.HeaderSessionID)
		}
		if s.header.Get(rpcwire.HeaderSessionID) != "" {
			t.Error("a refused initialize minted a session")
		}
	})
	t.Run("with an unknown session id", func(t *testing.T) {
		c := newClient(t, f)
		c.sid = "no-such-session-0123456789abcdefghijk"
		s := c.request(1, "initialize", initParams(legacyVersion, `{}`))
		if s.status != http.StatusBadRequest {
			t.Errorf("HTTP %d, want 400", s.status)
		}
		if e := s.rpcErr("1"); e.Code != -32600 {
			t.Errorf("code = %d, want -32600", e.Code)
		}
	})

	for _, tc := range []struct {
		name   string
		params any
	}{
		{"no params", nil},
		{"empty params", map[string]any{}},
		{"no capabilities", map[string]any{"protocolVersion": legacyVersion, "clientInfo": map[string]any{"name": "x", "version": "1"}}},
		{"no protocolVersion", map[string]any{"capabilities": map[string]any{}}},
		{"protocolVersion not a string", map[string]any{"protocolVersion": 20251125, "capabilities": map[string]any{}}},
		{"capabilities not an object", map[string]any{"protocolVersion": legacyVersion, "capabilities": "all"}},
		{"clientInfo not an object", map[string]any{"protocolVersion": legacyVersion, "capabilities": map[string]any{}, "clientInfo": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.h.SessionCount()
			c := newClient(t, f)
			s := c.request("init", "initialize", tc.params)
			if s.status != http.StatusBadRequest {
				t.Errorf("HTTP %d, want 400", s.status)
			}
			if e := s.rpcErr(`"init"`); e.Code != -32602 {
				t.Errorf("code = %d (%s), want -32602", e.Code, e.Message)
			}
			if s.header.Get(rpcwire.HeaderSessionID) != "" {
				t.Error("malformed initialize minted a session")
			}
			if got := f.h.SessionCount(); got != before {
				t.Errorf("SessionCount %d -> %d", before, got)
			}
		})
	}

	t.Run("second initialize inside the session", func(t *testing.T) {
		// Routed to the session because of the header, refused there.
		s := live.request(5, "initialize", initParams(legacyVersion, `{}`))
		if s.status != http.StatusBadRequest {
			t.Errorf("HTTP %d, want 400", s.status)
		}
		if e := s.rpcErr("5"); e.Code != -32600 {
			t.Errorf("code = %d, want -32600", e.Code)
		}
	})
}

func TestMaxSessions(t *testing.T) {
	f := newFixture(t, newLegacyServer(t, &legacy.Options{MaxSessions: 2}, nil))
	connect(t, f, `{}`)
	c2 := connect(t, f, `{}`)
	c := newClient(t, f)
	s := c.request(1, "initialize", initParams(legacyVersion, `{}`))
	if s.status != http.StatusServiceUnavailable {
		t.Fatalf("third initialize: HTTP %d, want 503", s.status)
	}
	if e := s.rpcErr("1"); e.Code != -32603 || !strings.Contains(e.Message, "too many sessions") {
		t.Errorf("error = %d %q", e.Code, e.Message)
	}
	// A DELETE frees a slot.
	if d := c2.do(http.MethodDelete, nil, nil); d.status != http.StatusNoContent {
		t.Fatalf("DELETE: HTTP %d", d.status)
	}
	connect(t, f, `{}`)
}

func TestRouting(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "echo", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("echo " + req.Meta.ProtocolVersion), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{}`)

	t.Run("modern request next to a legacy session", func(t *testing.T) {
		status, m := modernPost(t, f, 1, "tools/call", toolCall("echo", nil), `{}`)
		if status != http.StatusOK || m.Error != nil {
			t.Fatalf("modern tools/call: HTTP %d %s", status, m.Raw)
		}
		res := decodeMap(t, m.Result)
		if res["resultType"] != "complete" {
			t.Errorf("modern result without resultType complete: %s", m.Result)
		}
		meta, _ := res["_meta"].(map[string]any)
		if info, _ := meta[metaInfo].(map[string]any); info["name"] != testInfo.Name {
			t.Errorf("modern result without serverInfo: %s", m.Result)
		}
		if text, _ := toolText(t, m.Result); text != "echo "+modernVersion {
			t.Errorf("modern text = %q", text)
		}

		status, m = modernPost(t, f, 2, "server/discover", nil, `{}`)
		if status != http.StatusOK || m.Error != nil {
			t.Fatalf("server/discover: HTTP %d %s", status, m.Raw)
		}
		var d struct {
			SupportedVersions []string `json:"supportedVersions"`
		}
		_ = json.Unmarshal(m.Result, &d)
		for _, v := range []string{modernVersion, "2025-11-25", "2025-06-18", "2025-03-26"} {
			if !slices.Contains(d.SupportedVersions, v) {
				t.Errorf("supportedVersions %v lacks %s", d.SupportedVersions, v)
			}
		}

		// The legacy session is unaffected.
		text, _ := toolText(t, c.call(3, "tools/call", toolCall("echo", nil)))
		if text != "echo "+legacyVersion {
			t.Errorf("legacy text = %q", text)
		}
	})

	t.Run("modern-only methods are not legacy methods", func(t *testing.T) {
		for _, m := range []string{"server/discover", "subscriptions/listen"} {
			s := c.request(9, m, map[string]any{})
			if e := s.rpcErr("9"); e.Code != -32601 {
				t.Errorf("%s in a legacy session: code %d, want -32601", m, e.Code)
			}
		}
	})

	t.Run("unknown session", func(t *testing.T) {
		u := newClient(t, f)
		u.sid, u.version = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", legacyVersion
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			var s *stream
			if method == http.MethodPost {
				s = u.request(4, "tools/list", nil)
			} else {
				s = u.do(method, nil, map[string]string{"Accept": "text/event-stream"})
			}
			if s.status != http.StatusNotFound {
				t.Errorf("%s: HTTP %d, want 404", method, s.status)
			}
			want := "null"
			if method == http.MethodPost {
				want = "4"
			}
			if e := s.rpcErr(want); e.Code != -32001 {
				t.Errorf("%s: code %d, want -32001", method, e.Code)
			}
		}
	})

	t.Run("protocol version header mismatch", func(t *testing.T) {
		s := c.requestWith(5, "ping", nil, map[string]string{rpcwire.HeaderProtocolVersion: "2025-06-18"})
		if s.status != http.StatusBadRequest {
			t.Errorf("HTTP %d, want 400", s.status)
		}
		if e := s.rpcErr("5"); e.Code != -32600 || !strings.Contains(e.Message, "2025-06-18") {
			t.Errorf("error = %d %q", e.Code, e.Message)
		}
		// Without the header the session version is assumed.
		s = c.requestWith(6, "ping", nil, map[string]string{rpcwire.HeaderProtocolVersion: ""})
		if got := s.result("6"); string(got) != "{}" {
			t.Errorf("ping without version header = %s", got)
		}
	})

	t.Run("other HTTP methods", func(t *testing.T) {
		s := c.do(http.MethodPut, nil, nil)
		if s.status != http.StatusMethodNotAllowed {
			t.Errorf("PUT: HTTP %d, want 405", s.status)
		}
	})

	t.Run("delete", func(t *testing.T) {
		d := connect(t, f, `{}`)
		before := f.h.SessionCount()
		s := d.do(http.MethodDelete, nil, nil)
		if s.status != http.StatusNoContent {
			t.Fatalf("DELETE: HTTP %d, want 204", s.status)
		}
		if f.h.SessionCount() != before-1 {
			t.Errorf("SessionCount %d after DELETE, want %d", f.h.SessionCount(), before-1)
		}
		for _, method := range []string{http.MethodPost, http.MethodDelete} {
			var s *stream
			if method == http.MethodPost {
				s = d.request(1, "ping", nil)
			} else {
				s = d.do(method, nil, nil)
			}
			if s.status != http.StatusNotFound {
				t.Errorf("%s after DELETE: HTTP %d, want 404", method, s.status)
			}
		}
		// Another session is untouched.
		if got := c.call(2, "ping", nil); string(got) != "{}" {
			t.Errorf("ping = %s", got)
		}
	})
}

// TestDeleteEndsWaits checks that DELETE ends a call waiting for the client
// and the session's GET stream.
func TestDeleteEndsWaits(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	addTool(t, srv, "ask", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		_, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
		// The call's context ends too (asynchronously, via the session).
		select {
		case <-ctx.Done():
		case <-time.After(waitLimit):
		}
		out <- outcome{err: err, ctxErr: ctx.Err()}
		if err != nil {
			return nil, err
		}
		return server.TextResult("done"), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)
	get := c.get("text/event-stream")
	s := c.request(1, "tools/call", toolCall("ask", nil))
	s.nextRequest("elicitation/create")

	if d := c.do(http.MethodDelete, nil, nil); d.status != http.StatusNoContent {
		t.Fatalf("DELETE: HTTP %d", d.status)
	}
	o := recv(t, out, "the handler")
	if o.err == nil || !strings.Contains(o.err.Error(), "deleted the session") {
		t.Errorf("handler error = %v, want the session deletion", o.err)
	}
	if o.ctxErr == nil {
		t.Error("the call's context is still live after DELETE")
	}
	for _, m := range s.end() {
		if m.IsResponse() {
			t.Errorf("a response was written after DELETE: %s", m.Raw)
		}
	}
	get.end()
}

func TestIdleExpiry(t *testing.T) {
	const idle = 300 * time.Millisecond // wide enough that a loaded machine does not expire the live sessions before the count
	srv := newLegacyServer(t, &legacy.Options{SessionIdle: idle, KeepAlive: 10 * time.Millisecond}, nil)
	answered := make(chan outcome, 1)
	addTool(t, srv, "ask", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		r, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
		answered <- outcome{err: err}
		if err != nil {
			return nil, err
		}
		return server.TextResult(string(r.Action)), nil
	})
	f := newFixture(t, srv)

	idleC := connect(t, f, `{}`)
	getC := connect(t, f, `{}`)
	get := getC.get("text/event-stream")
	if get.status != http.StatusOK {
		t.Fatalf("GET: HTTP %d", get.status)
	}
	callC := connect(t, f, `{"elicitation":{}}`)
	call := callC.request("c", "tools/call", toolCall("ask", nil))
	req := call.nextRequest("elicitation/create")

	// Wait well past the idle period; a sweep runs on the next lookup.
	time.Sleep(7 * idle / 2)

	if got := getC.call(1, "ping", nil); string(got) != "{}" {
		t.Errorf("session with an open GET stream: ping = %s", got)
	}
	callC.answer(req, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
	if o := recv(t, answered, "the answer"); o.err != nil {
		t.Errorf("session with a call in flight lost its answer: %v", o.err)
	}
	if text, _ := toolText(t, call.result(`"c"`)); text != "accept" {
		t.Errorf("tool text = %q", text)
	}
	s := idleC.request(2, "ping", nil)
	if s.status != http.StatusNotFound {
		t.Fatalf("idle session: HTTP %d, want 404", s.status)
	}
	if e := s.rpcErr("2"); e.Code != -32001 {
		t.Errorf("idle session: code %d, want -32001", e.Code)
	}
	if n := f.h.SessionCount(); n != 2 {
		t.Errorf("SessionCount = %d, want 2", n)
	}
	if get.comments() == 0 {
		t.Error("the quiet GET stream got no keep-alive comment")
	}

	// Once the GET stream closes, that session goes idle and expires too.
	get.close()
	time.Sleep(7 * idle / 2)
	getC.request(3, "ping", nil) // triggers the sweep; may itself be the 404
	if n := f.h.SessionCount(); n != 0 {
		t.Errorf("SessionCount = %d after the GET closed and idle time passed, want 0", n)
	}
}

// TestLegacyURLElicitationNeedsID checks the 2025-11-25 requirement that a
// blocking URL elicitation carries an elicitationId.
func TestLegacyURLElicitationNeedsID(t *testing.T) {
	srv := newServer(t)
	out := make(chan error, 1)
	addTool(t, srv, "url", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		_, err := req.Elicit(ctx, &elicit.Request{Mode: elicit.ModeURL, Message: "Sign in", URL: "https://example.com/in"})
		out <- err
		return server.TextResult("x"), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{"form":{},"url":{}}}`)
	s := c.request(1, "tools/call", toolCall("url", nil))
	if err := recv(t, out, "handler"); err == nil || !strings.Contains(err.Error(), "elicitationId") {
		t.Errorf("err = %v, want one about elicitationId", err)
	}
	s.result("1")
}

// TestSessionBelongsToItsPrincipal checks that a session opened by one
// authenticated subject does not exist for another, nor for an anonymous
// request, that another subject cannot answer its questions, and that the
// principal binds the state the bridge resumes.
func TestSessionBelongsToItsPrincipal(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "who", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult(server.PrincipalFromContext(ctx)), nil
	})
	askTools(t, srv, nil)
	suspendTools(t, srv)
	// The test's stand-in for authentication middleware: the subject is
	// taken from a header.
	auth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if sub := r.Header.Get("X-Test-Subject"); sub != "" {
				r = r.WithContext(server.ContextWithPrincipal(r.Context(), sub))
			}
			next.ServeHTTP(w, r)
		})
	}
	f := newFixtureWith(t, srv, auth)

	alice := connectWith(t, f, allCaps, map[string]string{"X-Test-Subject": "alice"})

	as := func(sub string, id int) *stream {
		return alice.requestWith(id, "tools/call", toolCall("who", nil), map[string]string{"X-Test-Subject": sub})
	}
	if text, _ := toolText(t, as("alice", 1).result("1")); text != "alice" {
		t.Errorf("alice's call ran as %q", text)
	}
	for i, sub := range []string{"mallory", ""} {
		st := as(sub, 2+i)
		if st.status != http.StatusNotFound {
			t.Errorf("subject %q on alice's session: HTTP %d, want 404", sub, st.status)
		}
		if e := st.rpcErr(fmt.Sprint(2 + i)); e.Code != -32001 {
			t.Errorf("subject %q: code %d, want -32001", sub, e.Code)
		}
	}
	// DELETE by another subject does not end the session.
	if d := alice.do(http.MethodDelete, nil, map[string]string{"X-Test-Subject": "mallory"}); d.status != http.StatusNotFound {
		t.Errorf("mallory's DELETE: HTTP %d, want 404", d.status)
	}
	// The owner's questions are answered by the owner only.
	st := alice.requestWith(9, "tools/call", toolCall("ask_two", nil), map[string]string{"X-Test-Subject": "alice"})
	answer := func(sub string, q message, result any) int {
		return alice.answerWith(q, result, map[string]string{"X-Test-Subject": sub})
	}
	q := st.nextRequest("elicitation/create")
	if status := answer("mallory", q, map[string]any{"action": "accept", "content": map[string]any{"name": "Mallory"}}); status != http.StatusNotFound {
		t.Errorf("mallory's answer to alice's question: HTTP %d, want 404", status)
	}
	st.none("after mallory's answer")
	if status := answer("alice", q, map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}); status != http.StatusAccepted {
		t.Fatalf("answer: HTTP %d", status)
	}
	if status := answer("alice", st.nextRequest("elicitation/create"), map[string]any{"action": "accept", "content": map[string]any{"age": 30}}); status != http.StatusAccepted {
		t.Fatalf("answer: HTTP %d", status)
	}
	if text, _ := toolText(t, st.result("9")); text != "Alice is 30" {
		t.Errorf("result = %q", text)
	}
	// The bridge works for the owner: the state sealed in the first run
	// is bound to alice, and the re-run, made for alice, resumes it.
	st = alice.requestWith(10, "tools/call", toolCall("suspend_once", nil), map[string]string{"X-Test-Subject": "alice"})
	if text, _ := toolText(t, st.result("10")); text != `n=42 round=2 principal="alice"` {
		t.Errorf("bridged result = %q", text)
	}
}
