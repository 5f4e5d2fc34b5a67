package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// flakyStore is a MemoryStore that can be made unreachable, as a Redis
// that was killed is: every call fails while down is set. It counts the
// tasks created.
type flakyStore struct {
	TaskStore
	down    atomic.Bool
	stall   atomic.Bool // calls wait for their context instead (a paused Redis)
	created atomic.Int32
}

var errUnreachable = errors.New("dial unix redis.sock: connect: connection refused")

func (f *flakyStore) fail(ctx context.Context) error {
	if f.stall.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	if f.down.Load() {
		return errUnreachable
	}
	return nil
}

func (f *flakyStore) Create(ctx context.Context, r *TaskRecord) error {
	if err := f.fail(ctx); err != nil {
		return err
	}
	f.created.Add(1)
	return f.TaskStore.Create(ctx, r)
}

func (f *flakyStore) Get(ctx context.Context, id string) (*TaskRecord, error) {
	if err := f.fail(ctx); err != nil {
		return nil, err
	}
	return f.TaskStore.Get(ctx, id)
}

func (f *flakyStore) Update(ctx context.Context, id string, fn func(*TaskRecord) error) (*TaskRecord, error) {
	if err := f.fail(ctx); err != nil {
		return nil, err
	}
	return f.TaskStore.Update(ctx, id, fn)
}

func (f *flakyStore) Beat(ctx context.Context, instance string, until time.Time) error {
	if err := f.fail(ctx); err != nil {
		return err
	}
	return f.TaskStore.(TaskHeartbeats).Beat(ctx, instance, until)
}

func (f *flakyStore) LastBeat(ctx context.Context, instance string) (time.Time, error) {
	if err := f.fail(ctx); err != nil {
		return time.Time{}, err
	}
	return f.TaskStore.(TaskHeartbeats).LastBeat(ctx, instance)
}

// A task whose handler returns while the store is down keeps its result:
// the write is retried until the store is back, no instance fails the
// task meanwhile (though the outage lasts many leases), and a request
// that needed the store during the outage is refused with 503, saying so.
func TestTaskResultSurvivesStoreOutage(t *testing.T) {
	store := &flakyStore{TaskStore: NewMemoryTaskStore(nil)}
	opts := TaskOptions{Store: store, Lease: 60 * time.Millisecond, Leeway: -1, LostGrace: 300 * time.Millisecond}
	a := newTestServer(t, &Options{Tasks: opts})
	b := newTestServer(t, &Options{Tasks: opts})
	t.Cleanup(func() { a.Close(); b.Close() })
	g := newGate()
	for _, s := range []*Server{a, b} {
		mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	}
	id := createTask(t, a, "job", nil, tasksCaps)
	getTask(t, b, id) // b reads tasks: it beats too
	store.down.Store(true)
	close(g.release)                    // the handler returns now, in the outage
	time.Sleep(1500 * time.Millisecond) // 25 leases, 5 graces
	r := taskCall(t, b, "tasks/get", id, nil)
	e := wantError(t, r, http.StatusServiceUnavailable, mcp.InternalError)
	if !strings.Contains(e.Message, "task store is unavailable") || r.Header.Get("Retry-After") != "1" {
		t.Errorf("tasks/get in the outage: %q, Retry-After %q; want the store named, Retry-After 1", e.Message, r.Header.Get("Retry-After"))
	}
	store.down.Store(false)
	res := waitTask(t, b, id, mcp.TaskCompleted, mcp.TaskFailed)
	if res["status"] != "completed" {
		t.Fatalf("after the outage the task is %v, want completed: %v", res["status"], res)
	}
}

