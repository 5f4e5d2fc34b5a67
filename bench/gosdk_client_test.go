package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	batonmcp "github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// TestGoSDKClientListsRoots runs the official go-sdk v1.8.0 client (it
// speaks 2026-07-28 and answers inputRequests itself) against a Baton
// server whose tools ask for the client's roots, in the MRTR style and in
// the blocking style. The client decodes the params of every input
// request, so a roots/list request without params failed it with
// "unexpected end of JSON input"; Baton sends "params":{}.
func TestGoSDKClientListsRoots(t *testing.T) {
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k1", Secret: []byte("baton-bench-gosdk-client-secret-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(batonmcp.Implementation{Name: "roots", Version: "1.0.0"}, &server.Options{StateKeys: ring, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	firstRoot := func(r *batonmcp.ListRootsResult) (*server.ToolResult, error) {
		if len(r.Roots) == 0 {
			return server.ErrorResult("no roots"), nil
		}
		return server.TextResult(r.Roots[0].URI), nil
	}
	if err := srv.AddTool(server.Tool{Name: "mrtr_roots"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		r, err := req.ListRoots(ctx, server.WithKey("roots"))
		if err != nil {
			return nil, err
		}
		return firstRoot(r)
	}); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddTool(server.Tool{Name: "blocking_roots"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		r, err := req.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		return firstRoot(r)
	}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "gosdk-roots", Version: "1.0.0"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///work/project"})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != batonmcp.ProtocolVersion {
		t.Fatalf("negotiated %q, want %q (the test is about input requests)", v, batonmcp.ProtocolVersion)
	}
	for _, name := range []string{"mrtr_roots", "blocking_roots"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		text := ""
		if len(res.Content) == 1 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		if res.IsError || text != "file:///work/project" {
			t.Errorf("%s: isError=%v text=%q, want file:///work/project", name, res.IsError, text)
		}
	}
}
