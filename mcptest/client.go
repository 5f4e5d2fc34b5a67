package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// defaultMaxRounds is how many requests a multi-round call sends at most
// when Options.MaxRounds is zero.
const defaultMaxRounds = 10

// The _meta keys of the 2026-07-28 request envelope.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaProgressToken      = "progressToken"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// The HTTP headers of the 2026-07-28 Streamable HTTP transport.
const (
	headerProtocolVersion = "MCP-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
)

// Options configure a Client. The zero value (or nil) declares no
// capabilities and answers no input requests.
type Options struct {
	// ClientInfo is sent as _meta clientInfo on every request (default
	// {"name":"mcptest","version":"1.0.0"}).
	ClientInfo mcp.Implementation
	// Capabilities, when set, are declared as _meta clientCapabilities on
	// every request, exactly as given. When nil they follow from the
	// callbacks: elicitation (form and url) when Elicitation is set,
	// sampling when Sampling is set, roots when Roots is set; none at all
	// is {}.
	Capabilities *mcp.ClientCapabilities
	// Elicitation answers the elicitation/create requests of an
	// input_required result. It may decline or cancel; an error ends the
	// call with that error. The answer is sent as returned, unchecked, so
	// a test can send one the server must refuse.
	Elicitation func(ctx context.Context, req *elicit.Request) (*elicit.Result, error)
	// Sampling answers sampling/createMessage requests.
	Sampling func(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// Roots answers roots/list requests.
	Roots func(ctx context.Context) (*mcp.ListRootsResult, error)
	// OnNotification sees each notification of a response stream as it
	// arrives, before the response; it runs on the calling goroutine. The
	// notifications are also recorded (Response.Notifications,
	// Exchange).
	OnNotification func(Notification)
	// LogLevel, when set, is sent as _meta logLevel on every request, so
	// the server may stream notifications/message at that level or above.
	LogLevel string
	// Header is added to every request (for example Authorization). A
	// header set here replaces the one the client would send; per-call
	// options come last.
	Header http.Header
	// Tasks declares the tasks extension (SEP-2663) in the capabilities
	// derived from the callbacks (it adds nothing when Capabilities is
	// set). A tools/call the server runs as a task is then polled to its
	// end by CallTool, answering the task's questions with the same
	// callbacks; StartTask returns a handle instead.
	Tasks bool
	// PollInterval is the pause between two tasks/get of a task the client
	// waits on. Zero honours the server's pollIntervalMs (50 ms when it
	// sends none).
	PollInterval time.Duration
	// Protocol chooses the protocol revision: ProtocolVersion (the
	// default, "") or LegacyProtocolVersion, with which the client
	// opens a 2025-11-25 session (see Connect) and the high-level calls
	// answer the server's requests with the same callbacks.
	Protocol string
	// MaxRounds bounds the requests of one CallTool, GetPrompt or
	// ReadResource (default 10). A call still answered with
	// input_required after that many fails with ErrTooManyRounds.
	MaxRounds int
}

// Client sends 2026-07-28 requests to one Target: every request carries
// the _meta envelope and the MCP headers, and the high-level calls drive
// multi round-trip requests to their end. A Client is safe for concurrent
// use.
type Client struct {
	target Target
	opts   Options
	caps   json.RawMessage
	// declared is what caps says, for checking the server's requests.
	declared mcp.ClientCapabilities
	info     json.RawMessage
	nextID   atomic.Int64
	// legacy is set for a 2025-11-25 client; session is its session.
	legacy  bool
	session sessionState
}

// New returns a client for target. It fails on a target that cannot
// deliver (a bad endpoint URL, an empty RoundRobin) and on options it
// cannot honour.
func New(target Target, opts *Options) (*Client, error) {
	if target == nil {
		return nil, errors.New("mcptest: New needs a Target")
	}
	if err := target.check(); err != nil {
		return nil, err
	}
	c := &Client{target: target}
	if opts != nil {
		c.opts = *opts
		c.opts.Header = opts.Header.Clone()
	}
	if c.opts.MaxRounds < 0 {
		return nil, fmt.Errorf("mcptest: MaxRounds is %d; it must be positive, or zero for the default", c.opts.MaxRounds)
	}
	if c.opts.MaxRounds == 0 {
		c.opts.MaxRounds = defaultMaxRounds
	}
	switch c.opts.Protocol {
	case "", mcp.ProtocolVersion:
		c.opts.Protocol = mcp.ProtocolVersion
	case mcp.LegacyProtocolVersion:
		c.legacy = true
	default:
		return nil, fmt.Errorf("mcptest: Protocol %q: want %q or %q", c.opts.Protocol, mcp.ProtocolVersion, mcp.LegacyProtocolVersion)
	}
	if c.opts.ClientInfo.Name == "" && c.opts.ClientInfo.Version == "" {
		c.opts.ClientInfo = mcp.Implementation{Name: "mcptest", Version: "1.0.0"}
	}
	caps := c.opts.Capabilities
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
		if c.opts.Elicitation != nil {
			caps.Elicitation = &mcp.ElicitationCapability{Form: &mcp.Empty{}, URL: &mcp.Empty{}}
		}
		if c.opts.Sampling != nil {
			caps.Sampling = &mcp.SamplingCapability{}
		}
		if c.opts.Roots != nil {
			caps.Roots = &mcp.RootsCapability{}
		}
		if c.opts.Tasks {
			caps.Extensions = map[string]json.RawMessage{mcp.TasksExtension: json.RawMessage(`{}`)}
		}
	}
	c.declared = *caps
	var err error
	if c.caps, err = json.Marshal(caps); err != nil {
		return nil, fmt.Errorf("mcptest: encoding the capabilities: %w", err)
	}
	if c.info, err = json.Marshal(c.opts.ClientInfo); err != nil {
		return nil, fmt.Errorf("mcptest: encoding the client info: %w", err)
	}
	return c, nil
}

