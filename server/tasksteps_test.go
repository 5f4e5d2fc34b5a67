package server

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
)

// inputKeys lists the keys of the inputs in the stored record of task id.
func inputKeys(t *testing.T, store TaskStore, id string) []string {
	t.Helper()
	r, err := store.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, in := range r.Inputs {
		keys = append(keys, in.Key)
	}
	return keys
}

// waitInputs polls the stored record of task id until its input keys are
// want.
func waitInputs(t *testing.T, store TaskStore, id string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		got := inputKeys(t, store, id)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s holds inputs %q, want %q", id, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A RunsOnce handler takes its answers from the record its instance read on the
// wake-up, without a write of its own; the instance's next write (a
// renewal of the lease, the next question, the result) drops the answers
// taken, so they do not stay in the task.
func TestTaskAnswersTakenLeaveTheRecord(t *testing.T) {
	store := NewMemoryTaskStore(nil)
	s := newTestServer(t, &Options{Tasks: TaskOptions{Store: store, Lease: 60 * time.Millisecond}})
	form := confirmForm(t, "Go?")
	got, release := make(chan string, 1), make(chan struct{})
	mustAddTool(t, s, Tool{Name: "twice"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		first, err := req.Elicit(ctx, form)
		if err != nil {
			return nil, err
		}
		got <- string(first.Action)
		<-release
		second, err := req.Elicit(ctx, form)
		if err != nil {
			return nil, err
		}
		return TextResult(string(first.Action) + "," + string(second.Action)), nil
	}, RunAsTask(TaskOptional), RunsOnce())
	id := createTask(t, s, "twice", nil, taskElicitCaps)
	waitTask(t, s, id, mcp.TaskInputRequired)
	ackOf(t, s, "tasks/update", id, updates(map[string]any{"baton:0": accept(true)}))
	select {
	case a := <-got:
		if a != "accept" {
			t.Fatalf("the handler got %q, want accept", a)
		}
	case <-time.After(waitLimit):
		t.Fatal("the handler did not get its answer")
	}
	// The handler holds on: the lease's renewal drops the answer taken.
	waitInputs(t, store, id)
	if res := getTask(t, s, id); res["status"] != "working" {
		t.Errorf("after the answer was taken: %v, want working", res["status"])
	}
	close(release)
	res := waitTask(t, s, id, mcp.TaskInputRequired)
	if irs, _ := res["inputRequests"].(map[string]any); len(irs) != 1 || irs["baton:1"] == nil {
		t.Fatalf("second question: inputRequests = %v, want baton:1 alone", res["inputRequests"])
	}
	ackOf(t, s, "tasks/update", id, updates(map[string]any{"baton:1": map[string]any{"action": "decline"}}))
	res = waitTask(t, s, id, mcp.TaskCompleted)
	if text, _ := toolText(t, res["result"].(map[string]any)); text != "accept,decline" {
		t.Errorf("result %q, want accept,decline", text)
	}
	waitInputs(t, store, id)
}

// Without a renewal in between, the next question's write drops the
// answer taken: the record holds the new question alone.
func TestTaskNextQuestionDropsTheAnswerTaken(t *testing.T) {
	store := NewMemoryTaskStore(nil)
	s := newTestServer(t, &Options{Tasks: TaskOptions{Store: store, Lease: time.Minute}})
	form := confirmForm(t, "Go?")
	mustAddTool(t, s, Tool{Name: "twice"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		for range 2 {
			if _, err := req.Elicit(ctx, form); err != nil {
				return nil, err
			}
		}
		return TextResult("done"), nil
	}, RunAsTask(TaskOptional), RunsOnce())
	id := createTask(t, s, "twice", nil, taskElicitCaps)
	waitTask(t, s, id, mcp.TaskInputRequired)
	ackOf(t, s, "tasks/update", id, updates(map[string]any{"baton:0": accept(true)}))
	waitInputs(t, store, id, "baton:1")
}

// signallingStore is a MemoryStore with the one-step update and wake-up,
// recording the owners it was asked to wake.
type signallingStore struct {
	TaskStore
	mu     sync.Mutex
	owners []string
	plain  int // Signal calls
}

func (s *signallingStore) UpdateSignal(ctx context.Context, id string, fn func(*TaskRecord) error, owner string) (*TaskRecord, error) {
	var wrote bool
	rec, err := s.Update(ctx, id, func(r *TaskRecord) error {
		err := fn(r)
		wrote = err == nil
		return err
	})
	if err == nil && wrote {
		if owner == "" { // the record's
			owner = rec.Owner
		}
		s.mu.Lock()
		s.owners = append(s.owners, owner)
		s.mu.Unlock()
		_ = s.TaskStore.Signal(ctx, owner, id)
	}
	return rec, err
}

func (s *signallingStore) Signal(ctx context.Context, owner, id string) error {
	s.mu.Lock()
	s.plain++
	s.mu.Unlock()
	return s.TaskStore.Signal(ctx, owner, id)
}

// tasks/update and tasks/cancel on an instance that does not run the task
// write and wake in one step when the store has it (through the server's
// own wrappers: status listeners and telemetry); an answer that changes
// nothing wakes no one.
func TestTaskUpdateAndWakeInOneStep(t *testing.T) {
	store := &signallingStore{TaskStore: NewMemoryTaskStore(nil)}
	a := newTestServer(t, &Options{Tasks: TaskOptions{Store: store}})
	tel := &recordingTelemetry{}
	b := newTestServer(t, &Options{Tasks: TaskOptions{Store: store}, testTelemetry: tel})
	form := confirmForm(t, "Go?")
	for _, s := range []*Server{a, b} {
		mustAddTool(t, s, Tool{Name: "ask"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			res, err := req.Elicit(ctx, form)
			if err != nil {
				return nil, err
			}
			return TextResult("answered " + string(res.Action)), nil
		}, RunAsTask(TaskOptional), RunsOnce())
	}
	id := createTask(t, a, "ask", nil, taskElicitCaps)
	waitTask(t, b, id, mcp.TaskInputRequired)
	ackOf(t, b, "tasks/update", id, updates(map[string]any{"unknown-key": accept(true)})) // ignored: no write
	ackOf(t, b, "tasks/update", id, updates(map[string]any{"baton:0": accept(true)}))
	res := waitTask(t, b, id, mcp.TaskCompleted)
	if text, _ := toolText(t, res["result"].(map[string]any)); text != "answered accept" {
		t.Errorf("result %q, want answered accept", text)
	}
	id = createTask(t, a, "ask", nil, taskElicitCaps)
	waitTask(t, a, id, mcp.TaskInputRequired)
	ackOf(t, b, "tasks/cancel", id, nil)
	waitTask(t, a, id, mcp.TaskCancelled)
	tel.mu.Lock()
	if n := len(slices.DeleteFunc(slices.Clone(tel.calls), func(c string) bool { return c != "tasks.update" })); n != 3 {
		t.Errorf("b timed %d updates (%q), want 3: two answers, one cancel", n, tel.calls)
	}
	tel.mu.Unlock()
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.owners) != 2 || store.owners[0] != a.tasks.instance || store.owners[1] != a.tasks.instance || store.plain != 0 {
		t.Errorf("woke %q in one step and %d times apart, want instance a twice in one step (%s), none apart", store.owners, store.plain, a.tasks.instance)
	}
}

