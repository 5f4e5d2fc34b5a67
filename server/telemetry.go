package server

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// telemetry observes a server: a span per request, spans for the work a
// request leads to elsewhere (a task's run and its questions, a 2025-11-25
// call's requests to its client), and measurements. otelTelemetry
// implements it on the OpenTelemetry API (Options.Telemetry), and this
// package's tests with recorders of their own. The dispatch hands over
// what it knows (the request, the flow its state belongs to, W3C trace
// context as it arrived) and stores what it is given (traceRef) where the
// flow or the task travels, so that any instance can link to it.
//
// Every method must be safe for concurrent use and must not block.
type telemetry interface {
	// StartRequest is called when a request's handling starts (after its
	// envelope is checked and a retry's state verified, before the
	// middleware). It returns the context the request is served with, and
	// a function the server calls once when the request ends, with what
	// middleware would see of the outcome (a zero MethodResult with an
	// error).
	StartRequest(ctx context.Context, req *telemetryRequest) (context.Context, func(MethodResult, error))
	// StartSpan starts a span for work the server does on a request's
	// behalf; the returned function ends it, with the work's error.
	StartSpan(ctx context.Context, span *telemetrySpan) (context.Context, func(error))
	// traceRef returns the span ctx carries, or a zero traceRef.
	SpanRef(ctx context.Context) traceRef
	// Link adds to ctx's span a link to the span ref names.
	Link(ctx context.Context, ref traceRef)
	// Record takes one measurement.
	Record(ctx context.Context, m measurement)
}

// traceRef is a span's identity as W3C Trace Context carries it. The server
// stores one in a requestState (the flow's first and previous rounds) and
// in a task's record (the request that created it).
type traceRef struct {
	// TraceID and SpanID are the span's ids.
	TraceID [16]byte
	SpanID  [8]byte
	// Flags are the W3C trace flags (bit 0: sampled).
	Flags byte
}

// Valid reports whether both ids are set.
func (r traceRef) Valid() bool { return r.TraceID != [16]byte{} && r.SpanID != [8]byte{} }

// traceContext is the W3C trace context a request carried, from
// params._meta (traceparent, tracestate, baggage; SEP-414).
type traceContext struct {
	Traceparent, Tracestate, Baggage string
}

// flowTrace is a request's place in a multi round-trip flow, read from
// its verified requestState. It is zero on a first round.
type flowTrace struct {
	// ID is the flow's id (hex), the same in every round of the flow.
	ID string
	// First and Prev are the spans of the flow's first round and of the
	// round that issued the state (zero where those were not traced).
	First, Prev traceRef
}

// telemetryRequest describes a request to telemetry.StartRequest.
type telemetryRequest struct {
	// Request is what middleware sees of the request.
	Request *MethodRequest
	// Trace is the trace context of params._meta.
	Trace traceContext
	// Header holds the HTTP request's headers (nil on stdio, and for a
	// 2025-11-25 session's requests): their traceparent, tracestate and
	// baggage parent the span when params._meta has none.
	Header http.Header
	// SessionID is the 2025-11-25 session's id, or "".
	SessionID string
	// Flow is the flow the request resumes.
	Flow flowTrace
	// Registered reports that Target names a registered tool or prompt
	// (for tools/call and prompts/get): only then may a target name a
	// span or label a metric, since a caller can send any name.
	Registered bool
	// IssuedFlow is set, before the end function is called, to the id of
	// the flow an input_required result continues (or, on a first round,
	// starts).
	IssuedFlow string
}

// spanKind is the kind of a telemetrySpan.
type spanKind int

// The kinds of spans the server starts.
const (
	// spanInternal is work inside the server (a task's run).
	spanInternal spanKind = iota
	// spanClient is a request the server sends to its client (a
	// 2025-11-25 session's elicitation/create, sampling/createMessage,
	// roots/list), or a question a task waits on.
	spanClient
)

// telemetrySpan describes a span to telemetry.StartSpan.
type telemetrySpan struct {
	// Name is the span's name.
	Name string
	// Kind is the span's kind.
	Kind spanKind
	// Method is the MCP method the span is about, if any
	// (mcp.method.name).
	Method string
	// Root starts a new trace instead of a child of ctx's span (a task's
	// run outlives the request that created it; it links to it instead).
	Root bool
	// Links are spans to link to.
	Links []traceRef
	// Attrs are further attributes.
	Attrs []slog.Attr
}

