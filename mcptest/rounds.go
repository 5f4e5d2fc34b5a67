package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
)

// ErrTooManyRounds is wrapped by the error of a call that was still
// answered with input_required after Options.MaxRounds requests.
var ErrTooManyRounds = errors.New("mcptest: too many rounds")

// ErrNoCallback is wrapped by the error of a call whose input_required
// result embedded a request the client has no callback for (a declared
// capability without Options.Elicitation, Sampling or Roots).
var ErrNoCallback = errors.New("mcptest: no callback for the input request")

// The input request methods (see mrtr).
const (
	methodElicit    = mrtr.MethodElicit
	methodSample    = mrtr.MethodSample
	methodListRoots = mrtr.MethodListRoots
)

// InputRequest is one request embedded in an input_required result.
type InputRequest struct {
	// Key is the key the server chose for it.
	Key string
	// Method is elicitation/create, sampling/createMessage or roots/list.
	Method string
	// Params is the params member as sent (nil when absent).
	Params json.RawMessage
	// Elicitation is the decoded request of an elicitation/create.
	Elicitation *elicit.Request
	// Sampling is the decoded request of a sampling/createMessage.
	Sampling *mcp.CreateMessageParams
}

// Round records one request of a multi-round call and its response.
type Round struct {
	// Status is the HTTP status of the response.
	Status int
	// Streamed reports that the response came as an SSE stream.
	Streamed bool
	// Notifications are those sent before the response, in order.
	Notifications []Notification
	// InputRequests are the requests of this round's input_required
	// result, in the order sent; none for the last round.
	InputRequests []InputRequest
	// InputResponses are the answers the client sent with the next round,
	// by key, as encoded.
	InputResponses map[string]json.RawMessage
	// RequestState is the requestState of this round's input_required
	// result ("" when it had none, and in the last round); its length is
	// the state's size on the wire.
	RequestState string
}

// Exchange records the rounds of one multi-round call: one per request,
// the last holding the final result.
type Exchange struct {
	// Rounds are the call's requests and responses, in order: the first
	// round is the first request.
	Rounds []Round
	// task is the task a tools/call started, for CallTool to wait on.
	task *Task
}

// Notifications returns the notifications of every round, in order.
func (e *Exchange) Notifications() []Notification {
	var out []Notification
	for _, r := range e.Rounds {
		out = append(out, r.Notifications...)
	}
	return out
}

// Progress returns the progress notifications of every round, in order.
func (e *Exchange) Progress() []Progress {
	var out []Progress
	for _, n := range e.Notifications() {
		if p, ok := n.Progress(); ok {
			out = append(out, p)
		}
	}
	return out
}

// Logs returns the log notifications of every round, in order.
func (e *Exchange) Logs() []LogMessage {
	var out []LogMessage
	for _, n := range e.Notifications() {
		if m, ok := n.Log(); ok {
			out = append(out, m)
		}
	}
	return out
}

// ToolResult is the complete result of a tools/call.
type ToolResult struct {
	// Content holds the content blocks.
	Content []mcp.Block
	// StructuredContent is the structuredContent member as sent, or nil.
	StructuredContent json.RawMessage
	// IsError reports a tool execution failure (a result, not a protocol
	// error).
	IsError bool
	// Meta is the result's _meta, by key.
	Meta map[string]json.RawMessage
	// Exchange records the rounds that led to the result.
	Exchange *Exchange
}

// Text returns the text of the text blocks, joined by newlines.
func (r *ToolResult) Text() string { return joinText(r.Content) }

// Decode unmarshals StructuredContent into v as encoding/json.Unmarshal
// would. It fails when the result has no structuredContent.
func (r *ToolResult) Decode(v any) error {
	if r.StructuredContent == nil {
		return errors.New("mcptest: the result has no structuredContent")
	}
	if err := json.Unmarshal(r.StructuredContent, v); err != nil {
		return fmt.Errorf("mcptest: decoding structuredContent: %w", err)
	}
	return nil
}

