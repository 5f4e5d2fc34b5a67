package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"syscall"
	"testing"
	"time"

	noopmetric "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// wire is one request as mcptest sent it, to replay through ServeHTTP.
type wire struct {
	body   []byte
	header http.Header
}

// capture records the request send makes through h.
func capture(tb testing.TB, h http.Handler, send func(c *mcptest.Client)) wire {
	tb.Helper()
	var got wire
	c, err := mcptest.New(mcptest.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = wire{body: body, header: r.Header.Clone()}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})), &mcptest.Options{Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}})
	if err != nil {
		tb.Fatal(err)
	}
	send(c)
	return got
}

func (w wire) serve(h http.Handler, body []byte) *httptest.ResponseRecorder {
	if body == nil {
		body = w.body
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	r.Header = w.header
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// benchServer has an echo tool and a confirm tool (two rounds).
func benchServer(b *testing.B, tel *server.Telemetry) *server.Server {
	ring, err := mrtr.NewKeyRing(sharedKey)
	if err != nil {
		b.Fatal(err)
	}
	opts := &server.Options{StateKeys: ring, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if tel != nil {
		opts.Telemetry = tel
	}
	srv, err := server.New(mcp.Implementation{Name: "bench", Version: "1"}, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	must(b, srv.AddTool(server.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			var a struct {
				Text string `json:"text"`
			}
			if err := req.Bind(&a); err != nil {
				return nil, err
			}
			return server.TextResult(a.Text), nil
		}))
	form, err := elicit.NewSchema(elicit.Boolean("ok").Required())
	if err != nil {
		b.Fatal(err)
	}
	must(b, srv.AddTool(server.Tool{Name: "confirm"},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			res, err := req.CreateFormElicitation(ctx, "Proceed?", form, server.WithKey("ok"))
			if err != nil {
				return nil, err
			}
			return server.TextResult("confirmed " + string(res.Action)), nil
		}))
	return srv
}

// BenchmarkOverhead measures, in one run so the ratios hold on a noisy
// machine, a plain tools/call and a two-round flow (both rounds per
// iteration) served through ServeHTTP: "off" without Telemetry; "noop"
// with Options.Telemetry on OpenTelemetry's no-op tracer and meter providers (what
// a program that never installs an SDK gets); "recording" with the SDK's
// tracer (always sampling, spans to an in-memory exporter) and meter (a
// manual reader).
func BenchmarkOverhead(b *testing.B) {
	type setup struct {
		name string
		tel  func(b *testing.B) (*server.Telemetry, func())
	}
	setups := []setup{
		{"off", func(*testing.B) (*server.Telemetry, func()) { return nil, func() {} }},
		{"noop", func(b *testing.B) (*server.Telemetry, func()) {
			tel := &server.Telemetry{TracerProvider: nooptrace.NewTracerProvider(), MeterProvider: noopmetric.NewMeterProvider()}
			return tel, func() {}
		}},
		{"recording", func(b *testing.B) (*server.Telemetry, func()) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() {
				_ = tp.Shutdown(context.Background())
				_ = mp.Shutdown(context.Background())
			})
			tel := &server.Telemetry{TracerProvider: tp, MeterProvider: mp}
			return tel, exp.Reset // spans are dropped now and then, so memory stays flat
		}},
	}
	for _, scenario := range []string{"call", "flow2"} {
		for _, st := range setups {
			b.Run(scenario+"/"+st.name, func(b *testing.B) {
				tel, reset := st.tel(b)
				srv := benchServer(b, tel)
				n := 0
				if scenario == "call" {
					req := capture(b, srv, func(c *mcptest.Client) {
						if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "hello"}); err != nil {
							b.Fatal(err)
						}
					})
					want := []byte(`"text":"hello"`)
					b.ReportAllocs()
					for b.Loop() {
						if rec := req.serve(srv, nil); rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), want) {
							b.Fatalf("status %d: %s", rec.Code, rec.Body)
						}
						if n++; n%1024 == 0 {
							reset()
						}
					}
					return
				}
				placeholder := []byte("REQUEST-STATE-PLACEHOLDER")
				req1 := capture(b, srv, func(c *mcptest.Client) {
					_, _ = c.Do(context.Background(), "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}})
				})
				req2 := capture(b, srv, func(c *mcptest.Client) {
					_, _ = c.Do(context.Background(), "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}},
						mcptest.Resume(string(placeholder), map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}))
				})
				done := []byte(`"text":"confirmed accept"`)
				b.ReportAllocs()
				for b.Loop() {
					rec := req1.serve(srv, nil)
					var r1 struct {
						Result struct {
							RequestState string `json:"requestState"`
						} `json:"result"`
					}
					if err := json.Unmarshal(rec.Body.Bytes(), &r1); err != nil || r1.Result.RequestState == "" {
						b.Fatalf("round 1: %v %s", err, rec.Body)
					}
					rec = req2.serve(srv, bytes.Replace(req2.body, placeholder, []byte(r1.Result.RequestState), 1))
					if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), done) {
						b.Fatalf("round 2: %d %s", rec.Code, rec.Body)
					}
					if n++; n%512 == 0 {
						reset()
					}
				}
			})
		}
	}
}

