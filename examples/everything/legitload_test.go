package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// Legitimate load from the official clients against Baton's defaults
// (legacy.New(nil), server.Options zero but for Legacy), on one
// 2025-11-25 session each: 200 calls at once that each ask once, then one
// call per kind of question (form, sampling, roots) that asks 500 times
// in a row. None may be refused, none may hang. Before answers were
// matched ahead of legacy.Options.MaxAnswersPerSecond, 66 of 200 (the
// TypeScript SDK) and 65 of 100 (the Go SDK) completed and the rest hung
// until the client's timeout.
const (
	legitConcurrent = 200
	legitSequential = 500
)

// legitServer is a server at the defaults with two tools: confirm asks
// one form question; ask_many asks n questions of the kind given, one
// after the other.
func legitServer(tb testing.TB) *server.Server {
	tb.Helper()
	srv, err := server.New(mcp.Implementation{Name: "legit-load", Version: "1.0.0"}, &server.Options{Legacy: legacy.New(nil)})
	if err != nil {
		tb.Fatal(err)
	}
	schema, err := elicit.NewSchema(elicit.Boolean("ok"))
	if err != nil {
		tb.Fatal(err)
	}
	err = srv.AddTool(server.Tool{Name: "confirm", Description: "Asks one confirmation"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.CreateFormElicitation(ctx, "Go ahead?", schema)
		if err != nil {
			return nil, err
		}
		return server.TextResult("confirmed " + string(res.Action)), nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	err = srv.AddTool(server.Tool{Name: "ask_many", Description: "Asks n questions in a row"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var in struct {
			N    int    `json:"n"`
			Kind string `json:"kind"`
		}
		if err := req.Bind(&in); err != nil {
			return nil, err
		}
		for i := range in.N {
			var err error
			switch in.Kind {
			case "sampling":
				_, err = req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 8,
					Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Block{mcp.Text(fmt.Sprint("question ", i))}}}})
			case "roots":
				_, err = req.ListRoots(ctx)
			default:
				_, err = req.CreateFormElicitation(ctx, fmt.Sprint("Question ", i, "?"), schema)
			}
			if err != nil {
				return nil, err
			}
		}
		return server.TextResult(fmt.Sprint("asked ", in.N)), nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

// serveLegit serves srv on loopback until the test ends; the end shuts it
// down with a short deadline first, so that a failing run's calls still
// waiting for answers do not hold Close for their whole CallTimeout.
func serveLegit(tb testing.TB, srv *server.Server) *httptest.Server {
	ts := httptest.NewServer(srv)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts
}

// TestLegitimateLoadGoSDK drives the load with the official Go SDK
// (v1.8.0) as a 2025-11-25 client.
func TestLegitimateLoadGoSDK(t *testing.T) {
	ts := serveLegit(t, legitServer(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := gosdk.NewClient(&gosdk.Implementation{Name: "legit-load", Version: "1.0.0"}, &gosdk.ClientOptions{
		ElicitationHandler: func(context.Context, *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
			return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		},
		CreateMessageHandler: func(context.Context, *gosdk.CreateMessageRequest) (*gosdk.CreateMessageResult, error) {
			return &gosdk.CreateMessageResult{Role: "assistant", Content: &gosdk.TextContent{Text: "yes"}, Model: "test"}, nil
		},
	})
	c.AddRoots(&gosdk.Root{URI: "file:///tmp"})
	cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: ts.URL}, &gosdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated %q, want 2025-11-25 (the test is about a session's answers)", v)
	}
	text := func(res *gosdk.CallToolResult) string {
		if res == nil || res.IsError || len(res.Content) != 1 {
			return fmt.Sprintf("%+v", res)
		}
		if tc, ok := res.Content[0].(*gosdk.TextContent); ok {
			return tc.Text
		}
		return fmt.Sprintf("%+v", res.Content[0])
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for i := range legitConcurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "confirm", Arguments: map[string]any{}})
			if err != nil || text(res) != "confirmed accept" {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("call %d: %v %s", i, err, text(res)))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d of %d concurrent calls failed, want 0; first: %s", len(failures), legitConcurrent, failures[0])
	} else {
		t.Logf("go-sdk: %d of %d concurrent calls completed", legitConcurrent, legitConcurrent)
	}
	for _, kind := range []string{"form", "sampling", "roots"} {
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "ask_many", Arguments: map[string]any{"n": legitSequential, "kind": kind}})
		if err != nil || text(res) != fmt.Sprint("asked ", legitSequential) {
			t.Errorf("ask_many %s: %v %s, want asked %d", kind, err, text(res), legitSequential)
		} else {
			t.Logf("go-sdk: %d %s questions in a row answered", legitSequential, kind)
		}
	}
}

// legitResult is the JSON line testdata/legit-load.mjs prints.
type legitResult struct {
	Error           string `json:"error"`
	SDKVersion      string `json:"sdkVersion"`
	ProtocolVersion string `json:"protocolVersion"`
	Concurrent      struct {
		OK     int      `json:"ok"`
		Failed int      `json:"failed"`
		Errors []string `json:"errors"`
	} `json:"concurrent"`
	Sequential map[string]struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	} `json:"sequential"`
	Answered int `json:"answered"`
}

// TestLegitimateLoadTypeScriptSDK drives the load with the official
// TypeScript SDK (1.32.2) as a 2025-11-25 client.
func TestLegitimateLoadTypeScriptSDK(t *testing.T) {
	node, dir := typeScriptSDK(t)
	script, err := filepath.Abs(filepath.Join("testdata", "legit-load.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ts := serveLegit(t, legitServer(t))
	stdout, runErr := runNode(t, 3*time.Minute, node, dir, script, ts.URL, fmt.Sprint(legitConcurrent), fmt.Sprint(legitSequential), "--timeout-ms", "60000")
	var res legitResult
	if err := json.Unmarshal(bytes.TrimSpace(stdout), &res); err != nil {
		t.Fatalf("client (%v) printed no JSON result: %v\nstdout: %s", runErr, err, stdout)
	}
	if res.Error != "" || runErr != nil {
		t.Fatalf("client failed (%v): %s", runErr, res.Error)
	}
	if res.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated %q, want 2025-11-25", res.ProtocolVersion)
	}
	if res.Concurrent.OK != legitConcurrent {
		t.Errorf("TypeScript SDK %s: %d of %d concurrent calls completed, want all; errors: %v", res.SDKVersion, res.Concurrent.OK, legitConcurrent, res.Concurrent.Errors)
	}
	for _, kind := range []string{"form", "sampling", "roots"} {
		if s := res.Sequential[kind]; !s.OK {
			t.Errorf("TypeScript SDK %s: ask_many %s: %s", res.SDKVersion, kind, s.Error)
		}
	}
	if want := legitConcurrent + 3*legitSequential; res.Answered != want {
		t.Errorf("the client answered %d questions, want %d", res.Answered, want)
	}
	t.Logf("TypeScript SDK %s: %d of %d concurrent calls, %d questions answered", res.SDKVersion, res.Concurrent.OK, legitConcurrent, res.Answered)
}
