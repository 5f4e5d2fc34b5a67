package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/loglevel"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server/internal/round"
)

// Tool describes a tool. InputSchema and OutputSchema are sent as given
// (JSON Schema 2020-12 with $schema, $defs, $ref, $anchor and every other
// keyword, in their order; only insignificant whitespace is compacted) and
// compiled once when the tool is added.
type Tool struct {
	// Name identifies the tool in tools/call (params.name) and in the
	// Mcp-Name header: 1 to 128 ASCII letters, digits, '_', '-' and '.'.
	Name string `json:"name"`
	// Title is a name for people ("title"); omitted when empty.
	Title string `json:"title,omitempty"`
	// Description tells the model what the tool does and when to use it
	// ("description"); omitted when empty.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments object
	// ("inputSchema", always sent): a schema of "type": "object", or
	// {"type":"object"} when empty. Arguments are validated against it
	// before the handler runs (unless SkipInputValidation).
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the JSON Schema of the result's structuredContent
	// ("outputSchema"), which must then be present and match it; omitted
	// when empty.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are hints about the tool's behaviour ("annotations");
	// omitted when nil.
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	// Icons are images a client may show for the tool ("icons"); omitted
	// when empty.
	Icons []mcp.Icon `json:"icons,omitempty"`
	// Meta is the tool's "_meta" object, sent as given; omitted when
	// empty.
	Meta map[string]any `json:"_meta,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour (Tool.Annotations).
// They are what the server claims, not guarantees: a client must not trust
// them from a server it does not trust. A nil hint is omitted, and the
// client assumes the default given below.
type ToolAnnotations struct {
	// Title is a name for people ("title"); omitted when empty.
	Title string `json:"title,omitempty"`
	// ReadOnlyHint says the tool does not change its environment
	// ("readOnlyHint"; default false).
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint says the tool may destroy or overwrite data rather
	// than only add ("destructiveHint"; meaningful when not read-only;
	// default true).
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint says calling again with the same arguments has no
	// further effect ("idempotentHint"; meaningful when not read-only;
	// default false).
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint says the tool reaches an open world of outside
	// systems, such as the web, rather than a closed domain
	// ("openWorldHint"; default true).
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// ToolResult is the complete result of a tools/call. It is sent as
// {"resultType":"complete","content":[...],"structuredContent":...,
// "isError":true,"_meta":{...}}, each optional member omitted when empty.
type ToolResult struct {
	// Content holds the result's content blocks ("content", always sent:
	// [] when nil).
	Content []mcp.Block
	// StructuredContent is the result as a JSON value, sent as
	// "structuredContent" (encoded with encoding/json; a json.RawMessage
	// is sent as is); omitted when nil. A tool with an OutputSchema must
	// set it (unless IsError), and it is checked against that schema.
	StructuredContent any
	// IsError marks a tool execution failure the model should see: sent
	// as "isError": true, omitted when false. It is a result, not a
	// protocol error.
	IsError bool
	// Meta is added to the result's "_meta", beside
	// "io.modelcontextprotocol/serverInfo", which the server always sets
	// (on the 2026-07-28 protocol) and which a key of the same name here
	// cannot replace.
	Meta map[string]any
}

// TextResult returns a result holding one text block.
func TextResult(text string) *ToolResult {
	return textBlock(text, false)
}

// ErrorResult returns an isError result holding one text block: a tool
// execution failure the model can see, not a protocol error.
func ErrorResult(text string) *ToolResult {
	return textBlock(text, true)
}

// textBlock returns a result whose Content is one text block, the result
// and its block in one allocation: one fewer on every call of a tool that
// answers with TextResult (issue 23). Content's capacity is 1, as a
// one-element literal's is: appending to it copies. The block's fields
// are written in place, not built as an mcp.Block value and copied: that
// value (about 250 bytes) would sit, twice, in the frame of every handler
// TextResult is inlined into, deep in a call's stack (issue 23: a call
// within the 8 KiB stack net/http starts a connection's goroutine with).
func textBlock(text string, isError bool) *ToolResult {
	rb := &struct {
		res ToolResult
		blk [1]mcp.Block
	}{}
	rb.blk[0].Type, rb.blk[0].Text = mcp.BlockText, text
	rb.res.Content, rb.res.IsError = rb.blk[:], isError
	return &rb.res
}

// Prompt describes a prompt, as prompts/list lists it.
type Prompt struct {
	// Name identifies the prompt in prompts/get (params.name) and in the
	// Mcp-Name header ("name", required).
	Name string `json:"name"`
	// Title is a name for people ("title"); omitted when empty.
	Title string `json:"title,omitempty"`
	// Description says what the prompt is for ("description"); omitted
	// when empty.
	Description string `json:"description,omitempty"`
	// Arguments are the arguments prompts/get takes ("arguments"); omitted
	// when empty.
	Arguments []PromptArgument `json:"arguments,omitempty"`
	// Icons are images a client may show for the prompt ("icons");
	// omitted when empty.
	Icons []mcp.Icon `json:"icons,omitempty"`
	// Meta is the prompt's "_meta" object, sent as given; omitted when
	// empty.
	Meta map[string]any `json:"_meta,omitempty"`
}

// PromptArgument describes one argument of a prompt. Prompt arguments are
// strings.
type PromptArgument struct {
	// Name is the argument's key in prompts/get params.arguments ("name").
	Name string `json:"name"`
	// Title is a name for people ("title"); omitted when empty.
	Title string `json:"title,omitempty"`
	// Description says what the argument is ("description"); omitted
	// when empty.
	Description string `json:"description,omitempty"`
	// Required says prompts/get must carry the argument ("required");
	// omitted when false. A call without it is refused with -32602 before
	// the handler runs.
	Required bool `json:"required,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	// Role is who speaks the message: "user" or "assistant" ("role").
	Role mcp.Role `json:"role"`
	// Content is the message's single content block ("content").
	Content mcp.Block `json:"content"`
}

