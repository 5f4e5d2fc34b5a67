package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// ErrTaskCancelled is wrapped by the error of Wait (and of a CallTool
// that ran as a task) when the task ended cancelled.
var ErrTaskCancelled = errors.New("mcptest: the task was cancelled")

// ErrNoTask is wrapped by the error of StartTask when the server answered
// the call with its result instead of a task (the tool does not run as a
// task, or the client did not declare the extension).
var ErrNoTask = errors.New("mcptest: the server did not start a task")

// defaultPollInterval is the pause between two tasks/get when the server
// suggests none and Options.PollInterval is zero.
const defaultPollInterval = 50 * time.Millisecond

// Task is a handle on a task the server started for a tools/call (the
// tasks extension). StartTask returns one; CallTool drives it to the end
// by itself. Its methods send tasks/get, tasks/update and tasks/cancel,
// each with Mcp-Name set to the task id. A Task is safe for concurrent
// use.
type Task struct {
	c *Client
	// ID is the task id the server chose.
	ID string
	// Created is the CreateTaskResult as decoded (status working, most
	// likely).
	Created *TaskStatus
	// Exchange records the rounds of the tools/call that started the task
	// (more than one when the tool gathered input with input_required
	// rounds before starting it).
	Exchange *Exchange
	opts     []CallOption
}

// TaskStatus is what tasks/get (or the CreateTaskResult) says of a task.
type TaskStatus struct {
	// TaskID is the task's id.
	TaskID string
	// Status is working, input_required, completed, failed or cancelled.
	Status mcp.TaskStatus
	// StatusMessage says more about the status, if sent.
	StatusMessage string
	// PollInterval is the server's suggested polling interval (0 when not
	// sent).
	PollInterval time.Duration
	// TTL is the task's time to live from its creation.
	TTL time.Duration
	// InputRequests are the questions pending in input_required, in the
	// order sent.
	InputRequests []InputRequest
	// Result is the tool result of a completed task.
	Result *ToolResult
	// Error is the error of a failed task.
	Error *Error
	// Raw is the result as sent.
	Raw json.RawMessage
}

