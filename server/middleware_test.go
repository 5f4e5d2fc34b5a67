package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// seen is what a recording middleware saw of one request.
type seen struct {
	method, target, principal, outcome string
	round                              int
	legacy                             bool
}

// recorder is a middleware that records every request and its outcome.
type recorder struct {
	mu   sync.Mutex
	seen []seen
}

func (rec *recorder) middleware(next server.MethodHandler) server.MethodHandler {
	return func(ctx context.Context, req *server.MethodRequest) (*server.MethodResult, error) {
		res, err := next(ctx, req)
		s := seen{method: req.Method, target: req.Target, principal: req.Principal, round: req.Round, legacy: req.Legacy}
		switch {
		case err != nil:
			e, _ := mcp.AsError(err)
			s.outcome = fmt.Sprintf("error %d", e.Code)
		case res.InputRequired:
			s.outcome = "input_required"
		case res.IsError:
			s.outcome = "tool_error"
		default:
			s.outcome = "complete"
		}
		rec.mu.Lock()
		rec.seen = append(rec.seen, s)
		rec.mu.Unlock()
		return res, err
	}
}

func (rec *recorder) take() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := rec.seen
	rec.seen = nil
	return out
}

func twoQuestions(t *testing.T, srv *server.Server) {
	t.Helper()
	name, err := elicit.NewForm("Your name?", elicit.String("name").Required())
	if err != nil {
		t.Fatal(err)
	}
	ok, err := elicit.NewForm("Sure?", elicit.Boolean("ok").Required())
	if err != nil {
		t.Fatal(err)
	}
	err = srv.AddTool(server.Tool{Name: "ask_twice"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if _, err := req.Elicit(ctx, name); err != nil {
			return nil, err
		}
		if _, err := req.Elicit(ctx, ok); err != nil {
			return nil, err
		}
		return server.TextResult("done"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = srv.AddTool(server.Tool{Name: "fails"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return nil, errors.New("it did not work")
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Middleware sees every request with its method, target, round and
// principal, and the outcome: input_required rounds, tool errors, protocol
// errors, a refused state.
func TestMiddlewareSeesEveryRequest(t *testing.T) {
	rec := &recorder{}
	srv := newServer(t, &server.Options{Middleware: []server.Middleware{rec.middleware}})
	twoQuestions(t, srv)
	c, err := mcptest.New(mcptest.Handler(srv), &mcptest.Options{
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			if req.Message == "Sure?" {
				return mcptest.Accept(map[string]any{"ok": true})
			}
			return mcptest.Accept(map[string]any{"name": "Ada"})
		},
		Header: map[string][]string{},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, "ask_twice", nil)
	if err != nil || res.Text() != "done" {
		t.Fatalf("ask_twice: %v %v", res, err)
	}
	state := res.Exchange.Rounds[0].RequestState
	if _, err := c.CallTool(ctx, "fails", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "nope", nil); err == nil {
		t.Fatal("an unknown tool was called")
	}
	// A state from another tool is refused before any round is known.
	if _, err := c.CallTool(ctx, "fails", nil, mcptest.Resume(state, nil)); err == nil {
		t.Fatal("a state for another tool was accepted")
	}
	want := []seen{
		{method: "tools/list", outcome: "complete"},
		{method: "tools/call", target: "ask_twice", round: 1, outcome: "input_required"},
		{method: "tools/call", target: "ask_twice", round: 2, outcome: "input_required"},
		{method: "tools/call", target: "ask_twice", round: 3, outcome: "complete"},
		{method: "tools/call", target: "fails", round: 1, outcome: "tool_error"},
		{method: "tools/call", target: "nope", round: 1, outcome: "error -32602"},
		{method: "tools/call", target: "fails", round: 2, outcome: "error -32602"},
	}
	got := rec.take()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("middleware saw\n%v\nwant\n%v", got, want)
	}
}

// Middleware may refuse a request: a *mcp.Error reaches the client as
// it is and the handler never runs; any other error is a generic -32603.
func TestMiddlewareRefuses(t *testing.T) {
	ran := 0
	deny := func(next server.MethodHandler) server.MethodHandler {
		return func(ctx context.Context, req *server.MethodRequest) (*server.MethodResult, error) {
			switch {
			case req.Target == "secret" && req.Principal != "admin":
				return nil, &mcp.Error{Code: -31000, Message: "Forbidden: admins only"}
			case req.Target == "broken":
				return nil, errors.New("policy store: dial tcp 10.0.0.7:5432: connection refused")
			}
			return next(ctx, req)
		}
	}
	srv := newServer(t, &server.Options{Middleware: []server.Middleware{deny}})
	for _, name := range []string{"secret", "broken"} {
		err := srv.AddTool(server.Tool{Name: name}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			ran++
			return server.TextResult("ran"), nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := mcptest.New(mcptest.Handler(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var me *mcptest.Error
	if _, err := c.CallTool(ctx, "secret", nil); !errors.As(err, &me) || me.Code != -31000 || me.Message != "Forbidden: admins only" {
		t.Fatalf("secret: %v", err)
	}
	if _, err := c.CallTool(ctx, "broken", nil); !errors.As(err, &me) || me.Code != mcp.InternalError || strings.Contains(me.Message, "10.0.0.7") {
		t.Fatalf("broken: %v", err)
	}
	if ran != 0 {
		t.Fatalf("the handler ran %d times", ran)
	}
	// With the principal, the same request goes through.
	ctxAdmin := server.ContextWithPrincipal(ctx, "admin")
	h := srvWithPrincipal(srv, "admin")
	c2, err := mcptest.New(mcptest.Handler(h), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c2.CallTool(ctxAdmin, "secret", nil); err != nil || res.Text() != "ran" {
		t.Fatalf("admin: %v %v", res, err)
	}
}

// LogRequests writes one line per request with what an operator needs.
func TestLogRequests(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	// A nil logger means the server's own.
	srv := newServer(t, &server.Options{Logger: log, Middleware: []server.Middleware{server.LogRequests(nil, slog.LevelInfo)}})
	twoQuestions(t, srv)
	c, err := mcptest.New(mcptest.Handler(srv), &mcptest.Options{
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) { return mcptest.Decline() },
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(context.Background(), "ask_twice", nil); err != nil {
		t.Fatal(err)
	}
	_, _ = c.CallTool(context.Background(), "nope", nil)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4 (three rounds, one error):\n%s", len(lines), buf.String())
	}
	for i, want := range []string{
		`level=INFO msg="mcp request" method=tools/call`,
		"round=2",
		"outcome=complete",
		"level=WARN",
	} {
		if !strings.Contains(lines[min(i, 3)], want) {
			t.Errorf("line %d %q lacks %q", i, lines[min(i, 3)], want)
		}
	}
	if !strings.Contains(lines[0], "target=ask_twice") || !strings.Contains(lines[0], "outcome=input_required") || !strings.Contains(lines[0], "took=") || !strings.Contains(lines[3], "code=-32602") {
		t.Errorf("lines:\n%s", buf.String())
	}
}

// newServer is a server for these tests, with a fixed state key and a
// quiet log.
func newServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k1", Secret: []byte(strings.Repeat("s", mrtr.MinKeySize))})
	if err != nil {
		t.Fatal(err)
	}
	o := server.Options{}
	if opts != nil {
		o = *opts
	}
	o.StateKeys = ring
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	srv, err := server.New(mcp.Implementation{Name: "t", Version: "1"}, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// srvWithPrincipal serves srv as principal, as authentication middleware
// in front of it would.
func srvWithPrincipal(srv *server.Server, principal string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r.WithContext(server.ContextWithPrincipal(r.Context(), principal)))
	})
}

// Middleware sees a 2025-11-25 session's requests too: its own methods
// (ping) and those the server dispatches (tools/call), marked Legacy; and
// a subscriptions/listen refused before its stream opens.
func TestMiddlewareSeesLegacyAndListen(t *testing.T) {
	rec := &recorder{}
	srv := newServer(t, &server.Options{Middleware: []server.Middleware{rec.middleware}, Legacy: legacy.New(nil)})
	twoQuestions(t, srv)
	// post sends a request of a 2025-11-25 session, written out by hand:
	// mcptest speaks only 2026-07-28.
	post := func(sid, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			r.Header.Set("Mcp-Session-Id", sid)
			r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		return w
	}
	hello := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := hello.Header().Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d %s", hello.Code, hello.Body)
	}
	post(sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	post(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fails"}}`)
	c, err := mcptest.New(mcptest.Handler(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.Do(context.Background(), "subscriptions/listen", map[string]any{}); err != nil || res.Error == nil {
		t.Fatalf("listen without a filter: %+v %v", res, err)
	}
	want := []seen{
		{method: "ping", outcome: "complete", legacy: true},
		{method: "tools/call", target: "fails", round: 1, outcome: "tool_error", legacy: true},
		{method: "subscriptions/listen", outcome: "error -32602"},
	}
	if got := rec.take(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("middleware saw\n%v\nwant\n%v", got, want)
	}
}
