package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogRequestsCarriesTraceIDs checks that server.LogRequests lines
// carry the trace and span ids of the request's span, and none without
// telemetry.
func TestLogRequestsCarriesTraceIDs(t *testing.T) {
	for _, traced := range []bool{true, false} {
		rec := newOtelRecorder(t)
		var buf syncBuffer
		ring, err := mrtr.NewKeyRing(sharedKey)
		if err != nil {
			t.Fatal(err)
		}
		opts := &server.Options{StateKeys: ring, Middleware: []server.Middleware{server.LogRequests(slog.New(slog.NewJSONHandler(&buf, nil)), slog.LevelInfo)}}
		if traced {
			opts.Telemetry = rec.tel
		}
		srv, err := server.New(mcp.Implementation{Name: "log-test", Version: "1"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		c, err := mcptest.New(mcptest.Handler(srv), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListTools(testCtx(t)); err == nil {
			t.Fatal("tools/list with no tools answered")
		}
		var line map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(buf.String())), &line); err != nil {
			t.Fatalf("log: %v: %s", err, buf.String())
		}
		if !traced {
			if _, ok := line["trace_id"]; ok {
				t.Errorf("untraced line has trace_id: %v", line)
			}
			continue
		}
		spans := rec.spans.GetSpans()
		if len(spans) != 1 {
			t.Fatalf("%d spans", len(spans))
		}
		if line["trace_id"] != spans[0].SpanContext.TraceID().String() || line["span_id"] != spans[0].SpanContext.SpanID().String() {
			t.Errorf("log line %v, want trace_id %s span_id %s", line, spans[0].SpanContext.TraceID(), spans[0].SpanContext.SpanID())
		}
	}
}