// A task whose owner is really gone is failed, after the grace, with an
// error that says the instance is gone; a reader that cannot reach the
// store itself declares nothing lost.
func TestTaskLostOnlyWhenOwnerGone(t *testing.T) {
	store := &flakyStore{TaskStore: NewMemoryTaskStore(nil)}
	opts := TaskOptions{Store: store, Lease: 60 * time.Millisecond, Leeway: -1, LostGrace: 200 * time.Millisecond}
	a := newTestServer(t, &Options{Tasks: opts})
	b := newTestServer(t, &Options{Tasks: opts})
	t.Cleanup(func() { b.Close() })
	g := newGate()
	for _, s := range []*Server{a, b} {
		mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	}
	id := createTask(t, a, "job", nil, tasksCaps)
	getTask(t, b, id)
	// a dies without a word: its renewals and heartbeats stop, its
	// record stays working.
	a.tasks.mu.Lock()
	run := a.tasks.runs[id]
	a.tasks.mu.Unlock()
	// The store goes down first: a's run, cancelled by the stop, writes
	// its "shut down" state as it ends, and that write must fail.
	store.down.Store(true)
	a.stop() // its life ends: supervisor and heartbeats stop
	<-run.finished
	time.Sleep(50 * time.Millisecond)
	store.down.Store(false) // the record stays working: the abandon write failed
	start := time.Now()
	res := waitTask(t, b, id, mcp.TaskFailed)
	e, _ := res["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if !strings.Contains(msg, "gone") || strings.Contains(msg, "unreachable") {
		t.Errorf("lost task's error %q, want one that says the instance is gone", msg)
	}
	if d := time.Since(start); d < opts.LostGrace {
		t.Errorf("failed %v after the store came back, before the grace %v", d, opts.LostGrace)
	}
}

// The quotas hold before anything is written: a client over its own is
// refused with 429, over the server's with 503, both with Retry-After;
// another client is unaffected by the first one's quota.
func TestTaskQuotas(t *testing.T) {
	store := &flakyStore{TaskStore: NewMemoryTaskStore(nil)}
	s := newTestServer(t, &Options{Tasks: TaskOptions{Store: store, MaxRunningPerClient: 2, MaxRunning: 3, MaxStoredPerClient: 4, PollInterval: 2 * time.Second}})
	t.Cleanup(func() { s.Close() })
	g := newGate()
	mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	mustAddTool(t, s, Tool{Name: "quick"}, func(context.Context, *ToolRequest) (*ToolResult, error) { return TextResult("ok"), nil }, RunAsTask(TaskOptional))
	as := func(p string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.ServeHTTP(w, r.WithContext(ContextWithPrincipal(r.Context(), p)))
		})
	}
	createTask(t, as("alice"), "job", nil, tasksCaps)
	createTask(t, as("alice"), "job", nil, tasksCaps)
	before := store.created.Load()
	r := sendTool(t, newClient(t, as("alice"), tasksCaps), "job", nil)
	e := wantError(t, r, http.StatusTooManyRequests, mcp.InvalidRequest)
	if !strings.Contains(e.Message, "this principal has its limit of 2 running") || r.Header.Get("Retry-After") != "2" {
		t.Errorf("over the client's quota: %q, Retry-After %q", e.Message, r.Header.Get("Retry-After"))
	}
	createTask(t, as("bob"), "job", nil, tasksCaps) // 3 running: the server's limit
	r = sendTool(t, newClient(t, as("carol"), tasksCaps), "job", nil)
	e = wantError(t, r, http.StatusServiceUnavailable, mcp.InternalError)
	if !strings.Contains(e.Message, "limit of 3") || r.Header.Get("Retry-After") == "" {
		t.Errorf("over the server's quota: %q, Retry-After %q", e.Message, r.Header.Get("Retry-After"))
	}
	if got := store.created.Load() - before; got != 1 {
		t.Errorf("%d tasks stored across two refusals and one success, want 1: a refusal writes nothing", got)
	}
	close(g.release)
	// Stored tasks: alice has 2, finished; two more fit, the fifth not.
	waitNoRunning(t, s)
	createTask(t, as("alice"), "quick", nil, tasksCaps)
	createTask(t, as("alice"), "quick", nil, tasksCaps)
	waitNoRunning(t, s)
	r = sendTool(t, newClient(t, as("alice"), tasksCaps), "quick", nil)
	e = wantError(t, r, http.StatusTooManyRequests, mcp.InvalidRequest)
	if secs, _ := strconv.Atoi(r.Header.Get("Retry-After")); !strings.Contains(e.Message, "limit of 4 tasks") || secs < 3000 {
		t.Errorf("over the stored quota: %q, Retry-After %q (want about the TTL, an hour)", e.Message, r.Header.Get("Retry-After"))
	}
	createTask(t, as("bob"), "quick", nil, tasksCaps)
}

