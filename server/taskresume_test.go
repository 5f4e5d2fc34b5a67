package server

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
)

// A task that asks holds no handler: its instance shuts down at once, and
// the answer through another instance sharing the store completes it
// there, from the top, the earlier answers handed back in order.
func TestTaskWaitingIsData(t *testing.T) {
	store := NewMemoryTaskStore(nil)
	a := newTestServer(t, &Options{Tasks: TaskOptions{Store: store}})
	b := newTestServer(t, &Options{Tasks: TaskOptions{Store: store}})
	t.Cleanup(func() { a.Close(); b.Close() })
	first, second := confirmForm(t, "First?"), confirmForm(t, "Second?")
	var runs atomic.Int32
	for _, s := range []*Server{a, b} {
		mustAddTool(t, s, Tool{Name: "two"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			runs.Add(1)
			r1, err := req.Elicit(ctx, first)
			if err != nil {
				return nil, err
			}
			r2, err := req.Elicit(ctx, second)
			if err != nil {
				return nil, err
			}
			return TextResult(string(r1.Action) + "+" + string(r2.Action)), nil
		}, RunAsTask(TaskOptional))
	}
	id := createTask(t, a, "two", nil, taskElicitCaps)
	waitTask(t, a, id, mcp.TaskInputRequired)
	rec, err := store.Get(context.Background(), id)
	if err != nil || rec.Owner != "" || rec.Call == nil {
		t.Fatalf("waiting task record %+v (%v), want no owner and the call recorded", rec, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if err := a.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a waiting task: %v", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("shutdown with a waiting task took %v, want at once", d)
	}
	ackOf(t, b, "tasks/update", id, updates(map[string]any{"baton:0": accept(true)}))
	res := waitTask(t, b, id, mcp.TaskInputRequired)
	irs, _ := res["inputRequests"].(map[string]any)
	if _, ok := irs["baton:1"]; len(irs) != 1 || !ok {
		t.Fatalf("after the first answer, inputRequests = %v, want baton:1 only", irs)
	}
	ackOf(t, b, "tasks/update", id, updates(map[string]any{"baton:1": map[string]any{"action": "decline"}}))
	res = waitTask(t, b, id, mcp.TaskCompleted)
	if text, _ := toolText(t, res["result"].(map[string]any)); text != "accept+decline" || runs.Load() != 3 {
		t.Errorf("result %q after %d runs, want accept+decline after 3", text, runs.Load())
	}
}

// A task keeps at most maxRecordedInput bytes per question: a bigger
// answer is refused, and nothing moves.
func TestTaskRecordedAnswerCap(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "ask"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if _, err := req.Elicit(ctx, confirmForm(t, "Go?")); err != nil {
			return nil, err
		}
		return TextResult("done"), nil
	}, RunAsTask(TaskOptional))
	id := createTask(t, s, "ask", nil, taskElicitCaps)
	waitTask(t, s, id, mcp.TaskInputRequired)
	big := map[string]any{"action": "accept", "content": map[string]any{"ok": true, "pad": strings.Repeat("x", maxRecordedInput)}}
	r := taskCall(t, s, "tasks/update", id, updates(map[string]any{"baton:0": big}))
	if e := wantError(t, r, http.StatusBadRequest, mcp.InvalidParams); !strings.Contains(e.Message, "4096") {
		t.Errorf("oversized answer error %q does not name the cap", e.Message)
	}
	if res := getTask(t, s, id); res["status"] != "input_required" {
		t.Errorf("after a refused answer: %v", res["status"])
	}
}

// A TaskMayRerun task running on a closing instance is released and run
// again by the next instance to read it, its status message saying so;
// without the option it fails (TestTaskServerClose).
func TestTaskRerunAfterClose(t *testing.T) {
	store := NewMemoryTaskStore(nil)
	a := newTestServer(t, &Options{Tasks: TaskOptions{Store: store}})
	b := newTestServer(t, &Options{Tasks: TaskOptions{Store: store}})
	t.Cleanup(func() { b.Close() })
	var runs atomic.Int32
	hold := make(chan struct{})
	for _, s := range []*Server{a, b} {
		mustAddTool(t, s, Tool{Name: "job"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			if runs.Add(1) == 1 {
				close(hold)
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return TextResult("done"), nil
		}, RunAsTask(TaskOptional), TaskMayRerun())
	}
	id := createTask(t, a, "job", nil, tasksCaps)
	<-hold
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := store.Get(context.Background(), id)
	if err != nil || rec.Owner != "" || rec.Reruns != 1 || !strings.Contains(rec.StatusMessage, "runs it again") {
		t.Fatalf("released task %+v (%v), want no owner, one re-run, a message saying so", rec, err)
	}
	res := waitTask(t, b, id, mcp.TaskCompleted)
	if text, _ := toolText(t, res["result"].(map[string]any)); text != "done" || runs.Load() != 2 {
		t.Errorf("result %q after %d runs, want done after 2", text, runs.Load())
	}
}

// Options that contradict each other are refused at registration.
func TestTaskRerunOptionsConflict(t *testing.T) {
	s := newTestServer(t, nil)
	h := func(context.Context, *ToolRequest) (*ToolResult, error) { return TextResult("x"), nil }
	for name, opts := range map[string][]ToolOption{
		"once and rerun":  {RunAsTask(TaskOptional), RunsOnce(), TaskMayRerun()},
		"defer and rerun": {RunAsTask(TaskOptional), DeferTask(), TaskMayRerun()},
		"rerun, no task":  {TaskMayRerun()},
	} {
		if err := s.AddTool(Tool{Name: "t"}, h, opts...); err == nil {
			t.Errorf("%s: registered, want an error", name)
		}
	}
	// RunsOnce is for 2025-11-25 calls too: no task needed.
	if err := s.AddTool(Tool{Name: "once"}, h, RunsOnce()); err != nil {
		t.Errorf("RunsOnce without a task: %v", err)
	}
}

// A waiting task holds no goroutine: n tasks in input_required leave the
// process's goroutines where they were (the instance's signal receiver
// and heartbeat aside), and the heap per waiting task is logged.
func TestTaskWaitingHoldsNoGoroutine(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "ask"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if _, err := req.Elicit(ctx, confirmForm(t, "Go?")); err != nil {
			return nil, err
		}
		return TextResult("done"), nil
	}, RunAsTask(TaskOptional))
	waitTask(t, s, createTask(t, s, "ask", nil, taskElicitCaps), mcp.TaskInputRequired) // the instance's loops start
	const n = 200
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	// In batches within the client's quota of running tasks
	// (MaxRunningPerClient, 32): a task runs until it asks.
	ids := make([]string, n)
	for start := 0; start < n; start += 16 {
		for i := start; i < min(start+16, n); i++ {
			ids[i] = createTask(t, s, "ask", nil, taskElicitCaps)
		}
		for i := start; i < min(start+16, n); i++ {
			waitTask(t, s, ids[i], mcp.TaskInputRequired)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > g0+n/10 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // handlers unwinding
	}
	if g := runtime.NumGoroutine(); g > g0+n/10 {
		t.Fatalf("%d tasks waiting: %d goroutines, %d before; want about as many (no goroutine per waiting task)", n, g, g0)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("%d waiting tasks: %d goroutines (%d before), heap %+d bytes per task (the memory store's records included)", n, runtime.NumGoroutine(), g0, (int64(after.HeapAlloc)-int64(before.HeapAlloc))/n)
}