// measurementKind names what a measurement counts.
type measurementKind int

// The measurements the server and the legacy adapter take.
const (
	// measureStateRefused: a requestState was refused; Reason is
	// seal's refusal kind (expired, mismatch, signature, …).
	measureStateRefused measurementKind = iota + 1
	// measureTaskStatus: a task reached status Reason.
	measureTaskStatus
	// measureTasksRunning: Delta is +1 when a task starts running on
	// this instance, -1 when its run ends.
	measureTasksRunning
	// measureLegacySessions: Delta is +1 when this instance takes up a
	// 2025-11-25 session (a request, call or stream of it in progress
	// here), -1 when it lets it go.
	measureLegacySessions
	// measureParkedCalls: Delta is +1 when a call starts waiting for its
	// client's answer (a 2025-11-25 server-to-client request, or a task's
	// question), -1 when the wait ends.
	measureParkedCalls
	// measureAnswerRouted: a client's answer to a server-to-client request
	// was routed between instances; Reason is "sent" (from the instance
	// that received it) or "received" (on the instance holding the call).
	measureAnswerRouted
	// measureStoreCall: a call to a store; Reason is "store.operation"
	// (tasks.get, tasks.update, …), Duration its latency, Err whether it
	// failed (a missing record is no failure).
	measureStoreCall
	// measureRefused: a request was refused for load or by a quota (HTTP
	// 429 or 503); Reason is the limit's name, as the JSON-RPC error's
	// data gives it ("legacy.Options.MaxSessionsPerClient", "draining",
	// "store", …).
	measureRefused
)

// measurement is one measurement for telemetry.Record; which fields are
// set depends on Kind (see the measurementKind constants).
type measurement struct {
	// Kind says what is measured.
	Kind measurementKind
	// Reason qualifies it: a refusal's kind, a task status, a direction,
	// a store operation.
	Reason string
	// Delta is the change of an up-down count (or a count to add).
	Delta int64
	// Duration is a store call's latency.
	Duration time.Duration
	// Err reports a failed store call.
	Err bool
}

// record takes a measurement when telemetry is on.
func (s *Server) record(ctx context.Context, m measurement) {
	if t := s.tel; t != nil {
		t.Record(ctx, m)
	}
}

// spanRef is ctx's span for sealing, zero when telemetry is off.
func (s *Server) spanRef(ctx context.Context) seal.SpanRef {
	if t := s.tel; t != nil {
		return seal.SpanRef(t.SpanRef(ctx))
	}
	return seal.SpanRef{}
}

