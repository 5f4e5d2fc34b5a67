package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// otelRecorder is a tracer provider that keeps every span in memory, and a
// meter provider read on demand.
type otelRecorder struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	tel    *server.Telemetry
}

func newOtelRecorder(t testing.TB) *otelRecorder {
	t.Helper()
	r := &otelRecorder{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = r.mp.Shutdown(context.Background())
	})
	r.tel = &server.Telemetry{TracerProvider: r.tp, MeterProvider: r.mp}
	return r
}

// sharedKey is the state key every instance of a test fleet holds.
var sharedKey = mrtr.Key{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}

// newInstance is one instance of a fleet sharing sharedKey and the task
// store, instrumented with tel, serving the test tools.
func newInstance(t testing.TB, tel *server.Telemetry, store *server.TaskOptions) *server.Server {
	t.Helper()
	return newInstanceWith(t, tel, store, nil)
}

// newInstanceWith is newInstance whose legacy adapter keeps its sessions
// in sessions (a store several instances share), when not nil.
func newInstanceWith(t testing.TB, tel *server.Telemetry, store *server.TaskOptions, sessions legacy.Store) *server.Server {
	t.Helper()
	ring, err := mrtr.NewKeyRing(sharedKey)
	if err != nil {
		t.Fatal(err)
	}
	opts := &server.Options{
		StateKeys: ring,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Legacy:    legacy.New(&legacy.Options{Store: sessions}),
	}
	if tel != nil {
		opts.Telemetry = tel
	}
	if store != nil {
		opts.Tasks = *store
	}
	srv, err := server.New(mcp.Implementation{Name: "otel-test", Version: "1.0.0"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	confirm, err := elicit.NewSchema(elicit.Boolean("ok").Required())
	if err != nil {
		t.Fatal(err)
	}
	names, err := elicit.NewSchema(elicit.String("name").Required())
	if err != nil {
		t.Fatal(err)
	}
	ask := func(ctx context.Context, c *server.Call, msg string, s *elicit.Schema) (map[string]any, error) {
		res, err := c.CreateFormElicitation(ctx, msg, s)
		if err != nil {
			return nil, err
		}
		var v map[string]any
		if err := res.Decode(&v); err != nil {
			return nil, errors.New("declined")
		}
		return v, nil
	}
	// confirm: two rounds (one question).
	must(t, srv.AddTool(server.Tool{Name: "confirm", Description: "asks one question"},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			if _, err := ask(ctx, req.Call, "Proceed?", confirm); err != nil {
				return nil, err
			}
			return server.TextResult("done"), nil
		}))
	// onboard: three rounds (two questions, one after the other).
	must(t, srv.AddTool(server.Tool{Name: "onboard", Description: "asks two questions"},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			v, err := ask(ctx, req.Call, "Name?", names)
			if err != nil {
				return nil, err
			}
			if _, err := ask(ctx, req.Call, "Proceed?", confirm); err != nil {
				return nil, err
			}
			return server.TextResult("hello " + v["name"].(string)), nil
		}))
	// slow_confirm: runs as a task and asks one question in it, waiting in
	// place (RunsOnce), so the task counts as running while it asks
	// and its question has a span of its own.
	must(t, srv.AddTool(server.Tool{Name: "slow_confirm", Description: "a task that asks"},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			if _, err := ask(ctx, req.Call, "Proceed?", confirm); err != nil {
				return nil, err
			}
			return server.TextResult("done"), nil
		}, server.RunAsTask(server.TaskOptional), server.RunsOnce()))
	return srv
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func serve(t testing.TB, srv *server.Server) *httptest.Server {
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// tasksCaps declares the tasks extension.
func tasksCaps() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}, Extensions: map[string]json.RawMessage{mcp.TasksExtension: json.RawMessage("{}")}}
}

// waitStatus polls tasks/get until the task has status want, and returns
// the key of its first pending input request (if any).
func waitStatus(t testing.TB, c *mcptest.Client, id, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := c.Do(testCtx(t), "tasks/get", map[string]any{"taskId": id})
		if err != nil || r.Err() != nil {
			t.Fatalf("tasks/get: %v %v", err, r.Err())
		}
		var v struct {
			Status        string                     `json:"status"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		}
		if err := json.Unmarshal(r.Result, &v); err != nil {
			t.Fatal(err)
		}
		if v.Status == want {
			for k := range v.InputRequests {
				return k
			}
			return ""
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s stays %s, want %s", id, v.Status, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitSpans polls the exporter until ok holds for the ended spans.
func waitSpans(t testing.TB, rec *otelRecorder, ok func(tracetest.SpanStubs) bool) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := rec.spans.GetSpans()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("spans never came:\n%s", dump(s))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitFor polls cond until it holds, failing after 30 s.
func waitFor(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never settled", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