// PromptResult is the complete result of a prompts/get. It is sent as
// {"resultType":"complete","description":...,"messages":[...],
// "_meta":{...}}.
type PromptResult struct {
	// Description describes the prompt as built ("description"); omitted
	// when empty.
	Description string
	// Messages are the prompt's messages ("messages", always sent: []
	// when nil).
	Messages []PromptMessage
	// Meta is added to the result's "_meta", beside the serverInfo the
	// server sets (see ToolResult.Meta).
	Meta map[string]any
}

// Resource describes a static resource, as resources/list lists it.
type Resource struct {
	// URI identifies the resource in resources/read (params.uri) and in
	// the Mcp-Name header ("uri", required).
	URI string `json:"uri"`
	// Name is the resource's name, for machines ("name", required).
	Name string `json:"name"`
	// Title is a name for people ("title"); omitted when empty.
	Title string `json:"title,omitempty"`
	// Description says what the resource holds ("description"); omitted
	// when empty.
	Description string `json:"description,omitempty"`
	// MimeType is the media type of its contents ("mimeType"); omitted
	// when empty.
	MimeType string `json:"mimeType,omitempty"`
	// Size is the size of its contents in bytes, before any base64
	// encoding ("size"); omitted when nil (unknown).
	Size *int64 `json:"size,omitempty"`
	// Annotations are hints about the resource's audience, priority and
	// age ("annotations"); omitted when nil.
	Annotations *mcp.Annotations `json:"annotations,omitempty"`
	// Icons are images a client may show for the resource ("icons");
	// omitted when empty.
	Icons []mcp.Icon `json:"icons,omitempty"`
	// Meta is the resource's "_meta" object, sent as given; omitted when
	// empty.
	Meta map[string]any `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template (level 1: {name} expands to one path segment or query value),
// as resources/templates/list lists it.
type ResourceTemplate struct {
	// URITemplate is the template the resources' URIs match, sent as
	// "uriTemplate" (required).
	URITemplate string `json:"uriTemplate"`
	// Name is the family's name, for machines ("name", required).
	Name string `json:"name"`
	// Title is a name for people ("title"); omitted when empty.
	Title string `json:"title,omitempty"`
	// Description says what the resources hold ("description"); omitted
	// when empty.
	Description string `json:"description,omitempty"`
	// MimeType is the media type of every matching resource's contents,
	// when they share one ("mimeType"); omitted when empty.
	MimeType string `json:"mimeType,omitempty"`
	// Annotations are hints about the resources' audience, priority and
	// age ("annotations"); omitted when nil.
	Annotations *mcp.Annotations `json:"annotations,omitempty"`
	// Icons are images a client may show for the resources ("icons");
	// omitted when empty.
	Icons []mcp.Icon `json:"icons,omitempty"`
	// Meta is the template's "_meta" object, sent as given; omitted when
	// empty.
	Meta map[string]any `json:"_meta,omitempty"`
}

// ResourceResult is the complete result of a resources/read. It is sent as
// {"resultType":"complete","contents":[...],"ttlMs":...,"cacheScope":...,
// "_meta":{...}}.
type ResourceResult struct {
	// Contents are the resource's contents ("contents"): usually one
	// entry, more when the URI names several (a directory, say).
	Contents []mcp.ResourceContents
	// Cache overrides the server's caching hint for this read
	// (Options.ReadCache): it sets "ttlMs" and "cacheScope". Not sent
	// itself.
	Cache *CachePolicy
	// Meta is added to the result's "_meta", beside the serverInfo the
	// server sets (see ToolResult.Meta).
	Meta map[string]any
}

// RequestMeta is what a request's _meta envelope declares (params._meta
// of a 2026-07-28 request; on a 2025-11-25 session the version,
// capabilities and client info come from initialize, and the log level
// from logging/setLevel).
type RequestMeta struct {
	// ProtocolVersion is the requested protocol revision, from
	// "io.modelcontextprotocol/protocolVersion" (required), such as
	// "2026-07-28".
	ProtocolVersion string
	// ClientCapabilities are the capabilities declared on this request,
	// from "io.modelcontextprotocol/clientCapabilities" (required; {}
	// declares none). They hold for this request only.
	ClientCapabilities mcp.ClientCapabilities
	// ClientInfo is the self-reported client identity, from
	// "io.modelcontextprotocol/clientInfo", or nil when not sent. Do not
	// base decisions on it.
	ClientInfo *mcp.Implementation
	// LogLevel is the requested log threshold as sent, one of "debug",
	// "info", "notice", "warning", "error", "critical", "alert" and
	// "emergency", from "io.modelcontextprotocol/logLevel"; "" (not sent)
	// means no log notifications may be sent for this request.
	LogLevel string
	// ProgressToken is the request's "progressToken" (a JSON string or
	// integer, as sent), or nil when absent or null: progress
	// notifications carry it back.
	ProgressToken json.RawMessage
}

// notifier sends notifications that belong to one request.
type notifier interface {
	// Notify sends a notification on the request's stream. It fails once
	// the request has been answered or its stream has closed. It may be
	// called from several goroutines at once.
	Notify(ctx context.Context, method string, params any) error
}

// Call is what every request handler receives besides its own parameters:
// the envelope, the ways to ask the client for input, and the request's
// notification stream (Progress, Log).
//
// # Asking the client
//
// A tools/call, prompts/get or resources/read handler asks its client for
// input in plain sequence, with the methods of Call (Elicit,
// CreateFormElicitation, CreateURLElicitation, CreateMessage, ListRoots,
// AskAll):
//
//	name, err := req.CreateFormElicitation(ctx, "Your name?", nameSchema)
//	if err != nil {
//		return nil, err
//	}
//	email, err := req.CreateFormElicitation(ctx, "Your email?", emailSchema)
//	if err != nil {
//		return nil, err
//	}
//
// The same code serves both protocols:
//
//   - On a 2025-11-25 session each question is a real round trip: a
//     request on the stream of the client request being served (SEP-2260),
//     checked against the session's capabilities, waiting at most the
//     legacy handler's CallTimeout (600 s by default) or WithTimeout.
//   - On the stateless 2026-07-28 protocol no server may wait for its
//     client. A question whose answer is not known yet returns an error
//     wrapping mrtr.ErrInputRequired; the handler returns it (like any
//     error), and the server answers input_required with the question and
//     a requestState that seals (encrypts) every answer given so far. The
//     client retries with the answer, possibly on another instance that
//     shares the state key, and the handler runs again from the top: each
//     question returns its recorded answer, until it reaches the new one.
//   - In a task (the tasks extension) the question is put in the task
//     (input_required on tasks/get) and the handler waits for tasks/update.
//
// The re-run contract (2026-07-28): code before a question runs once per
// round, so keep it free of side effects (read, compute, ask; act only
// after the last answer). A side effect before a question happens again on
// every round: an email sent before asking is sent once per round, a
// counter bumped before asking is bumped once per round. Where an action
// must happen once even if the client replays a retry (a transfer, a
// deletion), redeem the confirmation first with Redeem and a ledger shared
// by the instances.
//
// Each question has a key: its name in the input_required result and in
// the client's answers. WithKey (or mrtr.InputRequest.Keyed for AskAll)
// chooses it; otherwise the server names it from the question's position
// ("baton:0", "baton:1", …, a namespace user keys may not use). A question
// is handed the answer recorded under its key only if it is the same
// question (same method and params, digested); a changed question is asked
// again, and the answers recorded after it are dropped. Questions without
// a key are matched by position, so they must be asked in an order that
// does not change between rounds (see Call about goroutines).
//
// # Concurrency
//
// Every method of a Call is safe to use from several goroutines of the
// handler at once, until the handler returns; calls made after that belong
// to no request. What concurrent questions mean depends on the protocol:
//
//   - On a 2025-11-25 session each is a real round trip: concurrent
//     questions are in flight together and each returns its own answer.
//   - On the stateless 2026-07-28 protocol the handler runs again on every
//     round and its questions replay. A question with a key of its own
//     (WithKey) is matched by that key, so goroutines may ask such
//     questions in any order. A question without one is named by its
//     position: questions reach the Call one at a time and are numbered in
//     that order, which, for goroutines racing to ask, is the scheduler's
//     and can change from round to round. A round that reaches two
//     questions of the previous round in the opposite order fails (-32603,
//     an error naming the cause) rather than hand an answer to the wrong
//     question. So from several goroutines, give each question a key, or
//     ask the questions that belong together in one AskAll.
//   - In a task, each question waits in place for tasks/update.
type Call struct {
	// ID is the JSON-RPC id of the request.
	ID mcp.ID
	// Method is the JSON-RPC method.
	Method string
	// Meta is the request's envelope.
	Meta RequestMeta

	round     *round.Round // nil for methods that cannot ask
	principal string
	notifier  notifier
	peer      era.Peer
	task      *taskRun // set when the call may run as a task

	storeTimeout time.Duration // Options.StoreTimeout, for Redeem

	mu     sync.Mutex    // held through each replayed question
	pos    int           // the next question's position (replay)
	replay replayScratch // what replayed questions reuse (ask_replay.go), guarded by mu
}

// newCall returns the Call a handler receives.
func newCall(id mcp.ID, method string, meta RequestMeta, rd *round.Round, principal string, n notifier) *Call {
	c := new(Call)
	initCall(c, id, method, &meta, rd, principal, n)
	return c
}

// initCall makes c, a zero Call, the one newCall returns: for a caller that
// allocates the Call with something else (callTool, with its ToolRequest).
// meta is copied from where it is, not passed by value: a copy in the
// frame of prepareToolCall, which is on the stack while the state is
// verified, is one more RequestMeta there (issue 23: a call within the
// 8 KiB stack net/http starts a connection's goroutine with).
func initCall(c *Call, id mcp.ID, method string, meta *RequestMeta, rd *round.Round, principal string, n notifier) {
	c.ID, c.Method, c.round, c.principal, c.notifier = id, method, rd, principal, n
	c.Meta = *meta
}

// Progress sends notifications/progress for this request. It does nothing
// when the request carried no progress token. total and message are
// omitted when zero.
func (c *Call) Progress(ctx context.Context, progress, total float64, message string) error {
	if c.Meta.ProgressToken == nil || c.notifier == nil {
		return nil
	}
	p := progressParams{Token: c.Meta.ProgressToken, Progress: progress, Message: message}
	if total > 0 {
		p.Total = &total
	}
	if err := c.notifier.Notify(ctx, "notifications/progress", p); err != nil {
		return fmt.Errorf("send progress: %w", err)
	}
	return nil
}

// Log sends notifications/message for this request when the request set a
// log level and level meets it; otherwise it does nothing.
//
// level is a slog level, mapped onto MCP's eight: below slog.LevelInfo is
// "debug", LevelInfo "info", LevelInfo+2 "notice", LevelWarn "warning",
// LevelError "error", LevelError+4 "critical", LevelError+8 "alert" and
// LevelError+12 "emergency"; a level between two of these is the lower.
func (c *Call) Log(ctx context.Context, level slog.Level, logger string, data any) error {
	name := loglevel.FromSlog(level)
	if c.notifier == nil || !loglevel.Enables(c.Meta.LogLevel, name) {
		return nil
	}
	if err := c.notifier.Notify(ctx, "notifications/message", logParams{Level: name, Logger: logger, Data: data}); err != nil {
		return fmt.Errorf("send log message: %w", err)
	}
	return nil
}

type progressParams struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    *float64        `json:"total,omitempty"`
	Message  string          `json:"message,omitempty"`
}

type logParams struct {
	Level  string `json:"level"`
	Logger string `json:"logger,omitempty"`
	Data   any    `json:"data"`
}

// ToolRequest is a tools/call as a handler sees it.
type ToolRequest struct {
	*Call
	// Name is the tool name.
	Name string
	// Arguments is the arguments object as sent ({} when absent).
	Arguments json.RawMessage

	fields *strictjson.Memo // the tool's key tables for Bind (nil: built per call)
}

// Bind decodes the arguments into v (a pointer) like encoding/json's
// Unmarshal, with one difference: object keys match struct fields exactly,
// never case-insensitively (a security property: "NAME" cannot slip a
// second value past a check of "name"). A field takes the key its json tag
// names or, without a tag, its Go name exactly as spelled: key "amount"
// does not fill field Amount. Rather than leave such a field silently
// zero, Bind fails when a key matches a field only if case is ignored; the
// error names the key, the field and the fix (the tag `json:"amount"`).
// Keys that match no field at all are ignored. On error v may be partly
// filled.
func (r *ToolRequest) Bind(v any) error {
	if err := strictjson.Unmarshal(r.Arguments, v); err != nil {
		return fmt.Errorf("tool %s: decode arguments: %w", r.Name, err)
	}
	if v == nil {
		return nil
	}
	if err := r.fields.Of(reflect.TypeOf(v)).Check(r.Arguments); err != nil {
		return fmt.Errorf("tool %s: decode arguments: %w", r.Name, err)
	}
	return nil
}

// PromptRequest is a prompts/get as a handler sees it.
type PromptRequest struct {
	*Call
	// Name is the prompt name (params.name).
	Name string
	// Arguments are the prompt's arguments (params.arguments), nil when
	// none were sent. Every argument the Prompt marks Required is present.
	Arguments map[string]string
}

// ResourceRequest is a resources/read as a handler sees it.
type ResourceRequest struct {
	*Call
	// URI is the requested URI.
	URI string
	// Params holds the template variables when the URI matched a template.
	Params map[string]string
}

// CompletionRequest is a completion/complete as a handler sees it.
type CompletionRequest struct {
	*Call
	// Ref is the prompt or resource template being completed.
	Ref CompletionRef
	// Argument is the argument being completed and its partial value.
	Argument CompletionArgument
	// Context holds previously resolved arguments.
	Context map[string]string
}

// CompletionRef names what is being completed (params.ref of
// completion/complete).
type CompletionRef struct {
	// Type is "ref/prompt" or "ref/resource" ("type").
	Type string `json:"type"`
	// Name is the prompt's name, for "ref/prompt" ("name").
	Name string `json:"name,omitempty"`
	// URI is the resource template's URI template, for "ref/resource"
	// ("uri").
	URI string `json:"uri,omitempty"`
}

// CompletionArgument is the argument being completed (params.argument of
// completion/complete).
type CompletionArgument struct {
	// Name is the prompt argument or template variable ("name").
	Name string `json:"name"`
	// Value is what the user has typed so far ("value").
	Value string `json:"value"`
}

// Completion is a completion/complete answer, sent as the result's
// "completion" member.
type Completion struct {
	// Values are the suggestions, best first ("values", always sent).
	// At most 100 are sent; beyond that the list is cut and hasMore set.
	Values []string `json:"values"`
	// Total is how many suggestions there are in all, which may exceed
	// the values sent ("total"); omitted when nil (unknown).
	Total *int `json:"total,omitempty"`
	// HasMore says there are more suggestions than were sent ("hasMore");
	// omitted when false.
	HasMore bool `json:"hasMore,omitempty"`
}

// Handler types.
type (
	// ToolHandler handles tools/call. Returning an error wrapping
	// mrtr.ErrInputRequired suspends the call; returning a *mcp.Error
	// (or an error with an RPCError method) sends that error; any other
	// error becomes an isError result carrying its text, unless it is
	// internal (it wraps a network, context, operating system or ledger
	// failure, or Internal marked it): then the text is a generic message
	// and the detail goes to the server log. See Internal for the rule.
	ToolHandler func(ctx context.Context, req *ToolRequest) (*ToolResult, error)
	// PromptHandler handles prompts/get; errors as for ToolHandler, except
	// that other errors become -32603 (internal ones with the generic
	// message).
	PromptHandler func(ctx context.Context, req *PromptRequest) (*PromptResult, error)
	// ResourceHandler handles resources/read for one resource or template.
	ResourceHandler func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error)
	// CompletionHandler handles completion/complete.
	CompletionHandler func(ctx context.Context, req *CompletionRequest) (*Completion, error)
)

// ResourceNotFound returns the error for an unknown resource URI: -32602
// with data.uri.
func ResourceNotFound(uri string) *mcp.Error {
	return uriError("Resource not found: %s", uri)
}

// uriError is the -32602 of a request whose uri names nothing it can
// serve: message (with %s for the uri) and the uri in data, both clipped.
func uriError(message, uri string) *mcp.Error {
	u := clip.String(uri)
	return &mcp.Error{Code: mcp.InvalidParams, Message: fmt.Sprintf(message, u), Data: map[string]string{"uri": u}}
}

// uriParam returns the request's params.uri, or -32602 when it has none.
func uriParam(r *request) (string, *mcp.Error) {
	if r.p.URI == nil || *r.p.URI == "" {
		return "", invalidParams("%s needs a uri", r.method)
	}
	return *r.p.URI, nil
}

// CachePolicy is a caching hint: how long (TTL, whole milliseconds) and
// how widely (Scope "public" or "private") a result may be cached. Complete
// results of server/discover, the lists and resources/read carry it;
// input_required results never do.
type CachePolicy struct {
	// TTL is how long a client may reuse the result, in milliseconds
	// (>= 0; 0: not at all), sent as "ttlMs".
	TTL int64
	// Scope is who may share a cached copy, sent as "cacheScope":
	// "public" (the same for every caller, so a shared cache may keep
	// it; the default when empty) or "private" (only for the principal
	// it was fetched for).
	Scope string
}
