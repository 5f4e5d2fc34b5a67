package main

// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663), as the
// conformance suite's tasks-* scenarios exercise it.
//
// A tool registered with server.RunAsTask may answer with a task: when the
// caller declares the extension in its client capabilities, tools/call
// returns a CreateTaskResult at once, the handler runs in the background,
// and the client polls tasks/get (the result or error is inlined once the
// task is terminal), answers its questions with tasks/update and may stop
// it with tasks/cancel. A caller without the extension runs a TaskOptional
// tool synchronously and is refused a TaskRequired one (-32021).
//
// Nothing below is task-specific code: each handler is an ordinary typed
// tool handler. Its context ends when the task is cancelled, and its
// questions (req.Elicit, req.AskAll, ...) put the task in input_required
// until tasks/update brings the answers. Run by a caller without the
// extension, the same handlers answer synchronously, their questions
// becoming input_required results (multi round-trip requests).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// greetArgs are the arguments of greet.
type greetArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// computeArgs are the arguments of slow_compute.
type computeArgs struct {
	Seconds float64 `json:"seconds" jsonschema:"how long the computation takes, in seconds (0 answers at once)"`
	Label   string  `json:"label,omitempty" jsonschema:"a name for the computation, echoed in its result"`
}

// deleteArgs are the arguments of confirm_delete.
type deleteArgs struct {
	Filename string `json:"filename" jsonschema:"the file to delete"`
}

// none is the arguments of a tool that takes none.
type none struct{}

// maxCompute bounds slow_compute, so a call cannot hold a task for long.
const maxCompute = 10 * time.Minute

// taskFixtures holds the questions the task fixtures ask, built once.
type taskFixtures struct {
	deleteQ *elicit.Request // confirm_delete: {confirm: boolean}
	nameQ   *elicit.Request // multi_input: {name}
	okQ     *elicit.Request // multi_input: {confirm: boolean}
	greetQ  *elicit.Request // test_tool_with_task: {name}
}

func addTaskFixtures(srv *server.Server) error {
	var f taskFixtures
	var errs [4]error
	f.deleteQ, errs[0] = elicit.NewForm("Delete the file?", elicit.Boolean("confirm").Required())
	f.nameQ, errs[1] = askText("Your name?", "name")
	f.okQ, errs[2] = elicit.NewForm("Proceed?", elicit.Boolean("confirm").Required())
	f.greetQ, errs[3] = askText("What is your name?", "name")
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	optional := server.RunAsTask(server.TaskOptional)
	required := server.RunAsTask(server.TaskRequired)
	return errors.Join(
		server.AddTool(srv, server.Tool{Name: "greet", Description: "Greets someone (never a task)"}, greet),
		server.AddTool(srv, server.Tool{Name: "slow_compute", Description: "Computes for `seconds` seconds, then answers (a task when the caller supports tasks)"}, slowCompute, optional),
		server.AddTool(srv, server.Tool{Name: "failing_job", Description: "A task that fails with a tool error after about a second"}, failingJob, required),
		server.AddTool(srv, server.Tool{Name: "protocol_error_job", Description: "A task that fails with a protocol error"}, protocolErrorJob, optional),
		server.AddTool(srv, server.Tool{Name: "confirm_delete", Description: "Deletes a file after the user confirms"}, f.confirmDelete, optional),
		server.AddTool(srv, server.Tool{Name: "multi_input", Description: "Asks two questions at once"}, f.multiInput, optional),
		server.AddTool(srv, server.Tool{Name: "test_tool_with_task", Description: "Asks for a name, then greets it from a task"}, f.greetFromTask,
			server.RunAsTask(server.TaskRequired), server.DeferTask()),
	)
}

// greet never runs as a task (tasks-capability-negotiation,
// tasks-dispatch-and-envelope, tasks-request-headers, tasks-lifecycle): it
// answers at once, whatever the caller declares (a legacy `task` param
// included).
func greet(ctx context.Context, req *server.ToolRequest, in greetArgs) (*server.ToolResult, error) {
	return server.TextResult("Hello, " + in.Name + "!"), nil
}