func joinText(blocks []mcp.Block) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == mcp.BlockText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	// Role is user or assistant.
	Role mcp.Role `json:"role"`
	// Content is the message's content block.
	Content mcp.Block `json:"content"`
}

// PromptResult is the complete result of a prompts/get.
type PromptResult struct {
	// Description describes the prompt, if sent.
	Description string
	// Messages are the prompt's messages.
	Messages []PromptMessage
	// Meta is the result's _meta, by key.
	Meta map[string]json.RawMessage
	// Exchange records the rounds that led to the result.
	Exchange *Exchange
}

// ResourceResult is the complete result of a resources/read.
type ResourceResult struct {
	// Contents are the resource's contents.
	Contents []mcp.ResourceContents
	// Meta is the result's _meta, by key.
	Meta map[string]json.RawMessage
	// Exchange records the rounds that led to the result.
	Exchange *Exchange
}

// CallTool calls a tool and drives the call to its complete result: each
// input_required result has its requests answered by the callbacks of
// Options and the call retried with inputResponses and the echoed
// requestState, under a new id, up to Options.MaxRounds requests. args is
// encoded once as the arguments (nil sends none). A tool failure is a
// result with IsError set; a JSON-RPC error response is a *Error.
//
// When the server answers with a task (the client declared the tasks
// extension with Options.Tasks, and the tool runs as a task), CallTool
// waits for it as Task.Wait does, answering its questions with the same
// callbacks; the result's Exchange then records the requests that started
// the task. A 2025-11-25 client (Options.Protocol) sends one request and
// answers the server's requests on its stream.
func (c *Client) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (*ToolResult, error) {
	p, err := toolParams(name, args)
	if err != nil {
		return nil, err
	}
	res, ex, err := c.drive(ctx, "tools/call", name, p, opts, false)
	if err != nil {
		return nil, err
	}
	if ex.task != nil {
		return ex.task.Wait(ctx)
	}
	out, err := parseToolResult(res)
	if err != nil {
		return nil, fmt.Errorf("mcptest: tools/call %s: %w", name, err)
	}
	out.Exchange = ex
	return out, nil
}

// toolParams returns the params of a tools/call.
func toolParams(name string, args any) (map[string]json.RawMessage, error) {
	p := map[string]json.RawMessage{}
	var err error
	if p["name"], err = json.Marshal(name); err != nil {
		return nil, fmt.Errorf("mcptest: tools/call: %w", err)
	}
	if args != nil {
		if p["arguments"], err = json.Marshal(args); err != nil {
			return nil, fmt.Errorf("mcptest: tools/call %s: encoding the arguments: %w", name, err)
		}
	}
	return p, nil
}

// GetPrompt gets a prompt, driving rounds as CallTool does. args are the
// prompt's arguments (nil sends none).
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (*PromptResult, error) {
	p := map[string]json.RawMessage{}
	p["name"], _ = json.Marshal(name)
	if args != nil {
		p["arguments"], _ = json.Marshal(args)
	}
	res, ex, err := c.drive(ctx, "prompts/get", name, p, opts, false)
	if err != nil {
		return nil, err
	}
	var r struct {
		Description string                     `json:"description"`
		Messages    []PromptMessage            `json:"messages"`
		Meta        map[string]json.RawMessage `json:"_meta"`
	}
	if err := strictjson.Unmarshal(res, &r); err != nil || r.Messages == nil {
		return nil, fmt.Errorf("mcptest: prompts/get %s: %w", name, protocolError("the result needs a messages array: %v", err))
	}
	return &PromptResult{Description: r.Description, Messages: r.Messages, Meta: r.Meta, Exchange: ex}, nil
}

