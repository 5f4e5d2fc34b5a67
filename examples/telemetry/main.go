// Command telemetry serves a tool that asks one question (a two-round
// flow for a 2026-07-28 client) with OpenTelemetry on: spans go to the
// global tracer provider (set one up with the SDK and an exporter of your
// choice), and metrics are exported in Prometheus form on /metrics, for a
// Prometheus server to scrape.
//
//	cd examples && go run ./telemetry -addr 127.0.0.1:8082
//
// docs/telemetry.md lists the spans and metrics.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// newApp returns the MCP endpoint (on /mcp) and the metrics (on
// /metrics), exported through reg, and a function that shuts the meter
// provider down. keys may be nil (a random key for this process).
func newApp(reg *prometheus.Registry, keys *mrtr.KeyRing) (http.Handler, func(context.Context) error, error) {
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	tel := &server.Telemetry{MeterProvider: mp} // spans: the global tracer provider
	srv, err := server.New(mcp.Implementation{Name: "telemetry-example", Version: "1.0.0"},
		&server.Options{StateKeys: keys, Telemetry: tel, Middleware: []server.Middleware{server.LogRequests(nil, slog.LevelInfo)}})
	if err != nil {
		return nil, nil, err
	}
	confirm, err := elicit.NewSchema(elicit.Boolean("ok").Title("Go ahead?").Required())
	if err != nil {
		return nil, nil, err
	}
	err = srv.AddTool(server.Tool{Name: "confirm", Description: "Asks for a confirmation, then answers"},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			res, err := req.CreateFormElicitation(ctx, "Go ahead?", confirm)
			if err != nil {
				return nil, err
			}
			var v struct {
				OK bool `json:"ok"`
			}
			if res.Decode(&v) != nil || !v.OK {
				return nil, errors.New("not confirmed")
			}
			return server.TextResult("done"), nil
		})
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux, func(ctx context.Context) error {
		return errors.Join(srv.Close(), mp.Shutdown(ctx))
	}, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "listen address")
	flag.Parse()
	h, _, err := newApp(prometheus.NewRegistry(), nil)
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	log.Fatal(hs.ListenAndServe())
}