// BenchmarkOverheadInterleaved serves the same request on three servers
// (telemetry off, noop, recording) in turn within each iteration, so a
// load change on the machine hits all three alike, and reports each one's
// mean time and the ratios to "off".
func BenchmarkOverheadInterleaved(b *testing.B) {
	for _, scenario := range []string{"call", "flow2"} {
		b.Run(scenario, func(b *testing.B) {
			var (
				names = []string{"off", "noop", "recording"}
				runs  []func()
			)
			for _, name := range names {
				var tel *server.Telemetry
				reset := func() {}
				switch name {
				case "noop":
					t := &server.Telemetry{TracerProvider: nooptrace.NewTracerProvider(), MeterProvider: noopmetric.NewMeterProvider()}
					tel = t
				case "recording":
					exp := tracetest.NewInMemoryExporter()
					tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
					mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
					b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
					t := &server.Telemetry{TracerProvider: tp, MeterProvider: mp}
					tel, reset = t, exp.Reset
				}
				runs = append(runs, benchRun(b, benchServer(b, tel), scenario, reset))
			}
			// Wall time, and the CPU time of this thread (the server's
			// work runs on the benchmark's goroutine, locked to it): on
			// a loaded machine the second leaves out the time the thread
			// waited for a core.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			wall := make([]time.Duration, len(runs))
			cpu := make([]time.Duration, len(runs))
			b.ReportAllocs()
			for b.Loop() {
				for i, run := range runs {
					c0 := threadCPU(b)
					start := time.Now()
					run()
					wall[i] += time.Since(start)
					cpu[i] += threadCPU(b) - c0
				}
			}
			n := float64(b.N)
			for i, name := range names {
				b.ReportMetric(float64(wall[i].Nanoseconds())/n, name+"-ns/op")
				b.ReportMetric(float64(cpu[i].Nanoseconds())/n, name+"-cpu-ns/op")
			}
			b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "noop/off-cpu")
			b.ReportMetric(float64(cpu[2])/float64(cpu[0]), "recording/off-cpu")
		})
	}
}

// benchRun returns one iteration of scenario on srv: a plain call, or
// both rounds of a two-round flow. reset is called every 512 iterations.
func benchRun(b *testing.B, srv *server.Server, scenario string, reset func()) func() {
	n := 0
	tick := func() {
		if n++; n%512 == 0 {
			reset()
		}
	}
	if scenario == "call" {
		req := capture(b, srv, func(c *mcptest.Client) {
			if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "hello"}); err != nil {
				b.Fatal(err)
			}
		})
		want := []byte(`"text":"hello"`)
		return func() {
			if rec := req.serve(srv, nil); rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), want) {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			tick()
		}
	}
	placeholder := []byte("REQUEST-STATE-PLACEHOLDER")
	req1 := capture(b, srv, func(c *mcptest.Client) {
		_, _ = c.Do(context.Background(), "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}})
	})
	req2 := capture(b, srv, func(c *mcptest.Client) {
		_, _ = c.Do(context.Background(), "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}},
			mcptest.Resume(string(placeholder), map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}))
	})
	done := []byte(`"text":"confirmed accept"`)
	return func() {
		rec := req1.serve(srv, nil)
		var r1 struct {
			Result struct {
				RequestState string `json:"requestState"`
			} `json:"result"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &r1); err != nil || r1.Result.RequestState == "" {
			b.Fatalf("round 1: %v %s", err, rec.Body)
		}
		rec = req2.serve(srv, bytes.Replace(req2.body, placeholder, []byte(r1.Result.RequestState), 1))
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), done) {
			b.Fatalf("round 2: %d %s", rec.Code, rec.Body)
		}
		tick()
	}
}

// threadCPU is the CPU time (user and system) the calling thread used.
func threadCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
