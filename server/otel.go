// OpenTelemetry instrumentation (Options.Telemetry): a server span per
// request named and attributed per the MCP semantic conventions, links
// that follow a multi round-trip flow across its rounds and instances and
// a task across the requests about it, and the conventions' duration
// histogram beside Baton's own metrics (docs/telemetry.md lists them all).
// It uses the OpenTelemetry API only: the SDK, the sampler and the
// exporters are the program's choice.

package server

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-mcp/baton/mcp"
)

// scopeName is the instrumentation scope of the tracer and the meter.
const scopeName = "github.com/baton-mcp/baton/server"

// durationBuckets are the explicit bucket boundaries, in seconds, the MCP
// semantic conventions give mcp.server.operation.duration; Baton's own
// durations use them too.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// roundBuckets are the bucket boundaries of baton.flow.rounds.
var roundBuckets = []float64{2, 3, 4, 5, 6, 8, 10, 16, 32}

// Telemetry turns on OpenTelemetry tracing and metrics (Options.Telemetry):
// a span per request, spans for the work a request leads to elsewhere (a
// task's run and its questions, a 2025-11-25 call's requests to its
// client), and the MCP semantic conventions' metrics with Baton's own
// (flows, tasks, sessions, store calls, refusals). The zero value uses
// the global providers; one may serve several servers (the instances of a
// test fleet, say). A server without it traces nothing, at no cost. Only
// the OpenTelemetry API is used: the SDK and exporters are the program's.
type Telemetry struct {
	// TracerProvider makes the tracer (otel.GetTracerProvider() if nil).
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter (otel.GetMeterProvider() if nil).
	MeterProvider metric.MeterProvider
	// Propagator reads trace context from params._meta and from HTTP
	// headers (W3C Trace Context and Baggage if nil).
	Propagator propagation.TextMapPropagator
}

// otelTelemetry is the telemetry of a server with Options.Telemetry set,
// on the OpenTelemetry API.
type otelTelemetry struct {
	now func() time.Time // the stopwatch of request durations: the wall clock

	tracer trace.Tracer
	prop   propagation.TextMapPropagator

	opDuration    metric.Float64Histogram
	flowIssued    metric.Int64Counter
	flowCompleted metric.Int64Counter
	flowRounds    metric.Int64Histogram
	stateRefused  metric.Int64Counter
	taskStatus    metric.Int64Counter
	tasksRunning  metric.Int64UpDownCounter
	sessions      metric.Int64UpDownCounter
	parked        metric.Int64UpDownCounter
	routed        metric.Int64Counter
	storeDuration metric.Float64Histogram
	storeErrors   metric.Int64Counter
	refusals      metric.Int64Counter
}

var _ telemetry = (*otelTelemetry)(nil)

