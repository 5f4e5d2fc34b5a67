package mcptest_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// newTaskServer serves task tools: "order" asks a name (position key),
// then a size (WithKey "size"), then samples, and answers with all three;
// "block" waits until its task is cancelled; "rekey" asks twice under the
// same key; "sync" is a plain tool.
func newTaskServer(t *testing.T) (*server.Server, chan error) {
	t.Helper()
	ring, err := mrtr.NewKeyRing(sharedKey)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(mcp.Implementation{Name: "tasks", Version: "1"}, &server.Options{
		StateKeys: ring, Logger: slog.New(slog.DiscardHandler),
		Tasks: server.TaskOptions{PollInterval: 5 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	nameQ := form(t, "Your name?", elicit.String("name").Required())
	sizeQ := form(t, "Size?", elicit.Enum("size", "small", "large").Required())
	task := server.RunAsTask(server.TaskOptional)
	if err := srv.AddTool(server.Tool{Name: "order"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var a struct {
			Name string `json:"name"`
			Size string `json:"size"`
		}
		res, err := req.Elicit(ctx, nameQ)
		if err != nil {
			return nil, err
		}
		if err := res.Decode(&a); err != nil {
			return nil, err
		}
		if res, err = req.Elicit(ctx, sizeQ, server.WithKey("size")); err != nil {
			return nil, err
		}
		if err := res.Decode(&a); err != nil {
			return nil, err
		}
		msg, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Block{mcp.Text("a greeting")}}}})
		if err != nil {
			return nil, err
		}
		return server.TextResult(a.Name + " " + a.Size + " " + msg.Content[0].Text), nil
	}, task); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	if err := srv.AddTool(server.Tool{Name: "block"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil, ctx.Err()
	}, task); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddTool(server.Tool{Name: "rekey"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		for range 2 {
			if _, err := req.Elicit(ctx, nameQ, server.WithKey("name")); err != nil {
				return nil, err
			}
		}
		return server.TextResult("asked twice"), nil
	}, task); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddTool(server.Tool{Name: "sync"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("done"), nil
	}); err != nil {
		t.Fatal(err)
	}
	return srv, ended
}

func taskUser(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
	if req.Message == "Size?" {
		return mcptest.Accept(map[string]any{"size": "large"})
	}
	return mcptest.Accept(map[string]any{"name": "Ada"})
}

func sampler(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: []mcp.Block{mcp.Text("hello")}, Model: "test"}, nil
}

// CallTool on a task tool, with the extension declared, polls the task to
// its end, answering its questions with the callbacks; without the
// extension the same tool runs in rounds and ends the same.
func TestCallToolDrivesTask(t *testing.T) {
	srv, _ := newTaskServer(t)
	ctx := testContext(t)
	var keys []string
	opts := func(tasks bool) *mcptest.Options {
		return &mcptest.Options{Tasks: tasks, Sampling: sampler,
			Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
				keys = append(keys, mcptest.InputKey(ctx))
				return taskUser(ctx, req)
			}}
	}
	for _, tasks := range []bool{true, false} {
		keys = nil
		c := newClient(t, mcptest.Handler(srv), opts(tasks))
		res, err := c.CallTool(ctx, "order", nil)
		if err != nil {
			t.Fatalf("tasks=%v: %v", tasks, err)
		}
		if res.Text() != "Ada large hello" {
			t.Fatalf("tasks=%v: %q", tasks, res.Text())
		}
		// The same keys in a task as in rounds: baton:0 by position, and
		// the handler's own.
		if strings.Join(keys, ",") != "baton:0,size" {
			t.Fatalf("tasks=%v: keys %v, want baton:0 and size", tasks, keys)
		}
		if rounds := len(res.Exchange.Rounds); (tasks && rounds != 1) || (!tasks && rounds != 4) {
			t.Fatalf("tasks=%v: %d requests before the result", tasks, rounds)
		}
	}
}

// The handle: StartTask returns as soon as the task exists; Get shows its
// questions, Answer answers them with the callbacks, Update sends answers
// as given, Wait ends it.
func TestTaskHandle(t *testing.T) {
	srv, _ := newTaskServer(t)
	ctx := testContext(t)
	c := newClient(t, mcptest.Handler(srv), &mcptest.Options{Tasks: true, Elicitation: taskUser, Sampling: sampler})
	task, err := c.StartTask(ctx, "order", nil)
	if err != nil {
		t.Fatal(err)
	}
	if task.ID == "" || task.Created.Status != mcp.TaskWorking {
		t.Fatalf("created %+v", task.Created)
	}
	st := waitStatus(t, task, mcp.TaskInputRequired)
	if len(st.InputRequests) != 1 || st.InputRequests[0].Key != "baton:0" || st.InputRequests[0].Elicitation.Message != "Your name?" {
		t.Fatalf("first question %+v", st.InputRequests)
	}
	if _, err := task.Answer(ctx, st); err != nil {
		t.Fatal(err)
	}
	st = waitKey(t, task, "size")
	// An answer the schema refuses is refused by the server.
	err = task.Update(ctx, map[string]any{"size": elicit.Result{Action: elicit.ActionAccept, Content: []byte(`{"size":"huge"}`)}})
	var rpcErr *mcptest.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
		t.Fatalf("a wrong size: %v, want -32602", err)
	}
	if err := task.Update(ctx, map[string]any{"size": map[string]any{"action": "accept", "content": map[string]any{"size": "small"}}}); err != nil {
		t.Fatal(err)
	}
	res, err := task.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "Ada small hello" {
		t.Fatalf("result %q", res.Text())
	}
	if st, err := task.Get(ctx); err != nil || st.Status != mcp.TaskCompleted || st.Result == nil {
		t.Fatalf("after Wait: %v %+v", err, st)
	}
}

