package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// server.Call.CloseStream (SSE polling, SEP-1699): in a 2025-11-25
// session it ends the call's POST stream with an event id and a retry
// field before the response, and the call's response comes on the stream
// resumed with Last-Event-ID (mcptest resumes as the official SDKs do);
// in a 2025-06-18 session, and for a 2026-07-28 request, it does nothing
// and the response comes as before.
func TestCloseStream(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "poll", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		closed := req.CloseStream()
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return server.TextResult(fmt.Sprint("closed ", closed)), nil
	})
	f := newFixture(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// 2025-11-25: the POST stream ends with no response...
	c := connect(t, f, `{}`)
	ms, _, err := c.mc().Open(ctx, "tools/call", toolCall("poll", nil))
	if err != nil {
		t.Fatal(err)
	}
	for {
		m, err := ms.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.IsResponse() {
			t.Fatalf("the response came on the POST stream: %s", m.Raw)
		}
	}
	_ = ms.Close()
	// ... and a client that resumes gets it.
	res, err := c.mc().CallTool(ctx, "poll", nil)
	if err != nil || res.Text() != "closed true" {
		t.Fatalf("2025-11-25: %v, %v", res, err)
	}

	// 2025-06-18: nothing to poll; the response on the stream.
	old := newClient(t, f)
	s := old.request(0, "initialize", initParams("2025-06-18", `{}`))
	old.sid, old.version = s.header.Get(rpcwire.HeaderSessionID), "2025-06-18"
	if old.sid == "" {
		t.Fatalf("initialize 2025-06-18: HTTP %d, no session", s.status)
	}
	old.notify("notifications/initialized", nil)
	if text, _ := toolText(t, old.call(1, "tools/call", toolCall("poll", nil))); text != "closed false" {
		t.Errorf("2025-06-18: %q", text)
	}

	// 2026-07-28: no stream to end.
	m, err := mcptest.New(mcptest.URL(f.ts.URL, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := m.CallTool(ctx, "poll", nil); err != nil || res.Text() != "closed false" {
		t.Errorf("2026-07-28: %v, %v", res, err)
	}
}
