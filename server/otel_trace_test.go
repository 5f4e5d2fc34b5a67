package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// clientTrace is the traceparent the test's client sends in params._meta
// on the first round.
const clientTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func attrs(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

func linkAttrs(l sdktrace.Link) string {
	var parts []string
	for _, kv := range l.Attributes {
		parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
	}
	return strings.Join(parts, ",")
}

// dump renders spans for the test log: name, kind, ids, parent, links and
// attributes, sorted by key.
func dump(spans tracetest.SpanStubs) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s [%s] trace=%s span=%s parent=%s status=%s\n", s.Name, s.SpanKind, s.SpanContext.TraceID(), s.SpanContext.SpanID(), s.Parent.SpanID(), s.Status.Code)
		for _, l := range s.Links {
			fmt.Fprintf(&b, "    link -> trace=%s span=%s (%s)\n", l.SpanContext.TraceID(), l.SpanContext.SpanID(), linkAttrs(l))
		}
		a := attrs(s)
		keys := make([]string, 0, len(a))
		for k := range a {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "    %s=%s\n", k, a[k])
		}
	}
	return b.String()
}

func accept(content map[string]any) func(context.Context, *elicit.Request) (*elicit.Result, error) {
	return func(context.Context, *elicit.Request) (*elicit.Result, error) {
		return mcptest.Accept(content)
	}
}

// TestTraceTwoRoundFlowAcrossInstances runs a two-round flow whose rounds
// hit two instances sharing only the state key, and a three-round one,
// and checks each round's span: name, attributes, parent and links.
func TestTraceTwoRoundFlowAcrossInstances(t *testing.T) {
	rec := newOtelRecorder(t)
	a := newInstance(t, rec.tel, nil)
	b := newInstance(t, rec.tel, nil)
	var served []string // which instance served each request
	on := func(name string, h http.Handler) mcptest.Target {
		return mcptest.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served = append(served, name)
			h.ServeHTTP(w, r)
		}))
	}
	c, err := mcptest.New(mcptest.RoundRobin(on("A", a), on("B", b)), &mcptest.Options{
		Elicitation: func(ctx context.Context, r *elicit.Request) (*elicit.Result, error) {
			if r.Message == "Name?" {
				return mcptest.Accept(map[string]any{"name": "Ada"})
			}
			return mcptest.Accept(map[string]any{"ok": true})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(testCtx(t), "confirm", map[string]any{}, mcptest.WithMeta("traceparent", clientTrace))
	if err != nil || res.IsError {
		t.Fatalf("confirm: %v %+v", err, res)
	}
	if n := len(res.Exchange.Rounds); n != 2 {
		t.Fatalf("confirm took %d rounds, want 2", n)
	}
	if strings.Join(served, ",") != "A,B" {
		t.Fatalf("rounds served by %v, want A then B", served)
	}
	spans := rec.spans.GetSpans()
	t.Logf("two-round flow across two instances (round 1 on A, round 2 on B):\n%s", dump(spans))
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2:\n%s", len(spans), dump(spans))
	}
	r1, r2 := spans[0], spans[1]
	for i, s := range spans {
		if s.Name != "tools/call confirm" || s.SpanKind != trace.SpanKindServer {
			t.Errorf("round %d: span %q kind %v, want tools/call confirm, server", i+1, s.Name, s.SpanKind)
		}
		at := attrs(s)
		for k, want := range map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": "confirm", "gen_ai.operation.name": "execute_tool",
			"mcp.protocol.version": "2026-07-28", "baton.round": fmt.Sprint(i + 1),
		} {
			if at[k] != want {
				t.Errorf("round %d: %s = %q, want %q", i+1, k, at[k], want)
			}
		}
		if at["jsonrpc.request.id"] == "" {
			t.Errorf("round %d: no jsonrpc.request.id", i+1)
		}
		if _, ok := at["mcp.session.id"]; ok {
			t.Errorf("round %d: a 2026-07-28 request has mcp.session.id", i+1)
		}
	}
	if got := attrs(r1)["baton.outcome"]; got != "input_required" {
		t.Errorf("round 1 outcome %q", got)
	}
	if got := attrs(r2)["baton.outcome"]; got != "complete" {
		t.Errorf("round 2 outcome %q", got)
	}
	// Round 1 is parented by the client's traceparent from params._meta.
	if got := r1.Parent.TraceID().String() + "-" + r1.Parent.SpanID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7" || !r1.Parent.IsRemote() {
		t.Errorf("round 1 parent = %s (remote %v), want the _meta traceparent", got, r1.Parent.IsRemote())
	}
	// Both rounds carry one flow id; round 2 links to round 1 (first and
	// previous at once).
	f1, f2 := attrs(r1)["baton.flow.id"], attrs(r2)["baton.flow.id"]
	if len(f1) != 32 || f1 != f2 {
		t.Errorf("flow ids %q and %q, want one 32-hex id", f1, f2)
	}
	if len(r1.Links) != 0 {
		t.Errorf("round 1 has links %v", r1.Links)
	}
	if len(r2.Links) != 1 || !r2.Links[0].SpanContext.Equal(r1.SpanContext.WithRemote(true)) || linkAttrs(r2.Links[0]) != "baton.link=flow.first" {
		t.Errorf("round 2 links %+v, want one to round 1 (%s)", r2.Links, r1.SpanContext.SpanID())
	}

	// Three rounds: round 3 links to round 1 (first) and round 2 (previous).
	rec.spans.Reset()
	res, err = c.CallTool(testCtx(t), "onboard", map[string]any{})
	if err != nil || res.IsError || len(res.Exchange.Rounds) != 3 {
		t.Fatalf("onboard: %v %+v", err, res)
	}
	spans = rec.spans.GetSpans()
	t.Logf("three-round flow:\n%s", dump(spans))
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	s3 := spans[2]
	if len(s3.Links) != 2 ||
		!s3.Links[0].SpanContext.Equal(spans[0].SpanContext.WithRemote(true)) || linkAttrs(s3.Links[0]) != "baton.link=flow.first" ||
		!s3.Links[1].SpanContext.Equal(spans[1].SpanContext.WithRemote(true)) || linkAttrs(s3.Links[1]) != "baton.link=flow.previous" {
		t.Errorf("round 3 links:\n%s", dump(spans[2:]))
	}
	if attrs(spans[0])["baton.flow.id"] == f1 || attrs(spans[0])["baton.flow.id"] != attrs(s3)["baton.flow.id"] {
		t.Errorf("a new flow must have a new id, the same in its rounds")
	}
}