// CallOption tunes one request (or, for the multi-round calls, every
// request of the call).
type CallOption func(*callOptions)

type callOptions struct {
	id            json.RawMessage // of the first request; nil for the next counter value
	progressToken json.RawMessage
	logLevel      *string
	meta          map[string]any
	header        http.Header
	without       []string
	resume        map[string]json.RawMessage // requestState and inputResponses of the first request
	err           error
}

// WithProgressToken sends token (a string or an integer) as _meta
// progressToken, so the server may stream notifications/progress.
func WithProgressToken(token any) CallOption {
	return func(o *callOptions) {
		switch token.(type) {
		case string, int, int32, int64, uint, uint32, uint64:
			o.progressToken, _ = json.Marshal(token)
		default:
			o.err = fmt.Errorf("mcptest: a progress token is a string or an integer, not %T", token)
		}
	}
}

// WithID sends id (a string or an integer) as the JSON-RPC id of the
// request, instead of the client's next number: to check that a server
// echoes string ids, or names something after the id (the subscription
// of subscriptions/listen). In a multi-round call only the first request
// carries it; the retries are numbered as usual.
func WithID(id any) CallOption {
	return func(o *callOptions) {
		switch id.(type) {
		case string, int, int32, int64, uint, uint32, uint64:
			o.id, _ = json.Marshal(id)
		default:
			o.err = fmt.Errorf("mcptest: a request id is a string or an integer, not %T", id)
		}
	}
}

// WithLogLevel sends level as _meta logLevel for this call, overriding
// Options.LogLevel; "" sends none.
func WithLogLevel(level string) CallOption {
	return func(o *callOptions) { o.logLevel = &level }
}

// WithMeta adds key to the request's _meta (for example "traceparent").
// It cannot replace a key the client sets itself.
func WithMeta(key string, value any) CallOption {
	return func(o *callOptions) {
		if o.meta == nil {
			o.meta = map[string]any{}
		}
		o.meta[key] = value
	}
}

// WithHeader sets a request header, replacing the one the client would
// send (for example a wrong Mcp-Name, to test the server's check, or the
// Mcp-Param-* header of an argument whose schema has x-mcp-header).
// "Host" sets the request's Host instead of the endpoint's, to test a
// server's Host checks (DNS-rebinding protection, AllowedHosts).
func WithHeader(name, value string) CallOption {
	return func(o *callOptions) {
		if o.header == nil {
			o.header = http.Header{}
		}
		o.header.Set(name, value)
	}
}

// Resume makes the first request of a call carry requestState state and
// inputResponses answers (any value that encodes as a JSON object, such as
// a Round's InputResponses; nil sends none), as if it retried an earlier
// round: to replay a retry, or to present a stale or foreign state. The
// call then goes on as usual. With Do, params' own members win.
func Resume(state string, answers any) CallOption {
	return func(o *callOptions) {
		o.resume = map[string]json.RawMessage{}
		if state != "" {
			o.resume["requestState"], _ = json.Marshal(state)
		}
		if answers == nil {
			return
		}
		b, err := json.Marshal(answers)
		if err != nil || !isJSONObject(b) {
			o.err = fmt.Errorf("mcptest: Resume answers must encode as a JSON object (%v)", err)
			return
		}
		o.resume["inputResponses"] = b
	}
}

// WithoutHeader leaves a header out of the request, whoever set it.
func WithoutHeader(name string) CallOption {
	return func(o *callOptions) { o.without = append(o.without, name) }
}

func collectOptions(opts []CallOption) (*callOptions, error) {
	var o callOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return &o, o.err
}

// meta returns the request's _meta object.
func (c *Client) meta(o *callOptions) (json.RawMessage, error) {
	m := map[string]any{}
	for k, v := range o.meta {
		m[k] = v
	}
	m[metaProtocolVersion] = mcp.ProtocolVersion
	m[metaClientCapabilities] = c.caps
	m[metaClientInfo] = c.info
	level := c.opts.LogLevel
	if o.logLevel != nil {
		level = *o.logLevel
	}
	if level != "" {
		m[metaLogLevel] = level
	}
	if o.progressToken != nil {
		m[metaProgressToken] = o.progressToken
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("mcptest: encoding _meta: %w", err)
	}
	return b, nil
}

