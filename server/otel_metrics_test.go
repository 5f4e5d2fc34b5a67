package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// metricValue sums the data points of metric name whose attributes
// include attr (any point when attr is empty): the value of a sum, the
// count of a histogram. found is false when the metric has no such point.
func metricValue(t testing.TB, rec *otelRecorder, name string, attr ...attribute.KeyValue) (v float64, found bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := rec.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	match := func(set attribute.Set) bool {
		for _, kv := range attr {
			if got, ok := set.Value(kv.Key); !ok || got != kv.Value {
				return false
			}
		}
		return true
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/baton-mcp/baton/server" {
			continue
		}
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						v, found = v+float64(p.Value), true
					}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						v, found = v+float64(p.Count), true
					}
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						v, found = v+float64(p.Count), true
					}
				}
			}
		}
	}
	return v, found
}

func wantMetric(t testing.TB, rec *otelRecorder, want float64, name string, attr ...attribute.KeyValue) {
	t.Helper()
	if got, _ := metricValue(t, rec, name, attr...); got != want {
		t.Errorf("%s%v = %v, want %v", name, attr, got, want)
	}
}

// TestMetricsTasksRefusalsAndSessions checks Baton's own metrics against
// what a test client did: refused states by reason, tasks by status and
// running, the task store's calls, live 2025-11-25 sessions, parked calls
// and answers routed between two instances.
func TestMetricsTasksRefusalsAndSessions(t *testing.T) {
	rec := newOtelRecorder(t)
	shared := &server.TaskOptions{Store: server.NewMemoryTaskStore(nil)}
	sessions := legacy.NewMemoryStore(nil)
	a, b := newInstanceWith(t, rec.tel, shared, sessions), newInstanceWith(t, rec.tel, shared, sessions)
	ctx := testCtx(t)

	// Refused states: a malformed one, and one issued for another tool.
	c, err := mcptest.New(mcptest.Handler(a), &mcptest.Options{Capabilities: tasksCaps()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Do(ctx, "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}, "requestState": "not-a-state"})
	if err != nil || r.Error == nil {
		t.Fatalf("malformed state accepted: %v %s", err, r.Body)
	}
	first, err := c.Do(ctx, "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}})
	if err != nil || first.ResultType() != "input_required" {
		t.Fatalf("first round: %v", err)
	}
	var st struct {
		RequestState string `json:"requestState"`
	}
	_ = json.Unmarshal(first.Result, &st)
	if r, err = c.Do(ctx, "tools/call", map[string]any{"name": "onboard", "arguments": map[string]any{}, "requestState": st.RequestState}); err != nil || r.Error == nil {
		t.Fatalf("state of another tool accepted: %v %s", err, r.Body)
	}
	wantMetric(t, rec, 1, "baton.state.refused", attribute.String("baton.reason", "malformed"))
	wantMetric(t, rec, 1, "baton.state.refused", attribute.String("baton.reason", "mismatch"))
	wantMetric(t, rec, 1, "baton.flow.issued")
	wantMetric(t, rec, 2, "mcp.server.operation.duration", attribute.String("error.type", "-32602"))

	// A task with a question, across both instances.
	tc, err := mcptest.New(mcptest.RoundRobin(mcptest.Handler(a), mcptest.Handler(b)), &mcptest.Options{Capabilities: tasksCaps()})
	if err != nil {
		t.Fatal(err)
	}
	created, err := tc.Do(ctx, "tools/call", map[string]any{"name": "slow_confirm", "arguments": map[string]any{}})
	if err != nil || created.ResultType() != "task" {
		t.Fatalf("tools/call: %v %s", err, created.Body)
	}
	var task struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(created.Result, &task)
	key := waitStatus(t, tc, task.TaskID, "input_required")
	wantMetric(t, rec, 1, "baton.tasks.running")
	wantMetric(t, rec, 1, "baton.calls.parked")
	if up, err := tc.Do(ctx, "tasks/update", map[string]any{"taskId": task.TaskID,
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}}); err != nil || up.Err() != nil {
		t.Fatalf("tasks/update: %v", err)
	}
	waitStatus(t, tc, task.TaskID, "completed")
	for _, s := range []string{"working", "input_required", "completed"} {
		wantMetric(t, rec, 1, "baton.task.status", attribute.String("baton.task.status", s))
	}
	waitMetric(t, rec, 0, "baton.tasks.running")
	wantMetric(t, rec, 0, "baton.calls.parked")
	if n, _ := metricValue(t, rec, "baton.store.duration", attribute.String("baton.store.operation", "tasks.create")); n != 1 {
		t.Errorf("tasks.create store calls = %v, want 1", n)
	}
	if n, _ := metricValue(t, rec, "baton.store.duration", attribute.String("baton.store.operation", "tasks.update")); n < 2 {
		t.Errorf("tasks.update store calls = %v, want at least 2", n)
	}
	wantMetric(t, rec, 0, "baton.store.errors")

	// A 2025-11-25 call on instance a whose answer is posted to b: b
	// routes it to a. While the call waits, it is parked and its session
	// live.
	ta, tb := serve(t, a), serve(t, b)
	session := legacyInit(t, ta.URL)
	legacyCall(t, ta.URL, tb.URL, session, "confirm", func() {
		wantMetric(t, rec, 1, "baton.calls.parked")
		if n, _ := metricValue(t, rec, "baton.legacy.sessions"); n < 1 {
			t.Errorf("baton.legacy.sessions = %v while a call is in flight", n)
		}
	})
	wantMetric(t, rec, 1, "baton.answers.routed", attribute.String("baton.direction", "sent"))
	waitMetric(t, rec, 1, "baton.answers.routed", attribute.String("baton.direction", "received"))
	wantMetric(t, rec, 0, "baton.calls.parked")
}

// waitMetric polls until the metric has the value (for what settles after
// a response: a task's supervisor, a message between instances).
func waitMetric(t testing.TB, rec *otelRecorder, want float64, name string, attr ...attribute.KeyValue) {
	t.Helper()
	waitFor(t, func() bool {
		got, _ := metricValue(t, rec, name, attr...)
		return got == want
	}, name)
}

// TestCallerChosenNamesDoNotGrowSeries: a call of a tool that does not
// exist, and a method no server answers, are named by the method alone
// (_OTHER for the unknown method) in spans and metrics, so a caller
// cannot grow the span names or the metric series.
func TestCallerChosenNamesDoNotGrowSeries(t *testing.T) {
	rec := newOtelRecorder(t)
	srv := newInstance(t, rec.tel, nil)
	c, err := mcptest.New(mcptest.Handler(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	for i := range 3 {
		if r, err := c.Do(ctx, "tools/call", map[string]any{"name": "no_such_tool_" + string(rune('a'+i)), "arguments": map[string]any{}}); err != nil || r.Error == nil {
			t.Fatalf("unknown tool answered: %v", err)
		}
		if r, err := c.Do(ctx, "x/made_up_"+string(rune('a'+i)), map[string]any{}); err != nil || r.Error == nil {
			t.Fatalf("unknown method answered: %v", err)
		}
	}
	names := map[string]int{}
	for _, s := range rec.spans.GetSpans() {
		names[s.Name]++
	}
	if len(names) != 2 || names["tools/call"] != 3 || names["_OTHER"] != 3 {
		t.Errorf("span names %v, want tools/call and _OTHER three times each", names)
	}
	wantMetric(t, rec, 3, "mcp.server.operation.duration", attribute.String("mcp.method.name", "_OTHER"))
	wantMetric(t, rec, 3, "mcp.server.operation.duration", attribute.String("mcp.method.name", "tools/call"))
	if n, found := metricValue(t, rec, "mcp.server.operation.duration", attribute.String("gen_ai.tool.name", "no_such_tool_a")); found {
		t.Errorf("an unknown tool's name labels %v requests", n)
	}
}