// newOtelTelemetry returns the instrumentation opts configures, with its
// instruments made on the meter provider.
func newOtelTelemetry(opts *Telemetry) (*otelTelemetry, error) {
	o := *opts
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	if o.Propagator == nil {
		o.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	t := &otelTelemetry{now: wallClock(nil), tracer: o.TracerProvider.Tracer(scopeName), prop: o.Propagator}
	m := o.MeterProvider.Meter(scopeName)
	var err error
	mk := func(f func() error) {
		if err == nil {
			err = f()
		}
	}
	mk(func() (e error) {
		t.opDuration, e = m.Float64Histogram("mcp.server.operation.duration", metric.WithUnit("s"),
			metric.WithDescription("MCP request duration as observed on the receiver from the time it was received until the result is sent."),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		return
	})
	mk(func() (e error) {
		t.flowIssued, e = m.Int64Counter("baton.flow.issued", metric.WithUnit("{flow}"),
			metric.WithDescription("Multi round-trip flows whose first round ended input_required."))
		return
	})
	mk(func() (e error) {
		t.flowCompleted, e = m.Int64Counter("baton.flow.completed", metric.WithUnit("{flow}"),
			metric.WithDescription("Multi round-trip flows that ended on a later round with a final answer (or an error)."))
		return
	})
	mk(func() (e error) {
		t.flowRounds, e = m.Int64Histogram("baton.flow.rounds", metric.WithUnit("{round}"),
			metric.WithDescription("Rounds per completed multi round-trip flow."),
			metric.WithExplicitBucketBoundaries(roundBuckets...))
		return
	})
	mk(func() (e error) {
		t.stateRefused, e = m.Int64Counter("baton.state.refused", metric.WithUnit("{state}"),
			metric.WithDescription("requestState tokens refused, by reason."))
		return
	})
	mk(func() (e error) {
		t.taskStatus, e = m.Int64Counter("baton.task.status", metric.WithUnit("{task}"),
			metric.WithDescription("Tasks that reached a status, by status."))
		return
	})
	mk(func() (e error) {
		t.tasksRunning, e = m.Int64UpDownCounter("baton.tasks.running", metric.WithUnit("{task}"),
			metric.WithDescription("Tasks running on this instance."))
		return
	})
	mk(func() (e error) {
		t.sessions, e = m.Int64UpDownCounter("baton.legacy.sessions", metric.WithUnit("{session}"),
			metric.WithDescription("2025-11-25 sessions live on this instance (a request, call or stream of theirs in progress here)."))
		return
	})
	mk(func() (e error) {
		t.parked, e = m.Int64UpDownCounter("baton.calls.parked", metric.WithUnit("{call}"),
			metric.WithDescription("Calls waiting for their client's answer: 2025-11-25 server-to-client requests and task questions."))
		return
	})
	mk(func() (e error) {
		t.routed, e = m.Int64Counter("baton.answers.routed", metric.WithUnit("{answer}"),
			metric.WithDescription("Client answers to server-to-client requests routed between instances, by direction."))
		return
	})
	mk(func() (e error) {
		t.storeDuration, e = m.Float64Histogram("baton.store.duration", metric.WithUnit("s"),
			metric.WithDescription("Latency of store calls, by operation."),
			metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5))
		return
	})
	mk(func() (e error) {
		t.storeErrors, e = m.Int64Counter("baton.store.errors", metric.WithUnit("{error}"),
			metric.WithDescription("Store calls that failed, by operation."))
		return
	})
	mk(func() (e error) {
		t.refusals, e = m.Int64Counter("baton.refusals", metric.WithUnit("{request}"),
			metric.WithDescription("Requests refused for load or by a quota (HTTP 429 or 503), by the limit that refused them."))
		return
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Attribute keys of the MCP semantic conventions and of Baton.
const (
	keyMethod        = attribute.Key("mcp.method.name")
	keyProtocol      = attribute.Key("mcp.protocol.version")
	keySession       = attribute.Key("mcp.session.id")
	keyResourceURI   = attribute.Key("mcp.resource.uri")
	keyRequestID     = attribute.Key("jsonrpc.request.id")
	keyToolName      = attribute.Key("gen_ai.tool.name")
	keyPromptName    = attribute.Key("gen_ai.prompt.name")
	keyOperationName = attribute.Key("gen_ai.operation.name")
	keyErrorType     = attribute.Key("error.type")
	keyStatusCode    = attribute.Key("rpc.response.status_code")
	keyFlowID        = attribute.Key("baton.flow.id")
	keyRound         = attribute.Key("baton.round")
	keyTaskID        = attribute.Key("baton.task.id")
	keyOutcome       = attribute.Key("baton.outcome")
	keyLink          = attribute.Key("baton.link")
	keyReason        = attribute.Key("baton.reason")
	keyTaskStatus    = attribute.Key("baton.task.status")
	keyDirection     = attribute.Key("baton.direction")
	keyStoreOp       = attribute.Key("baton.store.operation")
	keyLimit         = attribute.Key("baton.limit")
)

// serverSpan starts a server span (shared: no slice per request).
var serverSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// metaCarrier reads the trace context keys of params._meta.
type metaCarrier traceContext

func (c *metaCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.Traceparent
	case "tracestate":
		return c.Tracestate
	case "baggage":
		return c.Baggage
	}
	return ""
}

func (c *metaCarrier) Set(string, string) {}

func (c *metaCarrier) Keys() []string { return []string{"traceparent", "tracestate", "baggage"} }

// knownMethods are the methods a Baton server answers, in both eras. Any
// other method (a caller can send any) is named and counted as _OTHER, so
// that it cannot grow the span names or the metrics' series.
var knownMethods = map[string]bool{
	"server/discover": true, "initialize": true, "ping": true, "logging/setLevel": true,
	"tools/list": true, "tools/call": true, "prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "completion/complete": true,
	"subscriptions/listen": true, "tasks/get": true, "tasks/update": true, "tasks/cancel": true,
}

// methodName is the method as spans and metrics name it.
func methodName(m string) string {
	if knownMethods[m] {
		return m
	}
	return "_OTHER"
}

// spanName is "{mcp.method.name} {target}" with the tool or prompt name as
// target when it is registered; other methods (resources/read included: a
// URI is no low-cardinality target) and unknown names are named by the
// method alone.
func spanName(req *telemetryRequest, method string) string {
	if req.Registered && req.Request.Target != "" {
		return method + " " + req.Request.Target
	}
	return method
}

// StartRequest starts the request's server span. Its parent is the trace
// context of params._meta, else that of the HTTP headers, else ctx's own
// span; when _meta or the headers parent it, a span ctx already carried
// (an HTTP server span, say) is linked. A resumed flow's span links to the
// flow's first round and to the round before.
func (t *otelTelemetry) StartRequest(ctx context.Context, req *telemetryRequest) (context.Context, func(MethodResult, error)) {
	mr := req.Request
	ambient := trace.SpanContextFromContext(ctx)
	parent := ctx
	switch {
	case req.Trace.Traceparent != "":
		parent = t.prop.Extract(ctx, (*metaCarrier)(&req.Trace))
	case req.Header != nil && req.Header.Get("traceparent") != "":
		parent = t.prop.Extract(ctx, propagation.HeaderCarrier(req.Header))
	}
	var links []trace.Link
	if p := trace.SpanContextFromContext(parent); ambient.IsValid() && !p.Equal(ambient) {
		links = append(links, trace.Link{SpanContext: ambient, Attributes: []attribute.KeyValue{keyLink.String("transport")}})
	}
	if f := req.Flow; f.ID != "" {
		if sc, ok := spanContext(f.First); ok {
			links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{keyLink.String("flow.first")}})
		}
		if sc, ok := spanContext(f.Prev); ok && f.Prev != f.First {
			links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{keyLink.String("flow.previous")}})
		}
	}
	method := methodName(mr.Method)
	var tool string // for the metrics: a registered tool's name only
	if mr.Method == "tools/call" && req.Registered {
		tool = mr.Target
	}
	opts := serverSpan
	if len(links) > 0 {
		opts = []trace.SpanStartOption{serverSpan[0], trace.WithLinks(links...)}
	}
	// The attributes are set right after the start, and only on a span
	// that records: building them is most of what a request costs with
	// the no-op provider. Samplers see the name, kind, parent and links.
	ctx, span := t.tracer.Start(parent, spanName(req, method), opts...)
	recording := span.IsRecording()
	if recording {
		span.SetAttributes(requestAttrs(req, method)...)
	}
	start := t.now()
	return ctx, func(res MethodResult, err error) {
		outcome, errType, code := outcomeOf(res, err)
		if recording {
			if errType != "" {
				span.SetAttributes(keyErrorType.String(errType))
				msg := errType
				if code != "" {
					span.SetAttributes(keyStatusCode.String(code))
					if e, ok := mcp.AsError(err); ok {
						msg = e.Message
					}
				}
				span.SetStatus(codes.Error, msg)
			}
			span.SetAttributes(keyOutcome.String(outcome))
			if req.Flow.ID == "" && req.IssuedFlow != "" {
				span.SetAttributes(keyFlowID.String(req.IssuedFlow))
			}
		}
		span.End()
		if !t.opDuration.Enabled(ctx) && !t.flowIssued.Enabled(ctx) {
			return // no meter provider: no attributes to build
		}
		bg := context.WithoutCancel(ctx)
		mattrs := make([]attribute.KeyValue, 0, 6)
		mattrs = append(mattrs, keyMethod.String(method), keyOutcome.String(outcome))
		if v := mr.Meta.ProtocolVersion; v != "" {
			mattrs = append(mattrs, keyProtocol.String(v))
		}
		if tool != "" {
			mattrs = append(mattrs, keyToolName.String(tool), keyOperationName.String("execute_tool"))
		}
		if errType != "" {
			mattrs = append(mattrs, keyErrorType.String(errType))
		}
		t.opDuration.Record(bg, t.now().Sub(start).Seconds(), metric.WithAttributes(mattrs...))
		switch {
		case mr.Round == 1 && outcome == "input_required":
			t.flowIssued.Add(bg, 1, metric.WithAttributes(keyMethod.String(method)))
		case mr.Round > 1 && outcome != "input_required" && outcome != "cancelled":
			t.flowCompleted.Add(bg, 1, metric.WithAttributes(keyMethod.String(method), keyOutcome.String(outcome)))
			t.flowRounds.Record(bg, int64(mr.Round), metric.WithAttributes(keyMethod.String(method)))
		}
	}
}