// A paused store (calls hang) costs a request StoreTimeout, then a 503.
func TestTaskStoreTimeout(t *testing.T) {
	store := &flakyStore{TaskStore: NewMemoryTaskStore(nil)}
	s := newTestServer(t, &Options{StoreTimeout: 200 * time.Millisecond, Tasks: TaskOptions{Store: store}})
	t.Cleanup(func() { s.Close() })
	mustAddTool(t, s, Tool{Name: "quick"}, func(context.Context, *ToolRequest) (*ToolResult, error) { return TextResult("ok"), nil }, RunAsTask(TaskOptional))
	id := createTask(t, s, "quick", nil, tasksCaps)
	store.stall.Store(true)
	defer store.stall.Store(false)
	for _, call := range []func() (string, int){
		func() (string, int) { return "tasks/get", taskCall(t, s, "tasks/get", id, nil).Status },
		func() (string, int) {
			return "tools/call", sendTool(t, newClient(t, s, tasksCaps), "quick", nil).Status
		},
	} {
		start := time.Now()
		name, status := call()
		if d := time.Since(start); status != http.StatusServiceUnavailable || d > 200*time.Millisecond+waitLimit/2 {
			t.Errorf("%s with a stalled store: %d after %v, want 503 after about 200ms", name, status, d)
		}
	}
}

// Shutdown closes listen streams as the specification asks, refuses new
// tasks and streams with 503, lets a running task finish, and returns.
func TestShutdown(t *testing.T) {
	s := newTestServer(t, nil)
	g := newGate()
	mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	id := createTask(t, s, "job", nil, tasksCaps)
	hs := httptest.NewServer(s)
	defer hs.Close()
	notes := make(chan mcptest.Notification, 16)
	c := newClientOpts(t, mcptest.URL(hs.URL, hs.Client()), &mcptest.Options{OnNotification: func(n mcptest.Notification) { notes <- n }})
	listened := make(chan *mcptest.Response, 1)
	go func() {
		r, err := c.Do(context.Background(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, mcptest.WithID("L1"))
		if err != nil {
			t.Errorf("listen: %v", err)
		}
		listened <- r
	}()
	if n := receive(t, notes, "the listen acknowledgement"); n.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first listen message %s", n.Method)
	}
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	go func() { done <- s.Shutdown(ctx) }()
	lr := receive(t, listened, "the listen stream to end")
	if n := receive(t, notes, "notifications/cancelled"); n.Method != "notifications/cancelled" || !strings.Contains(string(n.Params), `"requestId":"L1"`) {
		t.Errorf("listen stream at shutdown: %s %s, want notifications/cancelled naming L1", n.Method, n.Params)
	}
	if lr == nil || string(lr.ID) != `"L1"` || !strings.Contains(string(lr.Result), `"resultType":"complete"`) {
		t.Errorf("listen stream at shutdown ended with %+v, want its completion result", lr)
	}
	// A new stream is refused, to be tried elsewhere.
	r := send(t, newClient(t, s, ""), "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" {
		t.Errorf("listen while draining: %d, Retry-After %q; want 503, 1", r.Status, r.Header.Get("Retry-After"))
	}
	r = sendTool(t, newClient(t, s, tasksCaps), "job", nil)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("a task while draining: %d, Retry-After %q; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"))
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v while a task ran", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if res := getTask(t, s, id); res["status"] != "completed" {
		t.Errorf("the task running at shutdown is %v, want completed", res["status"])
	}
}

// Shutdown whose context ends fails the tasks still running at once,
// saying the instance shut down.
func TestShutdownDeadline(t *testing.T) {
	s := newTestServer(t, nil)
	g := newGate()
	mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	id := createTask(t, s, "job", nil, tasksCaps)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the deadline", err)
	}
	if d := time.Since(start); d > waitLimit/2 {
		t.Errorf("Shutdown took %v past a 100ms context", d)
	}
	res := getTask(t, s, id)
	e, _ := res["error"].(map[string]any)
	if msg, _ := e["message"].(string); res["status"] != "failed" || !strings.Contains(msg, "shut down") {
		t.Errorf("task at a shutdown's deadline: %v, want failed saying the instance shut down", res)
	}
}

// waitNoRunning waits until no task holds a running slot on s.
func waitNoRunning(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		s.tasks.mu.Lock()
		n := s.tasks.runningTotal
		s.tasks.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tasks still hold running slots after their handlers returned", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