// Cancel ends the task: the handler's context ends, and Wait reports
// ErrTaskCancelled.
func TestTaskCancel(t *testing.T) {
	srv, ended := newTaskServer(t)
	ctx := testContext(t)
	c := newClient(t, mcptest.Handler(srv), &mcptest.Options{Tasks: true})
	task, err := c.StartTask(ctx, "block", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Wait(ctx); !errors.Is(err, mcptest.ErrTaskCancelled) {
		t.Fatalf("Wait: %v, want ErrTaskCancelled", err)
	}
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("the handler's context did not end")
	}
	if err := task.Cancel(ctx); err != nil {
		t.Fatalf("cancelling again: %v", err)
	}
}

// A key the handler chose is unique for the task's life: asking under it
// again fails the handler's question (the task ends with the error).
func TestTaskKeyReuseRefused(t *testing.T) {
	srv, _ := newTaskServer(t)
	ctx := testContext(t)
	c := newClient(t, mcptest.Handler(srv), &mcptest.Options{Tasks: true, Elicitation: taskUser})
	res, err := c.CallTool(ctx, "rekey", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text(), `"name" was already used in this task`) {
		t.Fatalf("result %v %q, want an error naming the reused key", res.IsError, res.Text())
	}
}

// StartTask on a tool that answers at once says so; so does one on a
// client that did not declare the extension.
func TestStartTaskWithoutTask(t *testing.T) {
	srv, _ := newTaskServer(t)
	ctx := testContext(t)
	c := newClient(t, mcptest.Handler(srv), &mcptest.Options{Tasks: true})
	if _, err := c.StartTask(ctx, "sync", nil); !errors.Is(err, mcptest.ErrNoTask) {
		t.Fatalf("a plain tool: %v, want ErrNoTask", err)
	}
	c = newClient(t, mcptest.Handler(srv), &mcptest.Options{Elicitation: taskUser, Sampling: sampler})
	if _, err := c.StartTask(ctx, "order", nil); !errors.Is(err, mcptest.ErrNoTask) {
		t.Fatalf("without the extension: %v, want ErrNoTask", err)
	}
}

// waitStatus polls until the task has status want.
func waitStatus(t *testing.T, task *mcptest.Task, want mcp.TaskStatus) *mcptest.TaskStatus {
	t.Helper()
	return pollTask(t, task, func(st *mcptest.TaskStatus) bool { return st.Status == want })
}

// waitKey polls until the task asks under key.
func waitKey(t *testing.T, task *mcptest.Task, key string) *mcptest.TaskStatus {
	t.Helper()
	return pollTask(t, task, func(st *mcptest.TaskStatus) bool {
		return st.Status == mcp.TaskInputRequired && len(st.InputRequests) == 1 && st.InputRequests[0].Key == key
	})
}

func pollTask(t *testing.T, task *mcptest.Task, ok func(*mcptest.TaskStatus) bool) *mcptest.TaskStatus {
	t.Helper()
	ctx := testContext(t)
	for {
		st, err := task.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok(st) {
			return st
		}
		if st.Status.Terminal() {
			t.Fatalf("the task ended %s: %s", st.Status, st.Raw)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the task never reached the expected state; last %s", st.Raw)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// A tasks/* request without Mcp-Name is told what the header carries: the
// task id.
func TestTaskRequestWithoutMcpName(t *testing.T) {
	srv, _ := newTaskServer(t)
	ctx := testContext(t)
	c := newClient(t, mcptest.Handler(srv), &mcptest.Options{Tasks: true})
	task, err := c.StartTask(ctx, "block", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = task.Cancel(ctx) }()
	for _, method := range []string{"tasks/get", "tasks/cancel"} {
		resp, err := c.Do(ctx, method, map[string]any{"taskId": task.ID}, mcptest.WithoutHeader("Mcp-Name"))
		if err != nil || resp.Error == nil || resp.Error.Code != -32020 || !strings.Contains(resp.Error.Message, "set it to the task id (params.taskId)") {
			t.Fatalf("%s without Mcp-Name: %v %+v", method, err, resp.Error)
		}
	}
}