// outcomeOf classifies how a request ended: its baton.outcome, its
// error.type ("" on success) and the JSON-RPC code of a protocol error.
func outcomeOf(res MethodResult, err error) (outcome, errType, code string) {
	if err != nil {
		c := mcp.InternalError
		if e, ok := mcp.AsError(err); ok {
			c = e.Code
			if e == errNoResponse {
				return "cancelled", "cancelled", ""
			}
		}
		s := strconv.Itoa(c)
		return "error", s, s
	}
	switch {
	case res.InputRequired:
		return "input_required", "", ""
	case res.Task:
		return "task", "", ""
	case res.IsError:
		return "tool_error", "tool_error", ""
	}
	return "complete", "", ""
}

func spanContext(r traceRef) (trace.SpanContext, bool) {
	if !r.Valid() {
		return trace.SpanContext{}, false
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: r.TraceID, SpanID: r.SpanID, TraceFlags: trace.TraceFlags(r.Flags), Remote: true})
	return sc, sc.IsValid()
}

// StartSpan starts a span for work done on a request's behalf: a task's
// run (a new trace linked to the request that created the task), a task's
// question or a 2025-11-25 server-to-client request (client spans, children
// of ctx's span).
func (t *otelTelemetry) StartSpan(ctx context.Context, s *telemetrySpan) (context.Context, func(error)) {
	kind := trace.SpanKindInternal
	if s.Kind == spanClient {
		kind = trace.SpanKindClient
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(kind)}
	if s.Root {
		opts = append(opts, trace.WithNewRoot())
	}
	if len(s.Links) > 0 {
		links := make([]trace.Link, 0, len(s.Links))
		for _, r := range s.Links {
			if sc, ok := spanContext(r); ok {
				links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{keyLink.String("task.created_by")}})
			}
		}
		opts = append(opts, trace.WithLinks(links...))
	}
	attrs := make([]attribute.KeyValue, 0, len(s.Attrs)+1)
	if s.Method != "" {
		attrs = append(attrs, keyMethod.String(s.Method))
	}
	for _, a := range s.Attrs {
		attrs = append(attrs, slogAttr(a))
	}
	opts = append(opts, trace.WithAttributes(attrs...))
	ctx, span := t.tracer.Start(ctx, s.Name, opts...)
	return ctx, func(err error) {
		if err != nil {
			errType := "_OTHER"
			if e, ok := mcp.AsError(err); ok {
				errType = strconv.Itoa(e.Code)
			}
			span.SetAttributes(keyErrorType.String(errType))
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

func slogAttr(a slog.Attr) attribute.KeyValue {
	k := attribute.Key(a.Key)
	switch a.Value.Kind() {
	case slog.KindInt64:
		return k.Int64(a.Value.Int64())
	case slog.KindBool:
		return k.Bool(a.Value.Bool())
	case slog.KindFloat64:
		return k.Float64(a.Value.Float64())
	}
	return k.String(a.Value.String())
}

// traceRef returns ctx's span context.
func (t *otelTelemetry) SpanRef(ctx context.Context) traceRef {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return traceRef{}
	}
	return traceRef{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Flags: byte(sc.TraceFlags())}
}

// Link links ctx's span to ref's (a tasks/* request to the request that
// created its task).
func (t *otelTelemetry) Link(ctx context.Context, ref traceRef) {
	if sc, ok := spanContext(ref); ok {
		trace.SpanFromContext(ctx).AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{keyLink.String("task.created_by")}})
	}
}

