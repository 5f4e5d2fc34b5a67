package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/round"
)

// tasksCaps declares the tasks extension; taskElicitCaps adds elicitation.
const (
	tasksCaps       = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	taskElicitCaps  = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	taskStatusLimit = waitLimit
)

// taskCall sends a tasks/* request for the task id (with extra params
// beside taskId) to h, from a client declaring the extension.
func taskCall(tb testing.TB, h http.Handler, method, id string, extra map[string]any, opts ...mcptest.CallOption) *mcptest.Response {
	tb.Helper()
	p := map[string]any{"taskId": id}
	for k, v := range extra {
		p[k] = v
	}
	return send(tb, newClient(tb, h, tasksCaps), method, p, opts...)
}

// updates returns the params of a tasks/update carrying responses.
func updates(responses any) map[string]any { return map[string]any{"inputResponses": responses} }

// createTask calls a tool declaring caps and checks the CreateTaskResult
// (SEP-2663: flat, no result, error, inputRequests or requestState,
// integer ttlMs and pollIntervalMs, ISO 8601 times). It returns the id.
func createTask(tb testing.TB, h http.Handler, name string, args any, caps string) string {
	tb.Helper()
	res := wantResult(tb, sendTool(tb, newClient(tb, h, caps), name, args))
	if res["resultType"] != "task" {
		tb.Fatalf("tools/call %s: resultType = %v, want task: %v", name, res["resultType"], res)
	}
	checkServerInfo(tb, res)
	id, _ := res["taskId"].(string)
	if !validTaskID(id) {
		tb.Errorf("taskId %q is not 24 base64url characters (144 random bits)", id)
	}
	if res["status"] != "working" {
		tb.Errorf("status = %v, want working", res["status"])
	}
	for _, k := range []string{"result", "error", "inputRequests", "requestState", "task", "ttl", "pollInterval", "content"} {
		if _, ok := res[k]; ok {
			tb.Errorf("CreateTaskResult carries %q: %v", k, res)
		}
	}
	checkTaskFields(tb, res)
	return id
}

// checkTaskFields checks the fields every task carries.
func checkTaskFields(tb testing.TB, res map[string]any) {
	tb.Helper()
	for _, k := range []string{"ttlMs", "pollIntervalMs"} {
		v, ok := res[k].(float64)
		if !ok || v <= 0 || v != float64(int64(v)) {
			tb.Errorf("%s = %v, want a positive integer", k, res[k])
		}
	}
	for _, k := range []string{"createdAt", "lastUpdatedAt"} {
		s, _ := res[k].(string)
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil || !strings.HasSuffix(s, "Z") {
			tb.Errorf("%s = %q, want an ISO 8601 UTC time", k, s)
		}
	}
}

// getTask returns the tasks/get result for id.
func getTask(tb testing.TB, h http.Handler, id string) map[string]any {
	tb.Helper()
	res := completeResult(tb, taskCall(tb, h, "tasks/get", id, nil))
	if res["taskId"] != id {
		tb.Fatalf("tasks/get taskId = %v, want %s", res["taskId"], id)
	}
	checkTaskFields(tb, res)
	return res
}