// ReadResource reads a resource, driving rounds as CallTool does.
func (c *Client) ReadResource(ctx context.Context, uri string, opts ...CallOption) (*ResourceResult, error) {
	p := map[string]json.RawMessage{}
	p["uri"], _ = json.Marshal(uri)
	res, ex, err := c.drive(ctx, "resources/read", uri, p, opts, false)
	if err != nil {
		return nil, err
	}
	var r struct {
		Contents []mcp.ResourceContents     `json:"contents"`
		Meta     map[string]json.RawMessage `json:"_meta"`
	}
	if err := strictjson.Unmarshal(res, &r); err != nil || r.Contents == nil {
		return nil, fmt.Errorf("mcptest: resources/read %s: %w", uri, protocolError("the result needs a contents array: %v", err))
	}
	return &ResourceResult{Contents: r.Contents, Meta: r.Meta, Exchange: ex}, nil
}

// drive sends the request and its retries until a complete result, and
// returns that result. A tools/call answered with a task returns the
// CreateTaskResult, with ex.task set unless startOnly.
func (c *Client) drive(ctx context.Context, method, target string, p map[string]json.RawMessage, opts []CallOption, startOnly bool) (json.RawMessage, *Exchange, error) {
	o, err := collectOptions(opts)
	if err != nil {
		return nil, nil, err
	}
	if c.legacy {
		return c.driveLegacy(ctx, method, target, p, o)
	}
	if p["_meta"], err = c.meta(o); err != nil {
		return nil, nil, err
	}
	for k, v := range o.resume {
		p[k] = v
	}
	what := method + " " + target
	ex := &Exchange{}
	for round := 1; round <= c.opts.MaxRounds; round++ {
		resp, err := c.send(ctx, method, p, o)
		if err != nil {
			return nil, ex, fmt.Errorf("%s: round %d: %w", what, round, err)
		}
		ex.Rounds = append(ex.Rounds, Round{Status: resp.Status, Streamed: resp.Streamed, Notifications: resp.Notifications})
		rec := &ex.Rounds[len(ex.Rounds)-1]
		if resp.Error != nil {
			resp.Error.Round = round
			return nil, ex, fmt.Errorf("%s: %w", what, resp.Error)
		}
		if err := resp.Err(); err != nil {
			return nil, ex, fmt.Errorf("%s: round %d: %w", what, round, err)
		}
		switch rt := resp.ResultType(); rt {
		case "complete":
			return resp.Result, ex, nil
		case "input_required":
		case "task":
			if method != "tools/call" {
				return nil, ex, fmt.Errorf("%s: round %d: %w", what, round, protocolError("a %s answered with a task", method))
			}
			if startOnly {
				return resp.Result, ex, nil
			}
			st, err := parseTaskStatus(resp.Result)
			if err != nil {
				return nil, ex, fmt.Errorf("%s: round %d: %w", what, round, err)
			}
			ex.task = &Task{c: c, ID: st.TaskID, Created: st, Exchange: ex, opts: opts}
			return resp.Result, ex, nil
		case "":
			return nil, ex, fmt.Errorf("%s: round %d: %w", what, round, protocolError("the result has no resultType"))
		default:
			return nil, ex, fmt.Errorf("%s: round %d: %w", what, round, protocolError("unknown resultType %q", rt))
		}
		reqs, state, err := parseInputRequired(resp.Result)
		if err != nil {
			return nil, ex, fmt.Errorf("%s: round %d: %w", what, round, err)
		}
		rec.InputRequests, rec.RequestState = reqs, state
		answers, err := c.answer(ctx, round, reqs)
		if err != nil {
			return nil, ex, fmt.Errorf("%s: round %d: %w", what, round, err)
		}
		rec.InputResponses = answers
		delete(p, "inputResponses")
		delete(p, "requestState")
		if len(answers) > 0 {
			if p["inputResponses"], err = json.Marshal(answers); err != nil {
				return nil, ex, fmt.Errorf("%s: round %d: encoding the answers: %w", what, round, err)
			}
		}
		if state != "" {
			p["requestState"], _ = json.Marshal(state)
		}
	}
	return nil, ex, fmt.Errorf("%s: %w: still input_required after %d requests (Options.MaxRounds)", what, ErrTooManyRounds, c.opts.MaxRounds)
}