// Record takes one of the server's measurements.
func (t *otelTelemetry) Record(ctx context.Context, m measurement) {
	ctx = context.WithoutCancel(ctx)
	switch m.Kind {
	case measureStateRefused:
		t.stateRefused.Add(ctx, 1, metric.WithAttributes(keyReason.String(m.Reason)))
	case measureTaskStatus:
		t.taskStatus.Add(ctx, 1, metric.WithAttributes(keyTaskStatus.String(m.Reason)))
	case measureTasksRunning:
		t.tasksRunning.Add(ctx, m.Delta)
	case measureLegacySessions:
		t.sessions.Add(ctx, m.Delta)
	case measureParkedCalls:
		t.parked.Add(ctx, m.Delta)
	case measureAnswerRouted:
		t.routed.Add(ctx, max(m.Delta, 1), metric.WithAttributes(keyDirection.String(m.Reason)))
	case measureRefused:
		t.refusals.Add(ctx, 1, metric.WithAttributes(keyLimit.String(m.Reason)))
	case measureStoreCall:
		op := metric.WithAttributes(keyStoreOp.String(m.Reason))
		t.storeDuration.Record(ctx, m.Duration.Seconds(), op)
		if m.Err {
			t.storeErrors.Add(ctx, 1, op)
		}
	}
}