// traced runs a request through telemetry.StartRequest, then the
// middleware chain and serve.
func (s *Server) traced(ctx context.Context, mr *MethodRequest, serve func(ctx context.Context) ([]byte, resultNote, *mcp.Error)) ([]byte, *mcp.Error) {
	tr := &telemetryRequest{Request: mr}
	if r := mr.r; r != nil {
		if m := r.p.Meta; m != nil {
			tr.Trace = traceContext{Traceparent: deref(m.Traceparent), Tracestate: deref(m.Tracestate), Baggage: deref(m.Baggage)}
		}
		tr.Header, tr.SessionID = r.header, r.session
		if st := r.opened; st != nil {
			tr.Flow = flowTrace{ID: st.Flow.ID.String(), First: traceRef(st.Flow.First), Prev: traceRef(st.Flow.Prev)}
		}
	}
	switch mr.Method {
	case "tools/call", "prompts/get":
		tr.Registered = s.registered(mr.Method, mr.Target)
	}
	ctx, end := s.tel.StartRequest(ctx, tr)
	res, e := s.chain(ctx, mr, serve)
	var note resultNote // what handle's serve noted (listen and a session's own methods note nothing)
	if mr.r != nil {
		note = mr.r.out
	}
	if !note.flow.IsZero() {
		tr.IssuedFlow = note.flow.String()
	}
	if e != nil {
		end(MethodResult{}, e)
	} else {
		end(MethodResult{InputRequired: note.inputRequired, Task: note.task, IsError: note.isError}, nil)
	}
	return res, e
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// logTraceAttrs appends trace_id and span_id for ctx's span, if the
// server has telemetry and ctx a valid span.
func logTraceAttrs(ctx context.Context, srv *Server, attrs []slog.Attr) []slog.Attr {
	if srv == nil || srv.tel == nil {
		return attrs
	}
	ref := srv.tel.SpanRef(ctx)
	if !ref.Valid() {
		return attrs
	}
	return append(attrs, slog.String("trace_id", hex.EncodeToString(ref.TraceID[:])), slog.String("span_id", hex.EncodeToString(ref.SpanID[:])))
}

// tracedPeer is a 2025-11-25 call's Peer that makes each server-to-client
// request a client span, child of the call's, and counts the call parked
// while it waits.
type tracedPeer struct {
	era.Peer
	s *Server
}

// CloseStream forwards Call.CloseStream to the peer.
func (p tracedPeer) CloseStream() bool {
	c, ok := p.Peer.(interface{ CloseStream() bool })
	return ok && c.CloseStream()
}

func (p tracedPeer) Request(ctx context.Context, reqs []era.PeerRequest, timeout time.Duration, stay bool) ([]json.RawMessage, error) {
	t := p.s.tel
	name := "batch"
	if len(reqs) == 1 {
		name = reqs[0].Method
	}
	sctx, end := t.StartSpan(ctx, &telemetrySpan{Name: name, Kind: spanClient, Method: methodOf(reqs), Attrs: []slog.Attr{slog.Int("baton.requests", len(reqs))}})
	t.Record(ctx, measurement{Kind: measureParkedCalls, Delta: 1})
	out, err := p.Peer.Request(sctx, reqs, timeout, stay)
	t.Record(ctx, measurement{Kind: measureParkedCalls, Delta: -1})
	end(err)
	return out, err
}

func methodOf(reqs []era.PeerRequest) string {
	if len(reqs) == 1 {
		return reqs[0].Method
	}
	return ""
}

// timedStore reports the latency and failures of a task store's calls,
// timed by the server's clock (Options.Now).
type timedStore struct {
	TaskStore
	s *Server
}

func (ts timedStore) done(ctx context.Context, op string, start time.Time, err error) {
	failed := err != nil && !errors.Is(err, ErrTaskNotFound) && !errors.Is(err, ErrTaskNoUpdate) && !errors.Is(err, ErrTaskExists)
	ts.s.tel.Record(ctx, measurement{Kind: measureStoreCall, Reason: op, Duration: ts.s.now().Sub(start), Err: failed})
}

func (ts timedStore) Create(ctx context.Context, r *TaskRecord) error {
	start := ts.s.now()
	err := ts.TaskStore.Create(ctx, r)
	ts.done(ctx, "tasks.create", start, err)
	return err
}

func (ts timedStore) Get(ctx context.Context, id string) (*TaskRecord, error) {
	start := ts.s.now()
	r, err := ts.TaskStore.Get(ctx, id)
	ts.done(ctx, "tasks.get", start, err)
	return r, err
}

func (ts timedStore) Update(ctx context.Context, id string, fn func(*TaskRecord) error) (*TaskRecord, error) {
	// An error of fn's own aborts the update and comes back as it is: no
	// failure of the store.
	var fnErr error
	start := ts.s.now()
	r, err := ts.TaskStore.Update(ctx, id, func(r *TaskRecord) error {
		fnErr = fn(r)
		return fnErr
	})
	if err != nil && fnErr != nil && errors.Is(err, fnErr) {
		ts.done(ctx, "tasks.update", start, nil)
	} else {
		ts.done(ctx, "tasks.update", start, err)
	}
	return r, err
}

func (ts timedStore) Signal(ctx context.Context, owner, id string) error {
	start := ts.s.now()
	err := ts.TaskStore.Signal(ctx, owner, id)
	ts.done(ctx, "tasks.signal", start, err)
	return err
}

// registered reports whether name is a registered tool (tools/call) or
// prompt (prompts/get).
func (s *Server) registered(method, name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if method == "tools/call" {
		_, ok := s.tools.get(name)
		return ok
	}
	_, ok := s.prompts.get(name)
	return ok
}
