package legacy_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

func TestGETStream(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "base", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("base"), nil
	})
	textResource(t, srv, "test://a", "A")
	textResource(t, srv, "test://b", "B")
	f := newFixture(t, srv)
	c := connect(t, f, `{}`)

	t.Run("needs Accept text/event-stream", func(t *testing.T) {
		for _, accept := range []string{"", "application/json"} {
			s := c.get(accept)
			if s.status != http.StatusNotAcceptable {
				t.Errorf("GET with Accept %q: HTTP %d, want 406", accept, s.status)
			}
		}
	})

	get := c.get("text/event-stream")
	if get.status != http.StatusOK || get.ctype != "text/event-stream" {
		t.Fatalf("GET: HTTP %d %q, want 200 text/event-stream", get.status, get.ctype)
	}
	if v := get.header.Get("X-Accel-Buffering"); v != "no" {
		t.Errorf("X-Accel-Buffering = %q, want no", v)
	}

	t.Run("one GET per session", func(t *testing.T) {
		s := c.get("text/event-stream")
		if s.status != http.StatusConflict {
			t.Errorf("second GET: HTTP %d, want 409", s.status)
		}
		if e := s.rpcErr("null"); e.Code != -32600 {
			t.Errorf("second GET: code %d", e.Code)
		}
	})

	// notification returns the next GET message, which must be a
	// notification for method with no id.
	notification := func(method string) map[string]any {
		t.Helper()
		m := get.next()
		if !m.IsNotification() || m.Method != method {
			t.Fatalf("GET stream: want %s, got %s", method, m.Raw)
		}
		return params(t, m)
	}

	t.Run("list changes", func(t *testing.T) {
		addTool(t, srv, "extra", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			return server.TextResult("extra"), nil
		})
		notification("notifications/tools/list_changed")
		if !srv.RemoveTool("extra") {
			t.Fatal("RemoveTool: not found")
		}
		notification("notifications/tools/list_changed")
		if err := srv.AddPrompt(server.Prompt{Name: "p"}, func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
			return &server.PromptResult{Messages: []server.PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text("p")}}}, nil
		}); err != nil {
			t.Fatal(err)
		}
		notification("notifications/prompts/list_changed")
		textResource(t, srv, "test://c", "C")
		notification("notifications/resources/list_changed")
		srv.RemoveResource("test://c")
		notification("notifications/resources/list_changed")
	})

	t.Run("resource updates follow subscriptions", func(t *testing.T) {
		// Not subscribed yet: nothing. The list change that follows proves
		// the stream is live and that the update was not just slow.
		srv.NotifyResourceUpdated("test://a")
		srv.RemoveTool("nonexistent") // no change, no notification
		addTool(t, srv, "marker1", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) { return nil, nil })
		notification("notifications/tools/list_changed")

		if got := c.call(1, "resources/subscribe", map[string]any{"uri": "test://a"}); string(got) != "{}" {
			t.Errorf("subscribe = %s, want {}", got)
		}
		srv.NotifyResourceUpdated("test://b")
		srv.NotifyResourceUpdated("test://a")
		if p := notification("notifications/resources/updated"); p["uri"] != "test://a" || len(p) != 1 {
			t.Errorf("updated params = %v, want {uri: test://a}", p)
		}

		// Another session, not subscribed, gets nothing; its GET stream
		// sees only the list change.
		other := connect(t, f, `{}`)
		otherGet := other.get("text/event-stream")
		srv.NotifyResourceUpdated("test://a")
		notification("notifications/resources/updated")
		addTool(t, srv, "marker2", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) { return nil, nil })
		notification("notifications/tools/list_changed")
		if m := otherGet.next(); m.Method != "notifications/tools/list_changed" {
			t.Errorf("unsubscribed session got %s", m.Raw)
		}

		if got := c.call(2, "resources/unsubscribe", map[string]any{"uri": "test://a"}); string(got) != "{}" {
			t.Errorf("unsubscribe = %s, want {}", got)
		}
		srv.NotifyResourceUpdated("test://a")
		addTool(t, srv, "marker3", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) { return nil, nil })
		notification("notifications/tools/list_changed")

		for _, p := range []any{nil, map[string]any{}, map[string]any{"uri": ""}} {
			if e := c.request(3, "resources/subscribe", p).rpcErr("3"); e.Code != -32602 {
				t.Errorf("subscribe %v: code %d, want -32602", p, e.Code)
			}
		}
	})

	t.Run("a new GET after the first closes", func(t *testing.T) {
		get.close()
		// The server notices the close asynchronously; retry the GET until
		// it stops answering 409.
		var again *stream
		for i := 0; i < 100; i++ {
			again = c.get("text/event-stream")
			if again.status != http.StatusConflict {
				break
			}
			again.close()
			time.Sleep(5 * time.Millisecond)
		}
		if again.status != http.StatusOK {
			t.Fatalf("GET after close: HTTP %d", again.status)
		}
		srv.RemoveTool("marker1")
		if m := again.next(); m.Method != "notifications/tools/list_changed" {
			t.Errorf("new GET stream got %s", m.Raw)
		}
	})
}

// TestGETStreamNeverCarriesRequests checks that a blocking call's
// server-to-client request goes on the call's own POST stream, never on
// the open GET stream (SEP-2260).
func TestGETStreamNeverCarriesRequests(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "ask", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		r, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
		if err != nil {
			return nil, err
		}
		return server.TextResult(string(r.Action)), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)
	get := c.get("text/event-stream")
	s := c.request(1, "tools/call", toolCall("ask", nil))
	req := s.nextRequest("elicitation/create")
	c.answer(req, map[string]any{"action": "cancel"})
	if text, _ := toolText(t, s.result("1")); text != "cancel" {
		t.Errorf("text = %q", text)
	}
	addTool(t, srv, "marker", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) { return nil, nil })
	if m := get.next(); m.Method != "notifications/tools/list_changed" {
		t.Errorf("GET stream carried %s", m.Raw)
	}
}