// slowCompute is slow_compute (tasks-lifecycle, tasks-wire-fields,
// tasks-request-state-removal and others): a task for callers that declare
// the extension, it works for `seconds`, then answers. Cancelling the task
// ends its context, so the work stops and the task stays cancelled.
func slowCompute(ctx context.Context, req *server.ToolRequest, in computeArgs) (*server.ToolResult, error) {
	d := time.Duration(in.Seconds * float64(time.Second))
	if d < 0 || d > maxCompute {
		return server.ErrorResult(fmt.Sprintf("seconds must be between 0 and %v", maxCompute.Seconds())), nil
	}
	if err := sleep(ctx, d); err != nil {
		return nil, err
	}
	return server.TextResult(fmt.Sprintf("Computed %q in %gs", in.Label, in.Seconds)), nil
}

// failingJob is failing_job (tasks-lifecycle, tasks-status-notifications,
// tasks-required-task-error): it runs only as a task, and always ends in a
// tool error after about a second: the task is completed, its result
// isError.
func failingJob(ctx context.Context, req *server.ToolRequest, _ none) (*server.ToolResult, error) {
	if err := sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	return server.ErrorResult("failing_job failed, as it always does"), nil
}

// protocolErrorJob is protocol_error_job (tasks-lifecycle): it ends in a
// JSON-RPC error, so the task is failed and the error inlined on tasks/get.
func protocolErrorJob(ctx context.Context, req *server.ToolRequest, _ none) (*server.ToolResult, error) {
	return nil, &mcp.Error{Code: mcp.InternalError, Message: "protocol_error_job hit an internal error, on purpose"}
}

// confirmDelete is confirm_delete (tasks-mrtr-input,
// tasks-dispatch-and-envelope): it asks for a confirmation. As a task, the
// question appears on tasks/get (input_required) and the answer comes
// with tasks/update; the handler waits in place.
func (f *taskFixtures) confirmDelete(ctx context.Context, req *server.ToolRequest, in deleteArgs) (*server.ToolResult, error) {
	res, err := req.Elicit(ctx, f.deleteQ)
	if err != nil {
		return nil, err
	}
	var a struct {
		Confirm bool `json:"confirm"`
	}
	if res.Action != elicit.ActionAccept || res.Decode(&a) != nil || !a.Confirm {
		return server.TextResult("Kept " + in.Filename), nil
	}
	return server.TextResult("Deleted " + in.Filename), nil
}

// multiInput is multi_input (tasks-mrtr-input): two questions at once, both
// pending together; the client may answer them one tasks/update at a time.
func (f *taskFixtures) multiInput(ctx context.Context, req *server.ToolRequest, _ none) (*server.ToolResult, error) {
	res, err := req.AskAll(ctx, []mrtr.InputRequest{mrtr.ElicitRequest(f.nameQ), mrtr.ElicitRequest(f.okQ)})
	if err != nil {
		return nil, err
	}
	name, _ := acceptedString(res[0].Elicit, "name")
	return server.TextResult(fmt.Sprintf("Name: %s; proceed: %s", name, res[1].Elicit.Action)), nil
}

// greetFromTask is test_tool_with_task (tasks-mrtr-composition): it gathers
// its input with a multi round-trip request first, as SEP-2663 recommends,
// and only then becomes a task (DeferTask: the handler starts it). Round 1
// answers input_required asking for user_name; round 2, carrying the
// answer, gets the CreateTaskResult; the task's result greets the name.
func (f *taskFixtures) greetFromTask(ctx context.Context, req *server.ToolRequest, _ none) (*server.ToolResult, error) {
	res, err := req.Elicit(ctx, f.greetQ, server.WithKey("user_name"))
	if err != nil {
		return nil, err
	}
	name, ok := acceptedString(res, "name")
	if !ok {
		return server.ErrorResult("No name given (" + string(res.Action) + ")"), nil
	}
	if err := req.StartTask(); err != nil {
		return nil, err
	}
	if err := sleep(ctx, 100*time.Millisecond); err != nil { // the work the task stands for
		return nil, err
	}
	return server.TextResult("Hello, " + name + "! (from task " + req.TaskID() + ")"), nil
}