// parseInputRequired reads an input_required result: its requests in the
// order sent, and its state.
func parseInputRequired(result json.RawMessage) ([]InputRequest, string, error) {
	var r struct {
		InputRequests json.RawMessage `json:"inputRequests"`
		RequestState  *string         `json:"requestState"`
	}
	if err := strictjson.Unmarshal(result, &r); err != nil {
		return nil, "", protocolError("unreadable input_required result: %v", err)
	}
	if r.InputRequests == nil && r.RequestState == nil {
		return nil, "", protocolError("an input_required result needs inputRequests or requestState")
	}
	state := ""
	if r.RequestState != nil {
		if *r.RequestState == "" {
			return nil, "", protocolError("an empty requestState")
		}
		state = *r.RequestState
	}
	if r.InputRequests == nil {
		return nil, state, nil
	}
	reqs, err := parseInputRequests(r.InputRequests)
	if err != nil {
		return nil, "", err
	}
	return reqs, state, nil
}

// parseInputRequests reads the inputRequests object in order, refusing
// duplicate keys and anything but the three request types.
func parseInputRequests(raw json.RawMessage) ([]InputRequest, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, protocolError("inputRequests is not an object: %q", clip(raw))
	}
	var out []InputRequest
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, protocolError("unreadable inputRequests: %v", err)
		}
		key := tok.(string)
		if seen[key] {
			return nil, protocolError("inputRequests repeats the key %q", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, protocolError("unreadable inputRequests[%q]: %v", key, err)
		}
		ir, err := parseInputRequest(key, v)
		if err != nil {
			return nil, err
		}
		out = append(out, ir)
	}
	if _, err := dec.Token(); err != nil {
		return nil, protocolError("unreadable inputRequests: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, protocolError("trailing data after inputRequests")
	}
	return out, nil
}

