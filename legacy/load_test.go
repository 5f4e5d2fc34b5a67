package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// Legitimate load at the defaults (legacy.New(nil)): one 2025-11-25
// session whose calls ask their client, many at once or many in a row.
// An answer the server is waiting for is never refused for rate
// (MaxAnswersPerSecond counts only answers that match nothing), so none of
// these may be refused, and none may hang.

// loadServer is a server with the default legacy options and three tools:
// confirm asks one form question; ask_many asks n questions of the kind
// given by "kind" (form, sampling, roots), one after the other.
func loadServer(tb testing.TB) *server.Server {
	tb.Helper()
	srv, err := server.New(testInfo, &server.Options{Legacy: legacy.New(nil)})
	if err != nil {
		tb.Fatal(err)
	}
	schema, err := elicit.NewSchema(elicit.Boolean("ok"))
	if err != nil {
		tb.Fatal(err)
	}
	addTool(tb, srv, "confirm", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.CreateFormElicitation(ctx, "Go ahead?", schema)
		if err != nil {
			return nil, err
		}
		return server.TextResult("confirmed " + string(res.Action)), nil
	})
	addTool(tb, srv, "ask_many", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
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
	return srv
}

// serveLoad serves srv on loopback until the test ends. The end shuts
// srv down with a short deadline first, so that calls still waiting for an
// answer (a failing run) are failed instead of holding Close for their
// whole CallTimeout.
func serveLoad(tb testing.TB, srv *server.Server) *httptest.Server {
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

// loadClient is the project's test client on a 2025-11-25 session of ts,
// answering every kind of question at once.
func loadClient(tb testing.TB, ts *httptest.Server) *mcptest.Client {
	tb.Helper()
	c, err := mcptest.New(mcptest.URL(ts.URL, nil), &mcptest.Options{
		Protocol: mcp.LegacyProtocolVersion,
		Elicitation: func(context.Context, *elicit.Request) (*elicit.Result, error) {
			return mcptest.Accept(map[string]any{"ok": true})
		},
		Sampling: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: []mcp.Block{mcp.Text("yes")}, Model: "test"}, nil
		},
		Roots: func(context.Context) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///tmp"}}}, nil
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := c.Connect(ctx); err != nil {
		tb.Fatalf("connect: %v", err)
	}
	return c
}

// TestDefaultsServeConcurrentAsks: 200 calls of one session at once, each
// asking once, all complete.
func TestDefaultsServeConcurrentAsks(t *testing.T) {
	srv := loadServer(t)
	ts := serveLoad(t, srv)
	c := loadClient(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.CallTool(ctx, "confirm", map[string]any{})
			switch {
			case err != nil:
				errs <- fmt.Errorf("call %d: %w", i, err)
			case res.IsError || res.Text() != "confirmed accept":
				errs <- fmt.Errorf("call %d: result %q (isError %v)", i, res.Text(), res.IsError)
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if failed < 5 {
			t.Error(err)
		}
		failed++
	}
	if failed > 0 {
		t.Fatalf("%d of %d concurrent calls failed at the defaults, want 0", failed, n)
	}
}

// TestDefaultsServeManyAsksInSequence: one call asking 500 times in a row,
// for each kind of question, completes.
func TestDefaultsServeManyAsksInSequence(t *testing.T) {
	srv := loadServer(t)
	ts := serveLoad(t, srv)
	c := loadClient(t, ts)
	for _, kind := range []string{"form", "sampling", "roots"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := c.CallTool(ctx, "ask_many", map[string]any{"n": 500, "kind": kind})
			if err != nil {
				t.Fatalf("ask_many: %v", err)
			}
			if res.IsError || res.Text() != "asked 500" {
				t.Fatalf("ask_many: %q (isError %v), want asked 500", res.Text(), res.IsError)
			}
		})
	}
}

// TestUnmatchedAnswersStillLimited: answers that match no waiting request
// are refused with 400 and, past the session's MaxAnswersPerSecond burst,
// with 429, whose JSON-RPC body names the limit and the seconds to wait.
func TestUnmatchedAnswersStillLimited(t *testing.T) {
	srv, err := server.New(testInfo, &server.Options{Legacy: legacy.New(&legacy.Options{MaxAnswersPerSecond: 2})})
	if err != nil {
		t.Fatal(err)
	}
	ts := serveLoad(t, srv)
	c := loadClient(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var statuses []int
	var last error
	for i := range 8 {
		err := c.Respond(ctx, []byte(fmt.Sprintf(`"forged-%d"`, i)), map[string]any{"action": "accept"})
		statuses = append(statuses, statusOf(err))
		last = err
	}
	// A burst of 2×2 unmatched answers is refused with 400, the rest 429.
	want := []int{400, 400, 400, 400, 429, 429, 429, 429}
	if fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Fatalf("statuses of 8 forged answers = %v, want %v", statuses, want)
	}
	if limit, secs := refusalData(t, last); limit != "legacy.Options.MaxAnswersPerSecond" || secs != 1 {
		t.Errorf("the 429's data names limit %q and %d s, want legacy.Options.MaxAnswersPerSecond and 1", limit, secs)
	}
}

// statusOf is the HTTP status an mcptest error carries, 0 for none.
func statusOf(err error) int {
	var e *mcptest.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.Status
	}
	return -1
}

// refusalData is the data of an mcptest error: the limit and the
// seconds of a refusal.
func refusalData(tb testing.TB, err error) (limit string, secs int) {
	tb.Helper()
	var e *mcptest.Error
	if !errors.As(err, &e) {
		tb.Fatalf("%v is no *mcptest.Error", err)
	}
	var d struct {
		Limit             string `json:"limit"`
		RetryAfterSeconds int    `json:"retryAfterSeconds"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		tb.Fatalf("the refusal's data %s: %v", e.Data, err)
	}
	return d.Limit, d.RetryAfterSeconds
}