// requestAttrs are a request span's attributes, per the MCP semantic
// conventions and Baton's own.
func requestAttrs(req *telemetryRequest, method string) []attribute.KeyValue {
	mr := req.Request
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, keyMethod.String(method))
	if v := mr.Meta.ProtocolVersion; v != "" {
		attrs = append(attrs, keyProtocol.String(v))
	}
	if !mr.ID.IsZero() {
		attrs = append(attrs, keyRequestID.String(mr.ID.String()))
	}
	switch mr.Method {
	case "tools/call":
		attrs = append(attrs, keyToolName.String(mr.Target), keyOperationName.String("execute_tool"))
	case "prompts/get":
		attrs = append(attrs, keyPromptName.String(mr.Target))
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		if mr.Target != "" {
			attrs = append(attrs, keyResourceURI.String(mr.Target))
		}
	case "tasks/get", "tasks/update", "tasks/cancel":
		attrs = append(attrs, keyTaskID.String(mr.Target))
	}
	if req.SessionID != "" {
		attrs = append(attrs, keySession.String(req.SessionID))
	}
	if mr.Round > 0 {
		attrs = append(attrs, keyRound.Int(mr.Round))
	}
	if req.Flow.ID != "" {
		attrs = append(attrs, keyFlowID.String(req.Flow.ID))
	}
	return attrs
}
