package redisfleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// waitLimit bounds every wait for something the test expects to happen.
const waitLimit = 10 * time.Second

const taskCaps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// killable is a store an instance loses at once when killed: from then on
// every operation fails, as if the process were gone (it renews nothing).
type killable struct {
	server.TaskStore
	dead       atomic.Bool
	dropSignal atomic.Bool // lose every Signal (pub/sub messages go missing)
}

var errDead = errors.New("this instance is dead")

func (k *killable) Create(ctx context.Context, r *server.TaskRecord) error {
	if k.dead.Load() {
		return errDead
	}
	return k.TaskStore.Create(ctx, r)
}

func (k *killable) Get(ctx context.Context, id string) (*server.TaskRecord, error) {
	if k.dead.Load() {
		return nil, errDead
	}
	return k.TaskStore.Get(ctx, id)
}

func (k *killable) Update(ctx context.Context, id string, fn func(*server.TaskRecord) error) (*server.TaskRecord, error) {
	if k.dead.Load() {
		return nil, errDead
	}
	return k.TaskStore.Update(ctx, id, fn)
}

func (k *killable) Beat(ctx context.Context, instance string, until time.Time) error {
	if k.dead.Load() {
		return errDead
	}
	return k.TaskStore.(server.TaskHeartbeats).Beat(ctx, instance, until)
}

func (k *killable) LastBeat(ctx context.Context, instance string) (time.Time, error) {
	if k.dead.Load() {
		return time.Time{}, errDead
	}
	return k.TaskStore.(server.TaskHeartbeats).LastBeat(ctx, instance)
}

func (k *killable) Signal(ctx context.Context, owner, id string) error {
	if k.dead.Load() {
		return errDead
	}
	if k.dropSignal.Load() {
		return nil
	}
	return k.TaskStore.Signal(ctx, owner, id)
}

// instance is one server of a fleet sharing a Redis task store.
type instance struct {
	srv   *server.Server
	store *killable
	ran   atomic.Int32 // handler runs on this instance
	hold  atomic.Bool  // "work" and "redo" run until their context ends
}

func newInstance(t testing.TB, rs *testredis.Server, lease time.Duration) *instance {
	t.Helper()
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k", Secret: []byte(strings.Repeat("s", 32))})
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{store: &killable{TaskStore: redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "fleet:tasks:"}).Tasks()}}
	in.srv, err = server.New(mcp.Implementation{Name: "fleet", Version: "1"}, &server.Options{
		StateKeys: ring,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Tasks:     server.TaskOptions{Store: in.store, Lease: lease, Leeway: lease / 5, LostGrace: lease},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.srv.Close() })
	form, err := elicit.NewForm("Proceed?", elicit.Boolean("ok").Required())
	if err != nil {
		t.Fatal(err)
	}
	err = in.srv.AddTool(server.Tool{Name: "ask"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		in.ran.Add(1)
		res, err := req.Elicit(ctx, form)
		if err != nil {
			return nil, err
		}
		return server.TextResult("answered " + string(res.Action)), nil
	}, server.RunAsTask(server.TaskRequired))
	if err != nil {
		t.Fatal(err)
	}
	work := func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		in.ran.Add(1)
		if in.hold.Load() {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return server.TextResult("worked"), nil
	}
	if err := in.srv.AddTool(server.Tool{Name: "work"}, work, server.RunAsTask(server.TaskRequired)); err != nil {
		t.Fatal(err)
	}
	if err := in.srv.AddTool(server.Tool{Name: "redo"}, work, server.RunAsTask(server.TaskRequired), server.TaskMayRerun()); err != nil {
		t.Fatal(err)
	}
	return in
}

// send serves one request on s in process, through mcptest, from a
// client declaring taskCaps; it returns the result or the error code.
func send(t testing.TB, s http.Handler, method string, params map[string]any) (map[string]any, int) {
	t.Helper()
	var caps mcp.ClientCapabilities
	if err := json.Unmarshal([]byte(taskCaps), &caps); err != nil {
		t.Fatal(err)
	}
	c, err := mcptest.New(mcptest.Handler(s), &mcptest.Options{Capabilities: &caps})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Do(context.Background(), method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if r.Error != nil {
		return nil, r.Error.Code
	}
	var res map[string]any
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("%s: result is not an object: %s", method, r.Body)
	}
	return res, 0
}

func create(t testing.TB, in *instance) string {
	t.Helper()
	return createTool(t, in, "ask")
}

func createTool(t testing.TB, in *instance, tool string) string {
	t.Helper()
	res, code := send(t, in.srv, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
	id, _ := res["taskId"].(string)
	if code != 0 || res["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call = %v (error %d), want a CreateTaskResult", res, code)
	}
	return id
}