// recordingTelemetry keeps the reasons of the store calls it measured.
type recordingTelemetry struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordingTelemetry) StartRequest(ctx context.Context, _ *telemetryRequest) (context.Context, func(MethodResult, error)) {
	return ctx, func(MethodResult, error) {}
}

func (r *recordingTelemetry) StartSpan(ctx context.Context, _ *telemetrySpan) (context.Context, func(error)) {
	return ctx, func(error) {}
}

func (r *recordingTelemetry) SpanRef(context.Context) traceRef { return traceRef{} }

func (r *recordingTelemetry) Link(context.Context, traceRef) {}

func (r *recordingTelemetry) Record(_ context.Context, m measurement) {
	if m.Kind != measureStoreCall {
		return
	}
	r.mu.Lock()
	r.calls = append(r.calls, m.Reason)
	r.mu.Unlock()
}

// tasks/cancel on a task whose lease lapsed takes the slow path: the task
// is loaded and judged first (taskguard), then written. Within the grace
// the owner is only suspected and the cancellation lands; past it the
// task is failed as lost, and the cancellation, acknowledged, changes
// nothing.
func TestTaskWriteOnALapsedLease(t *testing.T) {
	store := NewMemoryTaskStore(nil)
	a, b, skew, _ := skewedPair(t, store)
	for b.tasks.storeHealthySince().IsZero() {
		if b.tasks.heartbeats != nil {
			b.tasks.startBeats()
		}
		time.Sleep(time.Millisecond)
	}
	suspected := createTask(t, a, "job", nil, tasksCaps)
	lost := createTask(t, a, "job", nil, tasksCaps)
	skew.Store(int64(33 * time.Second)) // lapsed, within the grace
	if res := getTask(t, b, lost); res["status"] != "working" {
		t.Fatalf("lapsed, first seen: %v, want working (suspected)", res["status"])
	}
	ackOf(t, b, "tasks/cancel", suspected, nil)
	if res := getTask(t, a, suspected); res["status"] != "cancelled" {
		t.Errorf("cancelled within the grace: %v, want cancelled", res["status"])
	}
	if r, err := store.Get(context.Background(), suspected); err != nil || r.SuspectSince.IsZero() {
		t.Errorf("the lapsed task was written without being judged: %+v, %v", r, err)
	}
	skew.Store(int64(73*time.Second + 500*time.Millisecond)) // past the grace
	ackOf(t, b, "tasks/cancel", lost, nil)
	if res := getTask(t, a, lost); res["status"] != "failed" {
		t.Errorf("cancelled past the grace: %v, want failed (lost)", res["status"])
	}
}