// waitTask polls tasks/get until the task's status is one of want.
func waitTask(tb testing.TB, h http.Handler, id string, want ...mcp.TaskStatus) map[string]any {
	tb.Helper()
	deadline := time.Now().Add(taskStatusLimit)
	for {
		res := getTask(tb, h, id)
		for _, w := range want {
			if res["status"] == string(w) {
				return res
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("task %s is %v, want one of %v", id, res["status"], want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// taskBench replays, for the benchmarks, requests of a task's life that
// mcptest built once (see wireOf), with the task's id in place of
// taskPlaceholder, so that each iteration measures the server.
type taskBench struct {
	s                   *Server
	create, get, update wire
}

const taskPlaceholder = "TASK-ID-PLACEHOLDER-0000"

func newTaskBench(b *testing.B, s *Server, tool, caps string, answers any) *taskBench {
	b.Helper()
	tb := &taskBench{s: s}
	tb.create = wireOf(b, s, caps, func(c *mcptest.Client) { sendTool(b, c, tool, nil) })
	tb.get = wireOf(b, s, tasksCaps, func(c *mcptest.Client) { send(b, c, "tasks/get", map[string]any{"taskId": taskPlaceholder}) })
	tb.update = wireOf(b, s, tasksCaps, func(c *mcptest.Client) {
		send(b, c, "tasks/update", map[string]any{"taskId": taskPlaceholder, "inputResponses": answers})
	})
	return tb
}

// serve replays w for the task id and decodes the result.
func (tb *taskBench) serve(b *testing.B, w wire, id string) map[string]any {
	body := bytes.Replace(w.body, []byte(taskPlaceholder), []byte(id), 1)
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	r.Header = w.header.Clone()
	if id != "" {
		r.Header.Set(headerName, id)
	}
	rec := httptest.NewRecorder()
	tb.s.ServeHTTP(rec, r)
	var out struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Result == nil {
		b.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	return out.Result
}

// createTask starts a task and returns its id.
func (tb *taskBench) createTask(b *testing.B) string {
	res := tb.serve(b, tb.create, "")
	id, _ := res["taskId"].(string)
	if id == "" {
		b.Fatalf("tools/call = %v, want a task", res)
	}
	return id
}

// poll sends tasks/get, yielding the processor between polls, until the
// task's status is want.
func (tb *taskBench) poll(b *testing.B, id string, want mcp.TaskStatus) {
	deadline := time.Now().Add(taskStatusLimit)
	for tb.serve(b, tb.get, id)["status"] != string(want) {
		if time.Now().After(deadline) {
			b.Fatalf("task %s is not %s", id, want)
		}
		runtime.Gosched()
	}
}

// ackOf sends method (tasks/update or tasks/cancel) for the task id, with
// extra params, and checks its empty acknowledgement.
func ackOf(tb testing.TB, h http.Handler, method, id string, extra map[string]any) {
	tb.Helper()
	res := completeResult(tb, taskCall(tb, h, method, id, extra))
	for _, k := range []string{"taskId", "status", "result", "error", "inputRequests"} {
		if _, ok := res[k]; ok {
			tb.Errorf("%s ack carries %q: %v", method, k, res)
		}
	}
}

// gate is a handler that blocks until released, counting its runs.
type gate struct {
	release chan struct{}
	runs    atomic.Int32
	ctxErr  chan error
}

func newGate() *gate { return &gate{release: make(chan struct{}), ctxErr: make(chan error, 1)} }

func (g *gate) handler(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
	g.runs.Add(1)
	select {
	case <-g.release:
		return TextResult("released"), nil
	case <-ctx.Done():
		g.ctxErr <- context.Cause(ctx)
		return nil, ctx.Err()
	}
}

func TestTasksAdvertisedInDiscoverOnly(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "plain", "hi")
	discover := func() map[string]any {
		res := completeResult(t, send(t, newClient(t, s, ""), "server/discover", nil))
		caps, _ := res["capabilities"].(map[string]any)
		return caps
	}
	if caps := discover(); caps["extensions"] != nil {
		t.Errorf("without task-supporting tools discover advertises extensions: %v", caps)
	}
	if e := wantError(t, taskCall(t, s, "tasks/get", "AAAAAAAAAAAAAAAAAAAAAAAA", nil), http.StatusNotFound, mcp.MethodNotFound); e == nil {
		t.Fatal("no error")
	}
	mustAddTool(t, s, Tool{Name: "job"}, newGate().handler, RunAsTask(TaskOptional))
	caps := discover()
	ext, _ := caps["extensions"].(map[string]any)
	if _, ok := ext[mcp.TasksExtension]; !ok {
		t.Errorf("discover capabilities = %v, want extensions[%q]", caps, mcp.TasksExtension)
	}
	if _, ok := caps["tasks"]; ok {
		t.Error("discover uses the v1 capabilities.tasks slot")
	}
	if s.capabilities().Extensions != nil {
		t.Error("Capabilities() carries extensions, which a 2025-11-25 initialize would copy")
	}
	s.RemoveTool("job")
	if caps := discover(); caps["extensions"] != nil {
		t.Errorf("after removing the task tool discover still advertises %v", caps["extensions"])
	}
}

func TestTaskRegistrationChecks(t *testing.T) {
	s := newTestServer(t, nil)
	h := newGate().handler
	if err := s.AddTool(Tool{Name: "a"}, h, DeferTask()); err == nil {
		t.Error("DeferTask without Task was accepted")
	}
	if err := s.AddTool(Tool{Name: "b"}, h, RunAsTask(TaskSupport(7))); err == nil {
		t.Error("an unknown TaskSupport was accepted")
	}
	for _, o := range []TaskOptions{{Lease: time.Microsecond}, {TTL: -time.Second}, {PollInterval: -1}} {
		if _, err := New(testInfo, &Options{StateKeys: testRing(t), Logger: slog.New(slog.DiscardHandler), Tasks: o}); err == nil {
			t.Errorf("TaskOptions %+v were accepted", o)
		}
	}
}

// Without the extension: tasks/* are -32021 naming it, a task-required
// tool is refused before its handler runs, a task-optional one runs
// synchronously. With it, removed v1 methods are -32601.
func TestTaskGating(t *testing.T) {
	s := newTestServer(t, nil)
	req := newGate()
	mustAddTool(t, s, Tool{Name: "required"}, req.handler, RunAsTask(TaskRequired))
	mustAddTool(t, s, Tool{Name: "optional"}, func(ctx context.Context, r *ToolRequest) (*ToolResult, error) {
		return TextResult("sync " + r.TaskID()), nil
	}, RunAsTask(TaskOptional))
	textTool(s, t, "plain", "plain")

	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		r := send(t, newClient(t, s, ""), m, map[string]any{"taskId": "gate-test", "inputResponses": map[string]any{}})
		e := wantError(t, r, http.StatusBadRequest, mcp.MissingRequiredClientCapability)
		if !strings.Contains(string(e.Data), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
			t.Errorf("%s without the extension: data = %s, want requiredCapabilities.extensions", m, e.Data)
		}
	}
	plain := newClient(t, s, "")
	e := wantError(t, sendTool(t, plain, "required", nil), http.StatusBadRequest, mcp.MissingRequiredClientCapability)
	var data struct {
		RequiredCapabilities mcp.ClientCapabilities `json:"requiredCapabilities"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || !data.RequiredCapabilities.HasExtension(mcp.TasksExtension) {
		t.Errorf("task-required tool without the extension: data = %s, want requiredCapabilities.extensions[%q]", e.Data, mcp.TasksExtension)
	}
	if n := req.runs.Load(); n != 0 {
		t.Errorf("the task-required handler ran %d times for a caller without the extension", n)
	}
	res := completeResult(t, sendTool(t, plain, "optional", nil))
	if text, _ := toolText(t, res); text != "sync " || res["taskId"] != nil {
		t.Errorf("task-optional tool without the extension = %v, want a synchronous result and no task id", res)
	}
	// A sync-only tool stays sync for a caller with the extension, and a
	// v1 `task` param promotes nothing.
	res = completeResult(t, send(t, newClient(t, s, tasksCaps), "tools/call", map[string]any{"name": "plain", "task": map[string]any{"ttl": 60000}}))
	if text, _ := toolText(t, res); text != "plain" {
		t.Errorf("sync tool with the extension and a legacy task param = %v", res)
	}
	for _, m := range []string{"tasks/result", "tasks/list"} {
		wantError(t, taskCall(t, s, m, "x", nil), http.StatusNotFound, mcp.MethodNotFound)
	}
}

// A task's life: created before tools/call answers, working while its
// handler runs, completed with the tool result inlined.
func TestTaskLifecycle(t *testing.T) {
	s := newTestServer(t, &Options{Tasks: TaskOptions{TTL: time.Hour, PollInterval: 250 * time.Millisecond}})
	g := newGate()
	mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	id := createTask(t, s, "job", nil, tasksCaps)

	res := getTask(t, s, id)
	if res["status"] != "working" || res["ttlMs"] != float64(time.Hour.Milliseconds()) || res["pollIntervalMs"] != float64(250) {
		t.Errorf("working task = %v", res)
	}
	for _, k := range []string{"result", "error", "inputRequests", "requestState"} {
		if _, ok := res[k]; ok {
			t.Errorf("working task carries %q", k)
		}
	}
	close(g.release)
	res = waitTask(t, s, id, mcp.TaskCompleted)
	result, _ := res["result"].(map[string]any)
	if text, isErr := toolText(t, result); text != "released" || isErr {
		t.Errorf("completed task result = %v, want the tool result", res["result"])
	}
	if _, ok := res["error"]; ok {
		t.Error("completed task carries an error")
	}
	if meta, _ := result["_meta"].(map[string]any); meta["io.modelcontextprotocol/related-task"] != nil {
		t.Error("inlined result carries the v1 related-task _meta")
	}
	// Cancelling a terminal task is an idempotent ack; it stays completed.
	ackOf(t, s, "tasks/cancel", id, nil)
	if res := getTask(t, s, id); res["status"] != "completed" {
		t.Errorf("after cancelling a completed task its status is %v", res["status"])
	}
	if g.runs.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", g.runs.Load())
	}
}

// A tool error is a completed task whose result is isError; a protocol
// error or a panic is a failed task with the error inlined and no result.
func TestTaskErrors(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "tool_error"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return nil, errors.New("disk full")
	}, RunAsTask(TaskRequired))
	mustAddTool(t, s, Tool{Name: "rpc_error"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return nil, &mcp.Error{Code: -32000, Message: "backend refused", Data: map[string]any{"retry": false}}
	}, RunAsTask(TaskOptional))
	mustAddTool(t, s, Tool{Name: "panics"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		panic("boom")
	}, RunAsTask(TaskOptional))

	res := waitTask(t, s, createTask(t, s, "tool_error", nil, tasksCaps), mcp.TaskCompleted, mcp.TaskFailed)
	result, _ := res["result"].(map[string]any)
	if text, isErr := toolText(t, result); res["status"] != "completed" || !isErr || text != "disk full" {
		t.Errorf("tool error task = %v, want completed with an isError result", res)
	}
	res = waitTask(t, s, createTask(t, s, "rpc_error", nil, tasksCaps), mcp.TaskCompleted, mcp.TaskFailed)
	e, _ := res["error"].(map[string]any)
	if res["status"] != "failed" || e["code"] != float64(-32000) || e["message"] != "backend refused" || res["result"] != nil {
		t.Errorf("protocol error task = %v, want failed with the error inlined", res)
	}
	if d, _ := e["data"].(map[string]any); d["retry"] != false {
		t.Errorf("inlined error lost its data: %v", e)
	}
	res = waitTask(t, s, createTask(t, s, "panics", nil, tasksCaps), mcp.TaskCompleted, mcp.TaskFailed)
	if e, _ := res["error"].(map[string]any); res["status"] != "failed" || e["code"] != float64(mcp.InternalError) {
		t.Errorf("panicking task = %v, want failed with -32603", res)
	}
}

// tasks/cancel stops a running task: ack at once, status cancelled, the
// handler's context ended; unknown ids are -32602.
func TestTaskCancel(t *testing.T) {
	s := newTestServer(t, nil)
	g := newGate()
	mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	id := createTask(t, s, "job", nil, tasksCaps)
	ackOf(t, s, "tasks/cancel", id, nil)
	if res := getTask(t, s, id); res["status"] != "cancelled" || res["result"] != nil || res["error"] != nil {
		t.Errorf("after tasks/cancel: %v, want cancelled", res)
	}
	if err := receive(t, g.ctxErr, "the handler's context to end"); !errors.Is(err, errTaskCancelled) {
		t.Errorf("handler's context cause = %v, want the cancellation", err)
	}
	ackOf(t, s, "tasks/cancel", id, nil) // idempotent
	// The handler's late return changes nothing.
	if res := waitTask(t, s, id, mcp.TaskCancelled); res["status"] != "cancelled" {
		t.Errorf("status after the handler returned: %v", res["status"])
	}
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		for _, bad := range []string{"tasks-conformance-nonexistent-12345", "AAAAAAAAAAAAAAAAAAAAAAAA", strings.Repeat("x", 5000)} {
			wantError(t, taskCall(t, s, m, bad, updates(map[string]any{})), http.StatusBadRequest, mcp.InvalidParams)
		}
	}
	wantError(t, send(t, newClient(t, s, tasksCaps), "tasks/get", nil), http.StatusBadRequest, mcp.InvalidParams)
}

// The Mcp-Name header of tasks/* must match params.taskId.
func TestTaskRoutingHeader(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "job"}, newGate().handler, RunAsTask(TaskOptional))
	id := createTask(t, s, "job", nil, tasksCaps)
	wantError(t, taskCall(t, s, "tasks/get", id, nil, mcptest.WithHeader(headerName, "another-task")), http.StatusBadRequest, mcp.HeaderMismatch)
	wantError(t, taskCall(t, s, "tasks/get", id, nil, mcptest.WithoutHeader(headerName)), http.StatusBadRequest, mcp.HeaderMismatch)
	ackOf(t, s, "tasks/cancel", id, nil)
}

// One handler, written in the blocking style, serves both ways: as a task
// its question appears on tasks/get and the answer arrives through
// tasks/update while it waits in place; without the extension the same
// question is an input_required round.
func TestTaskInputRequired(t *testing.T) {
	s := newTestServer(t, nil)
	form := confirmForm(t, "Delete?")
	var before atomic.Int32 // code before the question
	mustAddTool(t, s, Tool{Name: "confirm"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		before.Add(1)
		res, err := req.Elicit(ctx, form)
		if err != nil {
			return nil, err
		}
		var a struct {
			OK bool `json:"ok"`
		}
		if err := res.Decode(&a); err != nil || !a.OK {
			return TextResult("kept"), nil
		}
		return TextResult("deleted"), nil
	}, RunAsTask(TaskOptional))

	id := createTask(t, s, "confirm", nil, taskElicitCaps)
	res := waitTask(t, s, id, mcp.TaskInputRequired)
	irs, _ := res["inputRequests"].(map[string]any)
	q, _ := irs["baton:0"].(map[string]any)
	if len(irs) != 1 || q["method"] != "elicitation/create" {
		t.Fatalf("input_required task inputRequests = %v, want one elicitation under baton:0", res["inputRequests"])
	}
	if p, _ := q["params"].(map[string]any); p["message"] != "Delete?" {
		t.Errorf("the task asks %v, want the handler's form", q)
	}
	// An answer that does not fit the form is refused, and nothing moves.
	bad := taskCall(t, s, "tasks/update", id, updates(map[string]any{"baton:0": map[string]any{"action": "accept", "content": map[string]any{"ok": "yes"}}}))
	if e := wantError(t, bad, http.StatusBadRequest, mcp.InvalidParams); !strings.Contains(e.Message, "baton:0") {
		t.Errorf("invalid answer error %q does not name the key", e.Message)
	}
	// Answers to keys that are not pending are ignored.
	ackOf(t, s, "tasks/update", id, updates(map[string]any{"unknown-key": map[string]any{"ignored": true}}))
	if res := getTask(t, s, id); res["status"] != "input_required" {
		t.Errorf("after an ignored answer: %v", res["status"])
	}
	ackOf(t, s, "tasks/update", id, updates(map[string]any{"baton:0": accept(true)}))
	res = waitTask(t, s, id, mcp.TaskCompleted)
	if text, _ := toolText(t, res["result"].(map[string]any)); text != "deleted" {
		t.Errorf("task result = %v, want deleted", res["result"])
	}
	// The handler returned when it asked (the question waited as the
	// task's record) and ran again from the top with the answer.
	if before.Load() != 2 {
		t.Errorf("as a task the code before the question ran %d times, want twice (asked, then run again with the answer)", before.Load())
	}
	// The same handler without the extension: an MRTR round, then the
	// answer on the retry.
	ec := newClient(t, s, `{"elicitation":{}}`)
	ir := wantInputRequired(t, sendTool(t, ec, "confirm", nil), round.AutoKey(0))
	r := sendTool(t, ec, "confirm", nil, mcptest.Resume(ir.RequestState, map[string]any{round.AutoKey(0): accept(false)}))
	if text, _ := toolText(t, completeResult(t, r)); text != "kept" {
		t.Errorf("synchronous run = %q, want kept", text)
	}
	// A task cannot ask what its client did not declare.
	id = createTask(t, s, "confirm", nil, tasksCaps)
	res = waitTask(t, s, id, mcp.TaskCompleted, mcp.TaskFailed)
	if e, _ := res["error"].(map[string]any); res["status"] != "failed" || e["code"] != float64(mcp.MissingRequiredClientCapability) {
		t.Errorf("task asking for an undeclared capability = %v, want failed with -32021", res)
	}
}

// Questions asked together are pending together and may be answered one
// tasks/update at a time; keys are never reused in a task's life.
func TestTaskPartialAnswersAndKeys(t *testing.T) {
	s := newTestServer(t, nil)
	a, b, c := confirmForm(t, "A?"), confirmForm(t, "B?"), confirmForm(t, "C?")
	mustAddTool(t, s, Tool{Name: "multi"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		two, err := req.AskAll(ctx, []mrtr.InputRequest{mrtr.ElicitRequest(a), mrtr.ElicitRequest(b)})
		if err != nil {
			return nil, err
		}
		third, err := req.Elicit(ctx, c)
		if err != nil {
			return nil, err
		}
		return TextResult(string(two[0].Elicit.Action) + "," + string(two[1].Elicit.Action) + "," + string(third.Action)), nil
	}, RunAsTask(TaskOptional))
	id := createTask(t, s, "multi", nil, taskElicitCaps)
	res := waitTask(t, s, id, mcp.TaskInputRequired)
	irs, _ := res["inputRequests"].(map[string]any)
	if len(irs) != 2 || irs["baton:0"] == nil || irs["baton:1"] == nil {
		t.Fatalf("inputRequests = %v, want baton:0 and baton:1", irs)
	}
	ackOf(t, s, "tasks/update", id, updates(map[string]any{"baton:0": accept(true)}))
	res = getTask(t, s, id)
	irs, _ = res["inputRequests"].(map[string]any)
	if res["status"] != "input_required" || len(irs) != 1 || irs["baton:1"] == nil {
		t.Fatalf("after answering baton:0 only: %v, want input_required with baton:1 alone", res)
	}
	// Answering baton:0 again is ignored; baton:1 lets the handler go on.
	ackOf(t, s, "tasks/update", id, updates(map[string]any{"baton:0": map[string]any{"action": "decline"}, "baton:1": map[string]any{"action": "decline"}}))
	res = waitTask(t, s, id, mcp.TaskInputRequired)
	for res["inputRequests"].(map[string]any)["baton:2"] == nil {
		res = waitTask(t, s, id, mcp.TaskInputRequired)
	}
	if irs := res["inputRequests"].(map[string]any); len(irs) != 1 {
		t.Errorf("third question: inputRequests = %v, want baton:2 alone (a fresh key)", irs)
	}
	ackOf(t, s, "tasks/update", id, updates(map[string]any{"baton:2": map[string]any{"action": "cancel"}}))
	res = waitTask(t, s, id, mcp.TaskCompleted)
	if text, _ := toolText(t, res["result"].(map[string]any)); text != "accept,decline,cancel" {
		t.Errorf("answers reached the handler as %q, want accept,decline,cancel", text)
	}
}

// A DeferTask tool finishes its MRTR rounds first and becomes a task when
// it says so; the CreateTaskResult carries no requestState.
func TestDeferredTask(t *testing.T) {
	s := newTestServer(t, nil)
	form := confirmForm(t, "Name?")
	mustAddTool(t, s, Tool{Name: "deferred"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if req.TaskID() != "" {
			return nil, errors.New("a task id before StartTask")
		}
		res, err := req.Elicit(ctx, form, WithKey("user_name"))
		if err != nil {
			return nil, err
		}
		if err := req.StartTask(); err != nil {
			return nil, err
		}
		id := req.TaskID()
		if err := req.StartTask(); err != nil || req.TaskID() != id { // idempotent
			return nil, errors.New("second StartTask changed the task")
		}
		return TextResult("answered " + string(res.Action) + " in task " + id), nil
	}, RunAsTask(TaskRequired), DeferTask())

	c := newClient(t, s, taskElicitCaps)
	ir := wantInputRequired(t, sendTool(t, c, "deferred", nil), "user_name")
	res := wantResult(t, sendTool(t, c, "deferred", nil, mcptest.Resume(ir.RequestState, map[string]any{"user_name": accept(true)})))
	if res["resultType"] != "task" || res["requestState"] != nil || res["inputRequests"] != nil {
		t.Fatalf("round 2 = %v, want a CreateTaskResult without requestState", res)
	}
	id := res["taskId"].(string)
	res = waitTask(t, s, id, mcp.TaskCompleted)
	if text, _ := toolText(t, res["result"].(map[string]any)); text != "answered accept in task "+id {
		t.Errorf("task result %q", text)
	}
}

// A task belongs to the principal that created it: to anyone else it does
// not exist.
func TestTaskPrincipal(t *testing.T) {
	s := newTestServer(t, nil)
	g := newGate()
	mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	as := func(p string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.ServeHTTP(w, r.WithContext(ContextWithPrincipal(r.Context(), p)))
		})
	}
	id := createTask(t, as("alice"), "job", nil, tasksCaps)
	for _, h := range []http.Handler{as("mallory"), s} {
		for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
			e := wantError(t, taskCall(t, h, m, id, updates(map[string]any{})), http.StatusBadRequest, mcp.InvalidParams)
			if e.Message != unknownTask("").Message {
				t.Errorf("another principal's %s: %q, want the unknown-task error", m, e.Message)
			}
		}
	}
	if res := getTask(t, as("alice"), id); res["status"] != "working" {
		t.Errorf("after another principal's cancel the task is %v", res["status"])
	}
	close(g.release)
	waitTask(t, as("alice"), id, mcp.TaskCompleted)
}

// A task outlives its handler no longer than its TTL: the handler is
// stopped and the task failed (seen so for the leeway), then it is gone.
func TestTaskTTL(t *testing.T) {
	const ttl, leeway = 300 * time.Millisecond, 400 * time.Millisecond
	s := newTestServer(t, &Options{Tasks: TaskOptions{TTL: ttl, Leeway: leeway}})
	g := newGate()
	mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	id := createTask(t, s, "job", nil, tasksCaps)
	if res := getTask(t, s, id); res["ttlMs"] != float64(ttl.Milliseconds()) {
		t.Errorf("ttlMs = %v, want %d", res["ttlMs"], ttl.Milliseconds())
	}
	if err := receive(t, g.ctxErr, "the handler's context to end at the TTL"); !errors.Is(err, errTaskExpired) {
		t.Errorf("handler's context cause = %v, want the TTL", err)
	}
	res := waitTask(t, s, id, mcp.TaskFailed)
	if e, _ := res["error"].(map[string]any); !strings.Contains(e["message"].(string), "time to live") {
		t.Errorf("task stopped at its TTL = %v, want failed saying so", res)
	}
	deadline := time.Now().Add(waitLimit)
	for {
		r := taskCall(t, s, "tasks/get", id, nil)
		if r.Status != http.StatusOK {
			wantError(t, r, http.StatusBadRequest, mcp.InvalidParams)
			return // expired: gone
		}
		if time.Now().After(deadline) {
			t.Fatal("the task outlived its TTL and leeway")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Closing the server fails the tasks it runs, at once.
func TestTaskServerClose(t *testing.T) {
	store := NewMemoryTaskStore(nil)
	a := newTestServer(t, &Options{Tasks: TaskOptions{Store: store}})
	b := newTestServer(t, &Options{Tasks: TaskOptions{Store: store}})
	g := newGate()
	for _, s := range []*Server{a, b} {
		mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	}
	id := createTask(t, a, "job", nil, tasksCaps)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	res := getTask(t, b, id)
	if e, _ := res["error"].(map[string]any); res["status"] != "failed" || !strings.Contains(e["message"].(string), "shut down") {
		t.Errorf("task of a closed instance = %v, want failed saying it shut down", res)
	}
	if err := receive(t, g.ctxErr, "the handler's context to end"); !errors.Is(err, errServerClosed) {
		t.Errorf("handler's context cause = %v, want the server closing", err)
	}
	// A closed instance takes no new task: 503, for a balancer to retry
	// elsewhere.
	wantError(t, sendTool(t, newClient(t, a, tasksCaps), "job", nil), http.StatusServiceUnavailable, mcp.InternalError)
}

// Two instances share a store: the task runs where it was created, any
// instance reads it, and an update or cancel sent to the other reaches it.
func TestTaskAcrossInstances(t *testing.T) {
	store := NewMemoryTaskStore(nil)
	a := newTestServer(t, &Options{Tasks: TaskOptions{Store: store}})
	b := newTestServer(t, &Options{Tasks: TaskOptions{Store: store}})
	t.Cleanup(func() { a.Close(); b.Close() })
	form := confirmForm(t, "Go?")
	var ranOn atomic.Pointer[string]
	for name, s := range map[string]*Server{"a": a, "b": b} {
		mustAddTool(t, s, Tool{Name: "ask"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			ranOn.Store(&name)
			res, err := req.Elicit(ctx, form)
			if err != nil {
				return nil, err
			}
			return TextResult("answered " + string(res.Action)), nil
		}, RunAsTask(TaskOptional))
	}
	id := createTask(t, a, "ask", nil, taskElicitCaps)
	waitTask(t, b, id, mcp.TaskInputRequired)
	ackOf(t, b, "tasks/update", id, updates(map[string]any{"baton:0": accept(true)}))
	res := waitTask(t, b, id, mcp.TaskCompleted)
	// The question waited as the record; the answering instance ran the
	// handler again.
	if text, _ := toolText(t, res["result"].(map[string]any)); text != "answered accept" || *ranOn.Load() != "b" {
		t.Errorf("result %q, ran on %s; want answered accept, on b (the instance answered)", text, *ranOn.Load())
	}
	id = createTask(t, a, "ask", nil, taskElicitCaps)
	waitTask(t, a, id, mcp.TaskInputRequired)
	ackOf(t, b, "tasks/cancel", id, nil)
	if res := waitTask(t, a, id, mcp.TaskCancelled); res["inputRequests"] != nil {
		t.Errorf("cancelled task still shows its questions: %v", res)
	}
}

// skewedPair returns two servers sharing the task store, with a 30 s
// lease and 1 s leeway, b's clock running ahead of a's by skew, and the
// task tool "job" on both, held by g.
func skewedPair(t *testing.T, store TaskStore) (a, b *Server, skew *atomic.Int64, g *gate) {
	t.Helper()
	skew = new(atomic.Int64)
	a = newTestServer(t, &Options{Tasks: TaskOptions{Store: store, Lease: 30 * time.Second, Leeway: time.Second}})
	b = newTestServer(t, &Options{Tasks: TaskOptions{Store: store, Lease: 30 * time.Second, Leeway: time.Second},
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	t.Cleanup(func() { a.Close(); b.Close() })
	g = newGate()
	for _, s := range []*Server{a, b} {
		mustAddTool(t, s, Tool{Name: "job"}, g.handler, RunAsTask(TaskOptional))
	}
	return a, b, skew, g
}

// An instance that stops renewing its lease (it died, or lost the store)
// has its tasks failed by the next instance that reads them, and if it
// is still alive, it stops their handlers.
func TestTaskLeaseLapse(t *testing.T) {
	a, b, skew, g := skewedPair(t, NewMemoryTaskStore(nil))
	id := createTask(t, a, "job", nil, tasksCaps)
	// Within lease plus leeway, the task is working.
	skew.Store(int64(30*time.Second + 500*time.Millisecond))
	if res := getTask(t, b, id); res["status"] != "working" {
		t.Fatalf("within the leeway: %v", res["status"])
	}
	// Past lease and leeway, with a's heartbeat stale too, b only suspects
	// the task: it is failed once a stays silent for LostGrace (default
	// lease + 10 s) more.
	skew.Store(int64(32 * time.Second))
	if res := getTask(t, b, id); res["status"] != "working" {
		t.Fatalf("lease lapsed, within the grace: %v, want working", res["status"])
	}
	for b.tasks.storeHealthySince().IsZero() { // b judges once its own heartbeat landed
		time.Sleep(time.Millisecond)
	}
	skew.Store(int64(33 * time.Second))
	if res := getTask(t, b, id); res["status"] != "working" {
		t.Fatalf("lease lapsed, suspected: %v, want working", res["status"])
	}
	skew.Store(int64(72 * time.Second))
	if res := getTask(t, b, id); res["status"] != "working" {
		t.Fatalf("lease lapsed, within the grace: %v, want working", res["status"])
	}
	skew.Store(int64(73*time.Second + 500*time.Millisecond))
	res := getTask(t, b, id)
	e, _ := res["error"].(map[string]any)
	if res["status"] != "failed" || e["code"] != float64(mcp.InternalError) || !strings.Contains(e["message"].(string), "lease") || !strings.Contains(e["message"].(string), "gone") {
		t.Fatalf("after the lease lapsed and the grace passed: %v, want failed with an error about the instance gone", res)
	}
	// a notices when it next renews (every lease/3: here, signal it).
	a.tasks.deliver(id)
	if err := receive(t, g.ctxErr, "the stale handler to stop"); !errors.Is(err, errTaskLost) {
		t.Errorf("handler's context cause = %v, want the lost lease", err)
	}
	if res := getTask(t, a, id); res["status"] != "failed" {
		t.Errorf("the instance that lost the lease rewrote the task: %v", res["status"])
	}
}

// Notifications of a task-mode call reach the request's stream until the
// task starts, and are dropped after (a task has no stream).
func TestTaskNotificationsDropped(t *testing.T) {
	s := newTestServer(t, nil)
	sent := make(chan error, 1)
	mustAddTool(t, s, Tool{Name: "progress"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		sent <- req.Progress(ctx, 1, 2, "halfway")
		return TextResult("done"), nil
	}, RunAsTask(TaskOptional))
	r := sendTool(t, newClient(t, s, tasksCaps), "progress", nil, mcptest.WithProgressToken("p1"))
	id, _ := wantResult(t, r)["taskId"].(string)
	if err := receive(t, sent, "the progress call"); err != nil {
		t.Errorf("Progress in a task: %v, want nil (dropped)", err)
	}
	waitTask(t, s, id, mcp.TaskCompleted)
}

// BenchmarkTaskCreateAndPoll serves a tools/call that becomes a task (its
// handler answers at once), then tasks/get until the task is completed:
// the cost of a task next to BenchmarkToolsCall.
func BenchmarkTaskCreateAndPoll(b *testing.B) {
	s := newTestServer(b, nil)
	mustAddTool(b, s, Tool{Name: "job"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return TextResult("done"), nil
	}, RunAsTask(TaskOptional))
	tb := newTaskBench(b, s, "job", tasksCaps, nil)
	b.ReportAllocs()
	for b.Loop() {
		tb.poll(b, tb.createTask(b), mcp.TaskCompleted)
	}
}

// BenchmarkTaskInputRound runs a task through one question: create, poll
// until input_required, tasks/update, poll until completed.
func BenchmarkTaskInputRound(b *testing.B) {
	s := newTestServer(b, nil)
	form := confirmForm(b, "Go?")
	mustAddTool(b, s, Tool{Name: "ask"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		res, err := req.Elicit(ctx, form)
		if err != nil {
			return nil, err
		}
		return TextResult(string(res.Action)), nil
	}, RunAsTask(TaskOptional))
	tb := newTaskBench(b, s, "ask", taskElicitCaps, map[string]any{"baton:0": accept(true)})
	b.ReportAllocs()
	for b.Loop() {
		id := tb.createTask(b)
		tb.poll(b, id, mcp.TaskInputRequired)
		tb.serve(b, tb.update, id)
		tb.poll(b, id, mcp.TaskCompleted)
	}
}

// Tasks over stdio: the task outlives its tools/call (whose context ends
// once answered) and is answered through tasks/update on the same pipe.
func TestTaskOverStdio(t *testing.T) {
	s := newTestServer(t, nil)
	form := confirmForm(t, "Go?")
	mustAddTool(t, s, Tool{Name: "ask"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		res, err := req.Elicit(ctx, form)
		if err != nil {
			return nil, err
		}
		return TextResult("answered " + string(res.Action)), nil
	}, RunAsTask(TaskOptional))
	st := startStdio(t, context.Background(), s)
	caps := map[string]any{metaClientCaps: json.RawMessage(taskElicitCaps)}
	st.send(toolLine(t, 1, "ask", nil, caps))
	var created struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := json.Unmarshal(st.next().Result, &created); err != nil || created.ResultType != "task" {
		t.Fatalf("tools/call over stdio: %+v %v, want a task", created, err)
	}
	poll := func(want mcp.TaskStatus) map[string]any {
		deadline := time.Now().Add(waitLimit)
		for {
			st.request(2, "tasks/get", map[string]any{"taskId": created.TaskID}, caps)
			res := decodeObject(t, st.next().Result)
			if res["status"] == string(want) {
				return res
			}
			if time.Now().After(deadline) {
				t.Fatalf("task is %v, want %s", res["status"], want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	poll(mcp.TaskInputRequired)
	st.request(3, "tasks/update", map[string]any{"taskId": created.TaskID, "inputResponses": map[string]any{"baton:0": accept(true)}}, caps)
	if r := st.next(); r.Error != nil {
		t.Fatalf("tasks/update: %+v", r.Error)
	}
	res := poll(mcp.TaskCompleted)
	if text, _ := toolText(t, res["result"].(map[string]any)); text != "answered accept" {
		t.Errorf("result %q", text)
	}
	if _, err := st.closeAndDrain(); err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
}
