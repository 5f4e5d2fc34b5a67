package mcptest_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// newSessionServer serves 2025-11-25 clients too: "survey" asks a name,
// samples and lists roots, reporting progress and a log line before it
// answers.
func newSessionServer(t *testing.T) *server.Server {
	t.Helper()
	ring, err := mrtr.NewKeyRing(sharedKey)
	if err != nil {
		t.Fatal(err)
	}
	lh := legacy.New(nil)
	srv, err := server.New(mcp.Implementation{Name: "sessions", Version: "1"}, &server.Options{
		StateKeys: ring, Logger: slog.New(slog.DiscardHandler), Legacy: lh, Logging: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lh.Close(); _ = srv.Close() })
	nameQ := form(t, "Your name?", elicit.String("name").Required())
	if err := srv.AddTool(server.Tool{Name: "survey"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if err := req.Progress(ctx, 1, 3, "asking"); err != nil {
			return nil, err
		}
		res, err := req.Elicit(ctx, nameQ)
		if err != nil {
			return nil, err
		}
		var a struct {
			Name string `json:"name"`
		}
		if err := res.Decode(&a); err != nil {
			return nil, err
		}
		msg, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
			Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Block{mcp.Text("hi")}}}})
		if err != nil {
			return nil, err
		}
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		if err := req.Log(ctx, slog.LevelInfo, "survey", "done"); err != nil {
			return nil, err
		}
		return server.TextResult(a.Name + " " + msg.Content[0].Text + " " + roots.Roots[0].URI), nil
	}); err != nil {
		t.Fatal(err)
	}
	return srv
}

func sessionOptions() *mcptest.Options {
	return &mcptest.Options{
		Protocol:    mcp.LegacyProtocolVersion,
		Elicitation: taskUser,
		Sampling:    sampler,
		Roots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///work"}}}, nil
		},
	}
}

// A 2025-11-25 client: CallTool opens the session, and the server's
// requests on the call's stream are answered by the same callbacks as
// input_required rounds; notifications are recorded.
func TestSessionCallTool(t *testing.T) {
	srv := newSessionServer(t)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	for name, target := range map[string]mcptest.Target{"in process": mcptest.Handler(srv), "over HTTP": mcptest.URL(ts.URL+"/mcp", nil)} {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			c := newClient(t, target, sessionOptions())
			if _, err := c.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			if c.SessionID() == "" {
				t.Fatal("no session after the first request")
			}
			res, err := c.CallTool(ctx, "survey", nil, mcptest.WithProgressToken("p1"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text() != "Ada hello file:///work" {
				t.Fatalf("result %q", res.Text())
			}
			r := res.Exchange.Rounds
			if len(r) != 1 || !r[0].Streamed || len(r[0].InputRequests) != 3 || len(r[0].InputResponses) != 3 {
				t.Fatalf("exchange %+v", r)
			}
			methods := []string{r[0].InputRequests[0].Method, r[0].InputRequests[1].Method, r[0].InputRequests[2].Method}
			if strings.Join(methods, ",") != "elicitation/create,sampling/createMessage,roots/list" {
				t.Fatalf("server requests %v", methods)
			}
			if p := res.Exchange.Progress(); len(p) != 1 || p[0].Message != "asking" {
				t.Fatalf("progress %+v", p)
			}
			if l := res.Exchange.Logs(); len(l) != 1 || l[0].Logger != "survey" {
				t.Fatalf("logs %+v", l)
			}
			tools, err := c.ListTools(ctx)
			if err != nil || len(tools) != 1 {
				t.Fatalf("tools/list: %v %v", err, tools)
			}
		})
	}
}

// Connect, the GET stream, and DELETE.
func TestSessionLifecycle(t *testing.T) {
	srv := newSessionServer(t)
	ctx := testContext(t)
	c := newClient(t, mcptest.Handler(srv), sessionOptions())
	init, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != mcp.LegacyProtocolVersion || init.ServerInfo.Name != "sessions" || init.SessionID != c.SessionID() {
		t.Fatalf("initialize %+v", init)
	}
	get, err := c.Send(ctx, http.MethodGet, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Close()
	if get.Status != http.StatusOK || !get.Streamed {
		t.Fatalf("GET: %d streamed=%v", get.Status, get.Streamed)
	}
	// A change of the tool list reaches the session on its GET stream.
	if err := srv.AddTool(server.Tool{Name: "later"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("later"), nil
	}); err != nil {
		t.Fatal(err)
	}
	m, err := get.Next(ctx)
	if err != nil || m.Method != "notifications/tools/list_changed" || !m.IsNotification() {
		t.Fatalf("GET stream: %v %+v", err, m)
	}
	old := c.SessionID()
	if status, err := c.EndSession(ctx); err != nil || status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %v", status, err)
	}
	if _, err := get.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("the GET stream after DELETE: %v, want its end", err)
	}
	// The old session is gone; the client opens a new one on its next call.
	stale := newClient(t, mcptest.Handler(srv), sessionOptions())
	if _, err := stale.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := stale.Do(ctx, "tools/list", nil, mcptest.WithHeader("Mcp-Session-Id", old))
	if err != nil || resp.Status != http.StatusNotFound {
		t.Fatalf("the ended session: %v %+v, want 404", err, resp)
	}
	if res, err := c.CallTool(ctx, "later", nil); err != nil || res.Text() != "later" || c.SessionID() == old {
		t.Fatalf("after DELETE: %v %v, session %q (was %q)", err, res, c.SessionID(), old)
	}
}

// A server request the client has no callback for is answered with an
// error, so the handler does not wait, and the call fails with
// ErrNoCallback.
func TestSessionMissingCallback(t *testing.T) {
	srv := newSessionServer(t)
	ctx := testContext(t)
	opts := sessionOptions()
	opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}, Sampling: &mcp.SamplingCapability{}}
	opts.Sampling = nil
	c := newClient(t, mcptest.Handler(srv), opts)
	if _, err := c.CallTool(ctx, "survey", nil); !errors.Is(err, mcptest.ErrNoCallback) {
		t.Fatalf("CallTool: %v, want ErrNoCallback", err)
	}
}

// Options.LogLevel reaches a 2025-11-25 server as logging/setLevel: at
// "error", the tool's info line is not sent.
func TestSessionLogLevel(t *testing.T) {
	srv := newSessionServer(t)
	ctx := testContext(t)
	for _, tc := range []struct {
		level string
		logs  int
	}{{"info", 1}, {"error", 0}} {
		opts := sessionOptions()
		opts.LogLevel = tc.level
		res, err := newClient(t, mcptest.Handler(srv), opts).CallTool(ctx, "survey", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(res.Exchange.Logs()); got != tc.logs {
			t.Errorf("level %s: %d log notifications, want %d", tc.level, got, tc.logs)
		}
	}
}
