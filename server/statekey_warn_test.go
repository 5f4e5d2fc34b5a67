package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// The random-key warning comes when a request first needs a key (to seal
// or open a requestState), once, and never after SetStateKeys.
func TestRandomKeyWarning(t *testing.T) {
	const warning = "no state key configured"
	run := func(t *testing.T, setKeys bool) *lockedBuffer {
		var logs lockedBuffer
		srv, err := server.New(mcp.Implementation{Name: "keys", Version: "1"}, &server.Options{
			Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		if n := logs.count(warning); n != 0 {
			t.Fatalf("New warned %d times before any request needed a key", n)
		}
		if setKeys {
			ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k", Secret: []byte("statekey-warning-test-0123456789abcdef")})
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.SetStateKeys(ring); err != nil {
				t.Fatal(err)
			}
		}
		q, err := elicit.NewForm("Name?", elicit.String("name").Required())
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.AddTool(server.Tool{Name: "ask"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			if _, err := req.Elicit(ctx, q); err != nil {
				return nil, err
			}
			return server.TextResult("ok"), nil
		}); err != nil {
			t.Fatal(err)
		}
		c, err := mcptest.New(mcptest.Handler(srv), &mcptest.Options{Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			return mcptest.Accept(map[string]any{"name": "Ada"})
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		if _, err := c.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		if n := logs.count(warning); n != 0 {
			t.Fatalf("tools/list, which needs no key, warned %d times", n)
		}
		for range 2 {
			if _, err := c.CallTool(ctx, "ask", nil); err != nil {
				t.Fatal(err)
			}
		}
		return &logs
	}
	t.Run("random key", func(t *testing.T) {
		logs := run(t, false)
		if n := logs.count(warning); n != 1 {
			t.Fatalf("warned %d times over two input_required flows, want once", n)
		}
		if logs.count("SetStateKeys") != 1 {
			t.Error("the warning does not say how to set a key")
		}
	})
	t.Run("SetStateKeys after New", func(t *testing.T) {
		if n := run(t, true).count(warning); n != 0 {
			t.Fatalf("warned %d times though SetStateKeys set keys", n)
		}
	})
}