func get(t testing.TB, in *instance, id string) map[string]any {
	t.Helper()
	res, code := send(t, in.srv, "tasks/get", map[string]any{"taskId": id})
	if code != 0 {
		t.Fatalf("tasks/get: error %d", code)
	}
	return res
}

// waitStatus polls tasks/get on in until the status is want.
func waitStatus(t testing.TB, in *instance, id string, want mcp.TaskStatus) map[string]any {
	t.Helper()
	return pollStatus(t, in, id, want, 10*time.Millisecond)
}

// pollStatus is waitStatus pausing pause between polls (0: yield the
// processor, for benchmarks).
func pollStatus(t testing.TB, in *instance, id string, want mcp.TaskStatus, pause time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		res := get(t, in, id)
		if res["status"] == string(want) {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %v, want %s", id, res["status"], want)
		}
		if pause == 0 {
			runtime.Gosched()
		} else {
			time.Sleep(pause)
		}
	}
}

func resultText(res map[string]any) string {
	r, _ := res["result"].(map[string]any)
	blocks, _ := r["content"].([]any)
	if len(blocks) == 0 {
		return ""
	}
	b, _ := blocks[0].(map[string]any)
	s, _ := b["text"].(string)
	return s
}

var answer = map[string]any{"baton:0": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}

// A task created on one instance is read, answered and cancelled through
// another: the answer and the cancellation reach the instance running it
// over Redis pub/sub.
func TestTasksAcrossInstances(t *testing.T) {
	rs := testredis.Start(t)
	a, b := newInstance(t, rs, 15*time.Second), newInstance(t, rs, 15*time.Second)

	id := create(t, a)
	waitStatus(t, b, id, mcp.TaskInputRequired)
	if _, code := send(t, b.srv, "tasks/update", map[string]any{"taskId": id, "inputResponses": answer}); code != 0 {
		t.Fatalf("tasks/update on b: error %d", code)
	}
	res := waitStatus(t, b, id, mcp.TaskCompleted)
	// The handler returned when it asked; the answering instance ran it
	// again with the answer.
	if text := resultText(res); text != "answered accept" || a.ran.Load() != 1 || b.ran.Load() != 1 {
		t.Errorf("result %q, runs a=%d b=%d; want answered accept, asked on a, finished on b", text, a.ran.Load(), b.ran.Load())
	}

	id = create(t, a)
	waitStatus(t, b, id, mcp.TaskInputRequired)
	if _, code := send(t, b.srv, "tasks/cancel", map[string]any{"taskId": id}); code != 0 {
		t.Fatalf("tasks/cancel on b: error %d", code)
	}
	waitStatus(t, a, id, mcp.TaskCancelled)
	// Another principal, on any instance, does not see the task.
	as := func(p string, s *server.Server) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.ServeHTTP(w, r.WithContext(server.ContextWithPrincipal(r.Context(), p)))
		})
	}
	if _, code := send(t, as("mallory", b.srv), "tasks/get", map[string]any{"taskId": id}); code != -32602 {
		t.Errorf("another principal's tasks/get: error %d, want -32602", code)
	}
}

// Pub/sub is only a wake-up: when the message is lost, the running
// instance still finds the answer when it rereads the task (every
// lease/3).
func TestTasksLostSignal(t *testing.T) {
	rs := testredis.Start(t)
	a, b := newInstance(t, rs, 600*time.Millisecond), newInstance(t, rs, 600*time.Millisecond)
	b.store.dropSignal.Store(true)
	id := create(t, a)
	waitStatus(t, b, id, mcp.TaskInputRequired)
	if _, code := send(t, b.srv, "tasks/update", map[string]any{"taskId": id, "inputResponses": answer}); code != 0 {
		t.Fatalf("tasks/update: error %d", code)
	}
	if res := waitStatus(t, b, id, mcp.TaskCompleted); resultText(res) != "answered accept" {
		t.Errorf("result %v", res["result"])
	}
}