// StartTask calls a task tool and returns a handle on the task as soon as
// the server created it, without polling it. Input_required rounds before
// the task starts (a tool registered with server.DeferTask) are driven
// with the callbacks as CallTool drives them. It fails, wrapping ErrNoTask,
// when the server answered with the result itself. The client must
// declare the tasks extension (Options.Tasks).
func (c *Client) StartTask(ctx context.Context, name string, args any, opts ...CallOption) (*Task, error) {
	if c.legacy {
		return nil, errors.New("mcptest: StartTask: tasks exist only in 2026-07-28 (Options.Protocol)")
	}
	p, err := toolParams(name, args)
	if err != nil {
		return nil, err
	}
	res, ex, err := c.drive(ctx, "tools/call", name, p, opts, true)
	if err != nil {
		return nil, err
	}
	st, err := parseTaskStatus(res)
	if err != nil {
		if len(ex.Rounds) > 0 && resultTypeOf(res) == "complete" {
			return nil, fmt.Errorf("tools/call %s: %w: the result came at once", name, ErrNoTask)
		}
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	return &Task{c: c, ID: st.TaskID, Created: st, Exchange: ex, opts: opts}, nil
}

// Get sends tasks/get and returns what the server says of the task.
func (t *Task) Get(ctx context.Context) (*TaskStatus, error) {
	resp, err := t.c.Do(ctx, "tasks/get", map[string]any{"taskId": t.ID}, t.callOpts()...)
	if err != nil {
		return nil, fmt.Errorf("tasks/get %s: %w", t.ID, err)
	}
	if err := resp.Err(); err != nil {
		return nil, fmt.Errorf("tasks/get %s: %w", t.ID, err)
	}
	st, err := parseTaskStatus(resp.Result)
	if err != nil {
		return nil, fmt.Errorf("tasks/get %s: %w", t.ID, err)
	}
	if st.TaskID != t.ID {
		return nil, fmt.Errorf("tasks/get %s: %w", t.ID, protocolError("the result is task %q", st.TaskID))
	}
	return st, nil
}

// Update sends tasks/update with answers as inputResponses (by key; each
// value encoded as given, for example an *elicit.Result), unchecked, so a
// test can send an answer the server must refuse.
func (t *Task) Update(ctx context.Context, answers map[string]any) error {
	if answers == nil {
		answers = map[string]any{}
	}
	resp, err := t.c.Do(ctx, "tasks/update", map[string]any{"taskId": t.ID, "inputResponses": answers}, t.callOpts()...)
	if err != nil {
		return fmt.Errorf("tasks/update %s: %w", t.ID, err)
	}
	if err := resp.Err(); err != nil {
		return fmt.Errorf("tasks/update %s: %w", t.ID, err)
	}
	return nil
}

// Answer answers the questions of st (an input_required status from Get)
// with the callbacks of Options, as CallTool would, and sends them with
// tasks/update. It returns the answers sent, by key.
func (t *Task) Answer(ctx context.Context, st *TaskStatus) (map[string]json.RawMessage, error) {
	if st == nil || len(st.InputRequests) == 0 {
		return nil, nil
	}
	answers := make(map[string]json.RawMessage, len(st.InputRequests))
	for _, ir := range st.InputRequests {
		b, err := t.c.answerOne(ctx, ir, "the task's inputRequests["+fmt.Sprintf("%q", ir.Key)+"]")
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
		answers[ir.Key] = b
	}
	send := make(map[string]any, len(answers))
	for k, v := range answers {
		send[k] = v
	}
	if err := t.Update(ctx, send); err != nil {
		return nil, err
	}
	return answers, nil
}

// Cancel sends tasks/cancel. Cancelling a finished task is not an error
// (the server ignores it).
func (t *Task) Cancel(ctx context.Context) error {
	resp, err := t.c.Do(ctx, "tasks/cancel", map[string]any{"taskId": t.ID}, t.callOpts()...)
	if err != nil {
		return fmt.Errorf("tasks/cancel %s: %w", t.ID, err)
	}
	if err := resp.Err(); err != nil {
		return fmt.Errorf("tasks/cancel %s: %w", t.ID, err)
	}
	return nil
}

// Wait polls the task with tasks/get until it ends, answering each
// question it asks with the callbacks of Options (tasks/update), and
// returns the tool result of a completed task. A failed task's error is a
// *Error; a cancelled task's error wraps ErrTaskCancelled. Polls are
// Options.PollInterval apart, or the server's pollIntervalMs when that is
// zero; ctx bounds the wait.
func (t *Task) Wait(ctx context.Context) (*ToolResult, error) {
	// Answered keys are remembered: tasks/get may still show a question
	// answered a moment ago (updates are eventually consistent).
	answered := map[string]bool{}
	for {
		st, err := t.Get(ctx)
		if err != nil {
			return nil, err
		}
		switch st.Status {
		case mcp.TaskCompleted:
			if st.Result == nil {
				return nil, fmt.Errorf("task %s: %w", t.ID, protocolError("a completed task without a result"))
			}
			st.Result.Exchange = t.Exchange
			return st.Result, nil
		case mcp.TaskFailed:
			if st.Error == nil {
				return nil, fmt.Errorf("task %s: %w", t.ID, protocolError("a failed task without an error"))
			}
			return nil, fmt.Errorf("task %s failed: %w", t.ID, st.Error)
		case mcp.TaskCancelled:
			return nil, fmt.Errorf("task %s: %w (%s)", t.ID, ErrTaskCancelled, st.StatusMessage)
		case mcp.TaskInputRequired:
			var fresh []InputRequest
			for _, ir := range st.InputRequests {
				if !answered[ir.Key] {
					fresh = append(fresh, ir)
				}
			}
			if len(fresh) > 0 {
				if _, err := t.Answer(ctx, &TaskStatus{InputRequests: fresh}); err != nil {
					return nil, err
				}
				for _, ir := range fresh {
					answered[ir.Key] = true
				}
				continue
			}
		case mcp.TaskWorking:
		default:
			return nil, fmt.Errorf("task %s: %w", t.ID, protocolError("unknown status %q", st.Status))
		}
		if err := sleep(ctx, t.c.pollInterval(st)); err != nil {
			return nil, fmt.Errorf("task %s: waiting for it to end: %w", t.ID, err)
		}
	}
}

// callOpts are the call's options the tasks/* requests take too
// (headers, log level, _meta), minus the id and the resume state.
func (t *Task) callOpts() []CallOption {
	out := make([]CallOption, 0, len(t.opts)+1)
	out = append(out, t.opts...)
	out = append(out, func(o *callOptions) { o.id, o.resume, o.progressToken = nil, nil, nil })
	return out
}

func (c *Client) pollInterval(st *TaskStatus) time.Duration {
	switch {
	case c.opts.PollInterval > 0:
		return c.opts.PollInterval
	case st.PollInterval > 0:
		return st.PollInterval
	}
	return defaultPollInterval
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func resultTypeOf(res json.RawMessage) string {
	var v struct {
		ResultType string `json:"resultType"`
	}
	_ = json.Unmarshal(res, &v)
	return v.ResultType
}

// parseTaskStatus reads a CreateTaskResult or a tasks/get result.
func parseTaskStatus(res json.RawMessage) (*TaskStatus, error) {
	var r struct {
		TaskID         *string         `json:"taskId"`
		Status         string          `json:"status"`
		StatusMessage  string          `json:"statusMessage"`
		TTLMs          int64           `json:"ttlMs"`
		PollIntervalMs int64           `json:"pollIntervalMs"`
		InputRequests  json.RawMessage `json:"inputRequests"`
		Result         json.RawMessage `json:"result"`
		Error          *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, protocolError("unreadable task: %v", err)
	}
	if r.TaskID == nil || *r.TaskID == "" || r.Status == "" {
		return nil, protocolError("a task needs a taskId and a status: %q", clip(res))
	}
	st := &TaskStatus{
		TaskID: *r.TaskID, Status: mcp.TaskStatus(r.Status), StatusMessage: r.StatusMessage,
		PollInterval: time.Duration(r.PollIntervalMs) * time.Millisecond,
		TTL:          time.Duration(r.TTLMs) * time.Millisecond,
		Raw:          res,
	}
	if r.InputRequests != nil && !bytes.Equal(bytes.TrimSpace(r.InputRequests), []byte("null")) {
		reqs, err := parseInputRequests(r.InputRequests)
		if err != nil {
			return nil, err
		}
		st.InputRequests = reqs
	}
	if r.Result != nil {
		tr, err := parseToolResult(r.Result)
		if err != nil {
			return nil, err
		}
		st.Result = tr
	}
	if r.Error != nil {
		st.Error = &Error{Code: r.Error.Code, Message: r.Error.Message, Data: r.Error.Data}
	}
	return st, nil
}

// parseToolResult reads a tools/call result.
func parseToolResult(res json.RawMessage) (*ToolResult, error) {
	var r struct {
		Content           json.RawMessage            `json:"content"`
		StructuredContent json.RawMessage            `json:"structuredContent"`
		IsError           bool                       `json:"isError"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	if err := strictjson.Unmarshal(res, &r); err != nil {
		return nil, protocolError("unreadable result: %v", err)
	}
	out := &ToolResult{StructuredContent: r.StructuredContent, IsError: r.IsError, Meta: r.Meta}
	if r.Content == nil || strictjson.Unmarshal(r.Content, &out.Content) != nil || out.Content == nil {
		return nil, protocolError("the result needs a content array of valid blocks: %q", clip(r.Content))
	}
	return out, nil
}