// TestTraceTask runs a task that asks a question: the run is a new trace
// linked to the request that created the task, its question is a client
// span under the run, and tasks/get and tasks/update link to the creating
// request too.
func TestTraceTask(t *testing.T) {
	rec := newOtelRecorder(t)
	// Two instances sharing the task store: requests alternate between
	// them, so the task's requests reach both.
	shared := &server.TaskOptions{Store: server.NewMemoryTaskStore(nil)}
	a, b := newInstance(t, rec.tel, shared), newInstance(t, rec.tel, shared)
	c, err := mcptest.New(mcptest.RoundRobin(mcptest.Handler(a), mcptest.Handler(b)), &mcptest.Options{Capabilities: tasksCaps()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	created, err := c.Do(ctx, "tools/call", map[string]any{"name": "slow_confirm", "arguments": map[string]any{}})
	if err != nil || created.Err() != nil || created.ResultType() != "task" {
		t.Fatalf("tools/call: %v %v %s", err, created.Err(), created.Body)
	}
	var task struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(created.Result, &task)
	key := waitStatus(t, c, task.TaskID, "input_required")
	up, err := c.Do(ctx, "tasks/update", map[string]any{"taskId": task.TaskID,
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}})
	if err != nil || up.Err() != nil {
		t.Fatalf("tasks/update: %v %v", err, up.Err())
	}
	waitStatus(t, c, task.TaskID, "completed")
	spans := waitSpans(t, rec, func(s tracetest.SpanStubs) bool { return find(s, "task slow_confirm") != nil })
	t.Logf("task:\n%s", dump(spans))
	create := find(spans, "tools/call slow_confirm")
	run := find(spans, "task slow_confirm")
	q := find(spans, "elicitation/create")
	if create == nil || run == nil || q == nil {
		t.Fatalf("missing spans:\n%s", dump(spans))
	}
	if attrs(*create)["baton.outcome"] != "task" {
		t.Errorf("creating span outcome %q", attrs(*create)["baton.outcome"])
	}
	created1 := create.SpanContext.WithRemote(true)
	if run.Parent.IsValid() || len(run.Links) != 1 || !run.Links[0].SpanContext.Equal(created1) {
		t.Errorf("run: parent %v links %v, want a root linked to the creating request", run.Parent, run.Links)
	}
	if q.SpanKind != trace.SpanKindClient || q.Parent.SpanID() != run.SpanContext.SpanID() || len(q.Links) != 1 || !q.Links[0].SpanContext.Equal(created1) {
		t.Errorf("question: kind %v parent %s links %v, want a client span under the run linked to the creating request", q.SpanKind, q.Parent.SpanID(), q.Links)
	}
	for _, name := range []string{"tasks/get", "tasks/update"} {
		s := find(spans, name)
		if s == nil {
			t.Fatalf("no %s span", name)
		}
		if attrs(*s)["baton.task.id"] != task.TaskID || len(s.Links) != 1 || !s.Links[0].SpanContext.Equal(created1) {
			t.Errorf("%s: attrs %v links %v, want the task id and a link to the creating request", name, attrs(*s), s.Links)
		}
	}
}

func find(spans tracetest.SpanStubs, name string) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}