// An instance that dies stops renewing the leases of its tasks and its
// heartbeat; once a lease lapses and the owner stays silent for the grace,
// the next instance to read a task it was running marks it failed, with
// an error saying so, instead of leaving it working forever.
func TestTasksInstanceDies(t *testing.T) {
	rs := testredis.Start(t)
	const lease = time.Second
	a, b := newInstance(t, rs, lease), newInstance(t, rs, lease)
	a.hold.Store(true)
	id := createTool(t, a, "work")
	waitStatus(t, b, id, mcp.TaskWorking)
	a.store.dead.Store(true)
	killed := time.Now()
	res := waitStatus(t, b, id, mcp.TaskFailed)
	// The last renewal was at most lease/3 before the death, so the lease
	// ran at least 2/3 of it past the death (plus the leeway).
	if since := time.Since(killed); since < 2*lease/3 {
		t.Errorf("failed %v after the instance died, before its lease could have lapsed", since)
	}
	e, _ := res["error"].(map[string]any)
	if msg, _ := e["message"].(string); e["code"] != float64(-32603) || !strings.Contains(msg, "lease") || res["result"] != nil {
		t.Errorf("task of the dead instance = %v, want failed with -32603 naming the lease", res)
	}
	// Answers and cancellations to it are acknowledged and change nothing.
	for _, m := range []string{"tasks/update", "tasks/cancel"} {
		if _, code := send(t, b.srv, m, map[string]any{"taskId": id, "inputResponses": answer}); code != 0 {
			t.Errorf("%s on the failed task: error %d, want an ack", m, code)
		}
	}
	if res := get(t, b, id); res["status"] != "failed" {
		t.Errorf("after update and cancel: %v", res["status"])
	}
}

// BenchmarkTaskAcrossInstances runs one task through Redis: created on a,
// polled on b until input_required, answered on b, polled on b until
// completed (the answer reaches a over pub/sub).
func BenchmarkTaskAcrossInstances(b *testing.B) {
	rs := testredis.Start(b)
	const lease = 15 * time.Second
	a, o := newInstance(b, rs, lease), newInstance(b, rs, lease)
	// Every benchmark prints what it changes from the defaults.
	b.Logf("optionsChanged: server.TaskOptions{Lease: %v, Leeway: %v, LostGrace: %v}; everything else at the defaults", lease, lease/5, lease)
	b.ReportAllocs()
	for b.Loop() {
		id := create(b, a)
		pollStatus(b, o, id, mcp.TaskInputRequired, 0)
		if _, code := send(b, o.srv, "tasks/update", map[string]any{"taskId": id, "inputResponses": answer}); code != 0 {
			b.Fatalf("tasks/update: error %d", code)
		}
		pollStatus(b, o, id, mcp.TaskCompleted, 0)
	}
}

// A task waiting for its answer is its record: the instance that ran it
// shuts down (its server closed, every context of its own ended), and
// the answer through another instance completes the task there.
func TestTasksAnswerOutlivesItsInstance(t *testing.T) {
	rs := testredis.Start(t)
	a, b := newInstance(t, rs, 15*time.Second), newInstance(t, rs, 15*time.Second)
	ids := []string{create(t, a), create(t, a)}
	for _, id := range ids {
		waitStatus(t, b, id, mcp.TaskInputRequired)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if err := a.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with only waiting tasks: %v", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("shutdown with only waiting tasks took %v, want at once", d)
	}
	_ = a.srv.Close()
	for _, id := range ids {
		if res := get(t, b, id); res["status"] != "input_required" {
			t.Fatalf("after a shut down: task %s is %v, want still input_required", id, res["status"])
		}
		if _, code := send(t, b.srv, "tasks/update", map[string]any{"taskId": id, "inputResponses": answer}); code != 0 {
			t.Fatalf("tasks/update on b: error %d", code)
		}
		if res := waitStatus(t, b, id, mcp.TaskCompleted); resultText(res) != "answered accept" {
			t.Errorf("result %v, want answered accept", res["result"])
		}
	}
	if a.ran.Load() != 2 || b.ran.Load() != 2 {
		t.Errorf("runs a=%d b=%d, want 2 and 2 (asked on a, finished on b)", a.ran.Load(), b.ran.Load())
	}
}

// A task whose tool may run again (TaskMayRerun) is run again by another
// instance when the one running it dies, and says so; one whose tool may
// not is failed (TestTasksInstanceDies).
func TestTasksRerunAfterDeath(t *testing.T) {
	rs := testredis.Start(t)
	const lease = time.Second
	a, b := newInstance(t, rs, lease), newInstance(t, rs, lease)
	a.hold.Store(true)
	id := createTool(t, a, "redo")
	waitStatus(t, b, id, mcp.TaskWorking)
	a.store.dead.Store(true)
	res := waitStatus(t, b, id, mcp.TaskCompleted)
	if resultText(res) != "worked" || a.ran.Load() != 1 || b.ran.Load() != 1 {
		t.Errorf("result %v, runs a=%d b=%d; want worked, run again once on b", res["result"], a.ran.Load(), b.ran.Load())
	}
	// The re-run is on the record (its status message is gone with
	// completion; the count stays).
	rec, err := redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "fleet:tasks:"}).Tasks().Get(context.Background(), id)
	if err != nil || rec.Reruns != 1 {
		t.Errorf("record %+v (%v), want Reruns 1", rec, err)
	}
}
