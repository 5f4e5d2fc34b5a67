package legacy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/server"
)

// Regression tests for bugs found while the legacy tests were written; the
// comment above each test describes the bug as it was, before the fix.

// legacy/peer.go exchange: rpcwire.Request.Params is `any` with omitempty;
// a nil json.RawMessage stored in it is a non-nil interface, so roots/list
// goes out as "params":null. JSON-RPC 2.0 allows params only as an object
// or array, and the 2025-11-25 schema types it as an optional object: a
// strict client (the TypeScript SDK validates incoming requests with zod)
// rejects the request. Both a ListRoots call and a roots request in
// AskAll hit it.
// Absent params are no better: the official go-sdk v1.8.0 client fails
// with "unexpected end of JSON input", so the request carries {}.
func TestRootsListHasNoNullParams(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	blockingTools(t, srv, out)
	askTools(t, srv, nil)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	s := c.request(1, "tools/call", toolCall("roots", nil))
	req := s.nextRequest("roots/list")
	if string(req.Params) != `{}` {
		t.Errorf("blocking ListRoots sent %s, want \"params\":{}", req.Raw)
	}
	c.answer(req, map[string]any{"roots": []any{}})
	s.result("1")

	s = c.request(2, "tools/call", toolCall("ask_three", nil))
	roots := 0
	for range 3 {
		if m := s.next(); m.Method == "roots/list" {
			roots++
			if string(m.Params) != `{}` {
				t.Errorf("a roots request in AskAll sent %s, want \"params\":{}", m.Raw)
			}
		}
	}
	if roots != 1 {
		t.Errorf("AskAll sent %d roots/list requests, want 1", roots)
	}
}

// legacy/stdio.go HandleMessage creates the stdio session with newSession
// but never registers it with the adapter; adapter.changed only walks
// h.sessions (the HTTP ones), so a stdio legacy client never receives
// notifications/tools/list_changed (which the initialize result promises
// with listChanged:true) nor notifications/resources/updated after
// resources/subscribe, although session.sendSession has a stdout branch
// for exactly this. (startStdio settles the server first: the resource
// registered before the session would otherwise announce itself on
// stdout whenever the watcher goroutine gets to it.)
func TestStdioSessionGetsChangeNotifications(t *testing.T) {
	srv := newServer(t)
	textResource(t, srv, "test://a", "A")
	p := startStdio(t, srv)
	p.initialize(`{}`)
	p.request(1, "resources/subscribe", map[string]any{"uri": "test://a"})
	if m := p.response("1"); string(m.Result) != "{}" {
		t.Fatalf("subscribe = %s", m.Raw)
	}
	srv.NotifyResourceUpdated("test://a")
	addTool(t, srv, "late", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) { return nil, nil })
	p.request(2, "ping", nil)
	// Changes reach sessions on the watcher's own goroutine, so the ping
	// answer may come before or between them; they keep their order.
	var got []string
	for pinged := false; !pinged || len(got) < 2; {
		m := p.next()
		if string(m.ID) == "2" {
			pinged = true
			continue
		}
		got = append(got, m.Method)
	}
	if strings.Join(got, ",") != "notifications/resources/updated,notifications/tools/list_changed" {
		t.Errorf("stdout carried %v, want resources/updated and tools/list_changed", got)
	}
}

// legacy/session.go notification: a client's notifications/cancelled names
// one of the client's own requests, but the handler also looked the id up
// among the server's pending requests (a separate id space) and failed the
// matching one with -32800. Client ids and server ids could both start at
// 1, so cancelling request 1 (even one already answered, which the
// specification allows) broke whichever call waited on server request 1.
// A cancellation naming the id of the server's own pending request (a
// client id of the same text) leaves that request alone.
func TestClientCancelLeavesServerRequests(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	blockingTools(t, srv, out)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	s := c.request("call", "tools/call", toolCall("ask_name", nil))
	req := s.nextRequest("elicitation/create")
	var sid any
	if err := json.Unmarshal(req.ID, &sid); err != nil {
		t.Fatal(err)
	}
	c.call(sid, "ping", nil) // the client's own request with that id, already answered
	// A late cancellation of the client's own request of that id.
	c.notify("notifications/cancelled", map[string]any{"requestId": sid, "reason": "too slow"})
	select {
	case o := <-out:
		t.Fatalf("the tool's elicitation (server request 1) was failed by the client's cancellation of its request 1: %v", o.err)
	case <-time.After(quiet):
	}
	c.answer(req, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
	if o := recv(t, out, "the handler"); o.err != nil {
		t.Errorf("handler error = %v", o.err)
	}
	s.result(`"call"`)
}

// legacy/session.go serveRequest abandons a cancelled request only when
// the handler returned an error; a handler that finishes with a result
// after the client's notifications/cancelled gets its response written.
// The 2025-11-25 cancellation rules say receivers SHOULD NOT respond to a
// cancelled request, and the server's own stdio path never does (it checks
// rctx.Err() first).
func TestNoResponseAfterCancel(t *testing.T) {
	srv := newServer(t)
	started, returning := make(chan struct{}, 1), make(chan struct{}, 1)
	addTool(t, srv, "stubborn", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		returning <- struct{}{}
		return server.TextResult("finished anyway"), nil
	})
	p := startStdio(t, srv)
	p.initialize(`{}`)
	p.request("s", "tools/call", toolCall("stubborn", nil))
	recv(t, started, "the handler")
	p.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "s"}})
	recv(t, returning, "the handler's return")
	select {
	case m := <-p.out:
		t.Errorf("after the cancellation stdout carried %s", m.Raw)
	case <-time.After(quiet):
	}
	p.request("after", "ping", nil)
	for {
		m := p.next()
		if string(m.ID) == `"after"` {
			break
		}
		t.Errorf("after the cancellation stdout carried %s", m.Raw)
	}
}