func parseInputRequest(key string, raw json.RawMessage) (InputRequest, error) {
	var r struct {
		Method *string         `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := strictjson.Unmarshal(raw, &r); err != nil || r.Method == nil {
		return InputRequest{}, protocolError("inputRequests[%q] is not a {method, params} object: %q", key, clip(raw))
	}
	ir := InputRequest{Key: key, Method: *r.Method, Params: r.Params}
	switch ir.Method {
	case methodElicit:
		var er elicit.Request
		if err := strictjson.Unmarshal(r.Params, &er); err != nil {
			return ir, protocolError("inputRequests[%q]: invalid elicitation: %v", key, err)
		}
		if err := er.Validate(); err != nil {
			return ir, protocolError("inputRequests[%q]: invalid elicitation: %v", key, err)
		}
		if er.ElicitationID != "" {
			return ir, protocolError("inputRequests[%q]: elicitationId exists only in 2025-11-25", key)
		}
		ir.Elicitation = &er
	case methodSample:
		var sp mcp.CreateMessageParams
		if err := strictjson.Unmarshal(r.Params, &sp); err != nil {
			return ir, protocolError("inputRequests[%q]: invalid sampling request: %v", key, err)
		}
		if err := sp.Validate(); err != nil {
			return ir, protocolError("inputRequests[%q]: invalid sampling request: %v", key, err)
		}
		ir.Sampling = &sp
	case methodListRoots:
	default:
		return ir, protocolError("inputRequests[%q] has method %q; only %s, %s and %s may be embedded", key, ir.Method, methodElicit, methodSample, methodListRoots)
	}
	return ir, nil
}

type inputKey struct{}

// InputKey returns, inside an Options callback, the key of the input
// request being answered ("" elsewhere).
func InputKey(ctx context.Context) string {
	k, _ := ctx.Value(inputKey{}).(string)
	return k
}

// answer runs the callbacks for the round's requests, in order.
func (c *Client) answer(ctx context.Context, round int, reqs []InputRequest) (map[string]json.RawMessage, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(reqs))
	for _, ir := range reqs {
		b, err := c.answerOne(ctx, ir, "inputRequests["+strconv.Quote(ir.Key)+"]")
		if err != nil {
			return nil, err
		}
		out[ir.Key] = b
	}
	return out, nil
}

// answerOne runs the callback for one input request (an embedded one, a
// task's, or a 2025-11-25 server-to-client request: where names it in
// errors) and returns the answer as encoded.
func (c *Client) answerOne(ctx context.Context, ir InputRequest, where string) (json.RawMessage, error) {
	caps := c.declared
	cctx := context.WithValue(ctx, inputKey{}, ir.Key)
	var (
		v   any
		err error
	)
	switch ir.Method {
	case methodElicit:
		mode := ir.Elicitation.Mode
		if mode == "" {
			mode = elicit.ModeForm
		}
		if (mode == elicit.ModeURL && !caps.CanElicitURL()) || (mode == elicit.ModeForm && !caps.CanElicitForm()) {
			return nil, protocolError("%s is a %s elicitation, which this client did not declare", where, mode)
		}
		if c.opts.Elicitation == nil {
			return nil, fmt.Errorf("%w: %q is an elicitation and Options.Elicitation is nil", ErrNoCallback, ir.Key)
		}
		var res *elicit.Result
		if res, err = c.opts.Elicitation(cctx, ir.Elicitation); err == nil && res == nil {
			err = errors.New("the callback returned no result")
		}
		v = res
	case methodSample:
		if !caps.CanSample() {
			return nil, protocolError("%s is a sampling request, which this client did not declare", where)
		}
		if c.opts.Sampling == nil {
			return nil, fmt.Errorf("%w: %q is a sampling request and Options.Sampling is nil", ErrNoCallback, ir.Key)
		}
		var res *mcp.CreateMessageResult
		if res, err = c.opts.Sampling(cctx, ir.Sampling); err == nil && res == nil {
			err = errors.New("the callback returned no result")
		}
		v = res
	case methodListRoots:
		if !caps.CanListRoots() {
			return nil, protocolError("%s is a roots request, which this client did not declare", where)
		}
		if c.opts.Roots == nil {
			return nil, fmt.Errorf("%w: %q is a roots request and Options.Roots is nil", ErrNoCallback, ir.Key)
		}
		var res *mcp.ListRootsResult
		if res, err = c.opts.Roots(cctx); err == nil && res == nil {
			err = errors.New("the callback returned no result")
		}
		v = res
	default:
		return nil, protocolError("%s has method %q; only %s, %s and %s may be asked", where, ir.Method, methodElicit, methodSample, methodListRoots)
	}
	if err != nil {
		return nil, fmt.Errorf("mcptest: answering %s %q: %w", ir.Method, ir.Key, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("mcptest: encoding the answer to %q: %w", ir.Key, err)
	}
	return b, nil
}

// Accept returns an accepting elicitation answer whose content is v
// encoded as a JSON object (nil sends no content), so a callback can
// end with return mcptest.Accept(map[string]any{"name": "Alice"}).
func Accept(v any) (*elicit.Result, error) {
	r := &elicit.Result{Action: elicit.ActionAccept}
	if v == nil {
		return r, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("mcptest: encoding the answer: %w", err)
	}
	if !isJSONObject(b) {
		return nil, fmt.Errorf("mcptest: an accepted answer's content is an object, not %s", clip(b))
	}
	r.Content = b
	return r, nil
}

// Decline returns a declining elicitation answer.
func Decline() (*elicit.Result, error) {
	return &elicit.Result{Action: elicit.ActionDecline}, nil
}

// Cancel returns a cancelling elicitation answer.
func Cancel() (*elicit.Result, error) {
	return &elicit.Result{Action: elicit.ActionCancel}, nil
}
