package server

import (
	"context"
	"encoding/hex"
	"log/slog"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
)

// traceparent is ctx's span as a W3C traceparent, "" without telemetry or
// a valid span.
func (s *Server) traceparent(ctx context.Context) string {
	t := s.tel
	if t == nil {
		return ""
	}
	r := t.SpanRef(ctx)
	if !r.Valid() {
		return ""
	}
	return "00-" + hex.EncodeToString(r.TraceID[:]) + "-" + hex.EncodeToString(r.SpanID[:]) + "-" + hex.EncodeToString([]byte{r.Flags})
}

// parseTraceparent reads a version-00 W3C traceparent (as a task record's
// Trace holds it). It reports false for anything else.
func parseTraceparent(s string) (traceRef, bool) {
	var r traceRef
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return r, false
	}
	var fl [1]byte
	if _, err := hex.Decode(r.TraceID[:], []byte(s[3:35])); err != nil {
		return r, false
	}
	if _, err := hex.Decode(r.SpanID[:], []byte(s[36:52])); err != nil {
		return r, false
	}
	if _, err := hex.Decode(fl[:], []byte(s[53:])); err != nil {
		return r, false
	}
	r.Flags = fl[0]
	return r, r.Valid()
}

// taskStarted counts a task that starts running here.
func (s *Server) taskStarted(ctx context.Context) {
	if t := s.tel; t != nil {
		t.Record(ctx, measurement{Kind: measureTasksRunning, Delta: 1})
		t.Record(ctx, measurement{Kind: measureTaskStatus, Reason: string(mcp.TaskWorking)})
	}
}

// linkTask links ctx's span (a tasks/* request) to the request that
// created rec.
func (s *Server) linkTask(ctx context.Context, rec *TaskRecord) {
	t := s.tel
	if t == nil || rec.Trace == "" {
		return
	}
	if ref, ok := parseTraceparent(rec.Trace); ok {
		t.Link(ctx, ref)
	}
}

// taskRunSpan starts the span of a task's run: a new trace linked to the
// request that created the task. A call that is not (yet) a task runs in
// its request's span, with no span of its own.
func (s *Server) taskRunSpan(run *taskRun, tool string) (context.Context, func(error)) {
	t := s.tel
	if t == nil || !run.running() {
		return run.ctx, func(error) {}
	}
	run.mu.Lock()
	trace := run.seed.Trace
	id := run.id
	run.mu.Unlock()
	sp := &telemetrySpan{Name: "task " + tool, Kind: spanInternal, Method: "tools/call", Root: true,
		Attrs: []slog.Attr{slog.String("gen_ai.tool.name", tool), slog.String("baton.task.id", id)}}
	if ref, ok := parseTraceparent(trace); ok {
		sp.Links = []traceRef{ref}
	}
	return t.StartSpan(run.ctx, sp)
}

// question starts the span of a task's question (a client span, child of
// the run's span and linked to the request that created the task) and
// counts the call parked until the returned function ends both.
func (run *taskRun) question(ctx context.Context, irs []mrtr.InputRequest) (context.Context, func()) {
	s := run.host.s
	t := s.tel
	if t == nil {
		return ctx, func() {}
	}
	name := "tasks/input_required"
	method := ""
	if len(irs) == 1 {
		method = irs[0].Method()
		name = method
	}
	sp := &telemetrySpan{Name: name, Kind: spanClient, Method: method,
		Attrs: []slog.Attr{slog.String("baton.task.id", run.taskID()), slog.Int("baton.requests", len(irs))}}
	run.mu.Lock()
	if ref, ok := parseTraceparent(run.seed.Trace); ok {
		sp.Links = []traceRef{ref}
	}
	run.mu.Unlock()
	qctx, end := t.StartSpan(ctx, sp)
	t.Record(ctx, measurement{Kind: measureParkedCalls, Delta: 1})
	t.Record(ctx, measurement{Kind: measureTaskStatus, Reason: string(mcp.TaskInputRequired)})
	return qctx, func() {
		t.Record(ctx, measurement{Kind: measureParkedCalls, Delta: -1})
		end(nil)
	}
}