// Do sends one request and returns what came back, without driving
// rounds: an input_required result is returned as it is. params is
// encoded as a JSON object (nil means {}); unless it already has a _meta
// member, the client's envelope is added, so a test can send a broken
// envelope with the right headers. The error is nil whenever a response
// arrived, whatever its status or JSON-RPC error (see Response.Err); it
// reports a transport failure, or a response that breaks the protocol
// (wrapping ErrProtocol).
func (c *Client) Do(ctx context.Context, method string, params any, opts ...CallOption) (*Response, error) {
	o, err := collectOptions(opts)
	if err != nil {
		return nil, err
	}
	if method != "initialize" {
		if err := c.connected(ctx); err != nil {
			return nil, err
		}
	}
	p, err := encodeParams(params)
	if err != nil {
		return nil, fmt.Errorf("mcptest: %s: %w", method, err)
	}
	if _, ok := p["_meta"]; !ok && !c.legacy {
		if p["_meta"], err = c.meta(o); err != nil {
			return nil, err
		}
	}
	for k, v := range o.resume {
		if _, ok := p[k]; !ok {
			p[k] = v
		}
	}
	return c.send(ctx, method, p, o)
}

// DoRaw posts body exactly as given, with the client's headers
// (MCP-Protocol-Version, Accept, Content-Type, Options.Header) and, when
// body is a JSON object naming a method, Mcp-Method and Mcp-Name as Do
// would set them; per-call options adjust them. It is for malformed-input
// tests. The response's id is not checked against the body's.
func (c *Client) DoRaw(ctx context.Context, body []byte, opts ...CallOption) (*Response, error) {
	o, err := collectOptions(opts)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	method := ""
	var name *string
	if json.Unmarshal(body, &probe) == nil {
		method = probe.Method
		if p, err := decodeObject(probe.Params); err == nil {
			name = targetName(method, p)
		}
	}
	req, err := c.newRequest(ctx, body, method, name, o)
	if err != nil {
		return nil, err
	}
	return c.roundTrip(req, nil)
}

// encodeParams encodes params as a JSON object, member by member.
func encodeParams(params any) (map[string]json.RawMessage, error) {
	if params == nil {
		return map[string]json.RawMessage{}, nil
	}
	b, ok := params.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(params); err != nil {
			return nil, fmt.Errorf("encoding params: %w", err)
		}
	}
	p, err := decodeObject(b)
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	return p, nil
}

func decodeObject(b []byte) (map[string]json.RawMessage, error) {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) || len(bytes.TrimSpace(b)) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	if !isJSONObject(b) {
		return nil, errors.New("not a JSON object")
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	return p, nil
}

// targetName returns what Mcp-Name carries for method: params.name of
// tools/call and prompts/get, params.uri of resources/read, params.taskId
// of the tasks extension's tasks/get, tasks/update and tasks/cancel.
func targetName(method string, p map[string]json.RawMessage) *string {
	var member string
	switch method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read":
		member = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		member = "taskId"
	default:
		return nil
	}
	var s string
	if raw, ok := p[member]; !ok || strictjson.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

// send posts one request made of method and params (with its _meta) and
// reads the response.
func (c *Client) send(ctx context.Context, method string, params map[string]json.RawMessage, o *callOptions) (*Response, error) {
	id, body, err := c.encodeRequest(method, params, o)
	if err != nil {
		return nil, err
	}
	req, err := c.newRequest(ctx, body, method, targetName(method, params), o)
	if err != nil {
		return nil, err
	}
	return c.roundTrip(req, id)
}

// newRequest builds the POST with the transport's headers.
func (c *Client) newRequest(ctx context.Context, body []byte, method string, name *string, o *callOptions) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("mcptest: %w", err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if c.legacy {
		// 2025-11-25: the negotiated version and the session, once
		// initialize has answered; no Mcp-Method or Mcp-Name.
		if v := c.session.version.Load(); v != nil {
			h.Set(headerProtocolVersion, *v)
		}
		if sid := c.session.id.Load(); sid != nil {
			h.Set(headerSessionID, *sid)
		}
	} else {
		h.Set(headerProtocolVersion, mcp.ProtocolVersion)
		if method != "" {
			h.Set(headerMethod, headerValue(method))
		}
		if name != nil {
			h.Set(headerName, headerValue(*name))
		}
	}
	for k, vs := range c.opts.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	for k, vs := range o.header {
		h[k] = vs
	}
	for _, k := range o.without {
		h.Del(k)
	}
	return req, nil
}

func (c *Client) roundTrip(req *http.Request, id json.RawMessage) (*Response, error) {
	resp, err := c.target.send(req)
	if err != nil {
		return nil, fmt.Errorf("mcptest: sending the request: %w", err)
	}
	return readResponse(resp, id, c.opts.OnNotification)
}
