package legacy_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/baton-mcp/baton/server"
)

// A request cancelled before its handler sent anything gets a clean,
// empty SSE stream (200, text/event-stream), never an empty 200 without
// a Content-Type; a client that accepts only JSON gets a JSON error.
func TestCancelledBeforeAnything(t *testing.T) {
	srv := newServer(t)
	started := make(chan struct{}, 2)
	addTool(t, srv, "quiet_wait", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return server.TextResult("too late"), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{}`)
	for _, tc := range []struct {
		accept, ctype string
		msgs          int
	}{
		{"application/json, text/event-stream", "text/event-stream", 0},
		{"application/json", "application/json", 1},
	} {
		done := make(chan *stream, 1)
		go func() {
			done <- c.do(http.MethodPost, mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": toolCall("quiet_wait", nil)}),
				map[string]string{"Accept": tc.accept})
		}()
		recv(t, started, "the handler's start")
		c.notify("notifications/cancelled", map[string]any{"requestId": 7, "reason": "user pressed Cancel"})
		s := recv(t, done, "the response")
		msgs := s.end()
		if s.status != http.StatusOK || s.ctype != tc.ctype || len(msgs) != tc.msgs {
			t.Errorf("Accept %q: HTTP %d, Content-Type %q, %d messages; want 200, %q, %d", tc.accept, s.status, s.ctype, len(msgs), tc.ctype, tc.msgs)
		}
		for _, m := range msgs {
			if m.Error == nil || m.Result != nil {
				t.Errorf("Accept %q: %s, want an error response", tc.accept, m.Raw)
			}
		}
	}
}
