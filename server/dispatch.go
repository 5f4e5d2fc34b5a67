package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"time"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/baton-mcp/baton/internal/clientaddr"
	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/loglevel"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/sse"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/round"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// _meta keys.
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID  = "io.modelcontextprotocol/subscriptionId"
)

// errNoResponse is returned (by identity) by the dispatch for a request
// that must not be answered: it was cancelled, or its stream is gone.
var errNoResponse = era.ErrNoResponse

type metaIn struct {
	ProtocolVersion    *string                 `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
	ClientInfo         *mcp.Implementation     `json:"io.modelcontextprotocol/clientInfo"`
	LogLevel           *string                 `json:"io.modelcontextprotocol/logLevel"`
	ProgressToken      json.RawMessage         `json:"progressToken"`
	Traceparent        *string                 `json:"traceparent"`
	Tracestate         *string                 `json:"tracestate"`
	Baggage            *string                 `json:"baggage"`
}

// paramsIn is the union of the params of every modern method, decoded once.
type paramsIn struct {
	Meta           *metaIn             `json:"_meta"`
	Name           *string             `json:"name"`
	URI            *string             `json:"uri"`
	Arguments      json.RawMessage     `json:"arguments"`
	InputResponses json.RawMessage     `json:"inputResponses"`
	RequestState   *string             `json:"requestState"`
	Cursor         *string             `json:"cursor"`
	Ref            *CompletionRef      `json:"ref"`
	Argument       *CompletionArgument `json:"argument"`
	Context        *struct {
		Arguments map[string]string `json:"arguments"`
	} `json:"context"`
	Notifications *SubscriptionFilter `json:"notifications"`
	TaskID        *string             `json:"taskId"`
}

// request is a decoded request.
type request struct {
	id     mcp.ID
	method string
	p      paramsIn
	raw    json.RawMessage // params as sent; nil on the one-pass path of core methods
	meta   RequestMeta
	header http.Header // HTTP only: for Mcp-Param checks
	peer   era.Peer    // server-to-client requests (legacy sessions)

	session string // the legacy session's id, for telemetry

	// suspended is set instead of an encoded result when a legacy
	// request's handler asked for input: the caller bridges it.
	suspended *round.Suspension

	// The requestState, verified once (by middleware's methodRequest or
	// by openRound), and what the result was, for middleware.
	opened  *seal.State
	openErr error
	out     resultNote

	scopes []string // the scopes the call was checked against (authz.go)
	// status and retryAfter, when set, are the HTTP status and Retry-After
	// of a refusal (a quota, a store that failed).
	status int32
	legacy bool // encode results for the 2025-11-25 era (here, beside status, to fill its word)
	// responsesValid is set when the envelope walk took the request
	// (decodeEnvelope): jsonscan.SkipValueWithin checked every value of
	// it, p.InputResponses included, so round.ParseValidResponses need
	// not check that again. (In status's word, as legacy is.)
	responsesValid bool
	retryAfter     time.Duration

	// frame is a legacy tools/call's whole response, written by
	// encodeToolResult around the result it returns (the result is its
	// middle): the legacy dispatch hands it to the session, which sends
	// it as is, when the result it answers with is that one (legacyFrame).
	// One buffer per call instead of the result and a copy of it in the
	// response (issue 23).
	frame []byte

	round mrtrCall // openRound's, allocated with the request

	// resp is what only serveModern uses: allocated with a modern request
	// (newModernRequest, decodeEnvelope), nil on a legacy one, which
	// answers through its session. Without it a legacy session's envelope
	// (legacyEnvelope, with the 8-byte header the allocator adds to an
	// object over 512 bytes that holds pointers) fits the 768-byte size
	// class, not the 896-byte one (issue 23).
	resp *modernResponse
}

// modernResponse is what serveModern answers a request with: the HTTP
// response's stream, the result's prefix, and the HTTP request (for the
// caller's address).
type modernResponse struct {
	stream sse.Stream
	prefix [64]byte
	hr     *http.Request
}

// clientAddr is the caller's address (HTTP only; trusted: the proxies
// whose X-Forwarded-For counts), for the task quotas. It is read from the
// HTTP request only when a task needs it: a plain call does not (and an
// envRequest keeps its 1152-byte size class).
func (r *request) clientAddr(trusted []netip.Prefix) netip.Addr {
	if r.resp == nil || r.resp.hr == nil {
		return netip.Addr{}
	}
	return clientaddr.Of(r.resp.hr, trusted)
}

// newModernRequest returns a request with its modernResponse, in one
// allocation.
func newModernRequest() *request {
	m := &struct {
		request
		resp modernResponse
	}{}
	m.request.resp = &m.resp
	return &m.request
}

// refuse sets the HTTP status and Retry-After the request's error is
// answered with.
func (r *request) refuse(status int, after time.Duration) {
	r.status, r.retryAfter = int32(status), after
}

// resultType is "complete" for modern requests and omitted for legacy ones.
func (r *request) resultType() string {
	if r.legacy {
		return ""
	}
	return "complete"
}

func invalidParams(format string, args ...any) *mcp.Error {
	return &mcp.Error{Code: mcp.InvalidParams, Message: "Invalid params: " + fmt.Sprintf(format, args...)}
}

// decodeRequest reads params and the _meta envelope. It does not check the
// version; see checkVersion.
func decodeRequest(msg *rpcwire.Message) (*request, *mcp.Error) {
	r := newModernRequest()
	r.id, r.method, r.raw = msg.ID, msg.Method, msg.Params
	if len(msg.Params) == 0 {
		return r, invalidParams("params with _meta (%s and %s) are required", metaProtocolVersion, metaClientCaps)
	}
	if err := strictjson.UnmarshalNoCopy(msg.Params, &r.p); err != nil {
		return r, invalidParams("%v", describeUnmarshal(err))
	}
	return r, readEnvelope(r)
}

// messageIn is a whole modern request, params included, for decoding a
// body in one pass.
type messageIn struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      mcp.ID          `json:"id"`
	Method  string          `json:"method"`
	Params  *paramsIn       `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// decodeModern decodes the body of an ordinary modern request (a request
// with an id, a method other than initialize, and params) in one pass. It
// reports false for anything else, malformed bodies and bodies over lim
// included, which take the general path (rpcwire.Decode, then
// decodeRequest) and get its exact errors. decodeEnvelope bounds what it
// takes as it walks it; the library decoder runs only on a body
// rpcwire.CheckLimits has passed.
func decodeModern(body []byte, lim rpcwire.Limits) (*request, *mcp.Error, bool) {
	el := envLimits(lim)
	if r, ok := decodeEnvelope(body, &el); ok {
		return r, readEnvelope(r), true
	}
	if rpcwire.CheckLimits(body, lim) != nil {
		return nil, nil, false
	}
	return decodeModernLib(body)
}

// decodeModernLib is decodeModern's decoding with the library decoder, for
// the bodies decodeEnvelope leaves to it. The body's limits were checked.
func decodeModernLib(body []byte) (*request, *mcp.Error, bool) {
	var m messageIn
	if strictjson.UnmarshalNoCopy(body, &m) != nil || m.JSONRPC != rpcwire.Version || m.ID.IsZero() ||
		m.Method == "" || m.Method == "initialize" || m.Params == nil || m.Result != nil || m.Error != nil {
		return nil, nil, false
	}
	if !onePass(m.Method) { // extension methods read their params as sent
		return nil, nil, false
	}
	r := newModernRequest()
	r.id, r.method, r.p = m.ID, m.Method, *m.Params
	return r, readEnvelope(r), true
}

// readEnvelope checks the _meta envelope of decoded params and fills
// r.meta.
func readEnvelope(r *request) *mcp.Error {
	m := r.p.Meta
	switch {
	case m == nil:
		return invalidParams("params._meta is required (with %s and %s)", metaProtocolVersion, metaClientCaps)
	case m.ProtocolVersion == nil || *m.ProtocolVersion == "":
		return invalidParams("params._meta is missing %s", metaProtocolVersion)
	case m.ClientCapabilities == nil:
		return invalidParams("params._meta is missing %s", metaClientCaps)
	}
	r.meta = RequestMeta{ProtocolVersion: *m.ProtocolVersion, ClientCapabilities: *m.ClientCapabilities, ClientInfo: m.ClientInfo}
	if m.LogLevel != nil {
		if !loglevel.Valid(*m.LogLevel) {
			return invalidParams("unknown log level %s", clip.Quote(*m.LogLevel))
		}
		r.meta.LogLevel = *m.LogLevel
	}
	if tok := bytes.TrimSpace(m.ProgressToken); len(tok) > 0 && !bytes.Equal(tok, []byte("null")) {
		var id mcp.ID
		if err := id.UnmarshalJSON(tok); err != nil {
			return invalidParams("progressToken must be a string or an integer")
		}
		r.meta.ProgressToken = id.Raw()
	}
	return nil
}

func describeUnmarshal(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s must be %s, not %s", clip.String(te.Field), jsonKind(te.Type.Kind().String()), clip.String(te.Value))
	}
	return clip.String(err.Error())
}

// jsonKind names the JSON type a Go kind decodes from, with its article.
func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "map", "struct", "ptr":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr":
		return "an integer"
	case "float32", "float64":
		return "a number"
	default:
		return "a JSON value"
	}
}

// supportedVersions lists the protocol versions this server serves.
func (s *Server) supportedVersions() []string {
	v := []string{mcp.ProtocolVersion}
	if s.legacy != nil {
		v = append(v, s.legacy.Versions()...)
	}
	return v
}

func (s *Server) checkVersion(v string) *mcp.Error {
	if v == mcp.ProtocolVersion {
		return nil
	}
	return &mcp.Error{
		Code:    mcp.UnsupportedProtocolVersion,
		Message: "Unsupported protocol version",
		Data:    map[string]any{"supported": s.supportedVersions(), "requested": v},
	}
}

// rpcErrorer is implemented by errors that choose their wire form.
type rpcErrorer interface{ RPCError() *mcp.Error }

func asRPCError(err error) (*mcp.Error, bool) {
	if e, ok := mcp.AsError(err); ok {
		return e, true
	}
	var re rpcErrorer
	if errors.As(err, &re) {
		return re.RPCError(), true
	}
	return nil, false
}

// handle dispatches a decoded modern request (other than
// subscriptions/listen) and returns the encoded result.
func (s *Server) handle(ctx context.Context, r *request, n notifier) (json.RawMessage, *mcp.Error) {
	if len(s.opts.Middleware) == 0 && s.tel == nil {
		return s.route(ctx, r, n)
	}
	return s.intercept(ctx, s.methodRequest(ctx, r), func(ctx context.Context) ([]byte, resultNote, *mcp.Error) {
		res, e := s.route(ctx, r, n)
		return res, r.out, e
	})
}

// route dispatches a decoded request by its method.
func (s *Server) route(ctx context.Context, r *request, n notifier) (json.RawMessage, *mcp.Error) {
	if e := s.authorizeRequest(ctx, r); e != nil {
		return nil, e
	}
	switch r.method {
	case "server/discover":
		return s.discover(ctx)
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		return s.list(ctx, r)
	case "tools/call":
		return s.callTool(ctx, r, n)
	case "prompts/get":
		return s.getPrompt(ctx, r, n)
	case "resources/read":
		return s.readResource(ctx, r, n)
	case "completion/complete":
		return s.complete(ctx, r, n)
	}
	if res, e, ok := s.serveExtension(ctx, r, n); ok {
		return res, e
	}
	return nil, methodNotFound(r.method)
}

func methodNotFound(method string) *mcp.Error {
	return &mcp.Error{Code: mcp.MethodNotFound, Message: "Method not found: " + clip.String(method)}
}

// resultMeta returns the result _meta: serverInfo plus extra keys for a
// modern request, only the extra keys (or nothing) for a legacy one.
func (s *Server) resultMeta(r *request, extra map[string]any) json.RawMessage {
	if r.legacy {
		if len(extra) == 0 {
			return nil
		}
		b, err := json.Marshal(extra)
		if err != nil {
			s.log.Error("encode result _meta", "err", err)
			return nil
		}
		return b
	}
	if len(extra) == 0 {
		return s.infoMeta
	}
	m := make(map[string]any, len(extra)+1)
	for k, v := range extra {
		m[k] = v
	}
	m[metaServerInfo] = s.info
	b, err := json.Marshal(m)
	if err != nil {
		s.log.Error("encode result _meta", "err", err)
		return s.infoMeta
	}
	return b
}

func (s *Server) encode(v any) (json.RawMessage, *mcp.Error) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encode result", "err", err)
		return nil, &mcp.Error{Code: mcp.InternalError, Message: "Internal error: the result could not be encoded"}
	}
	return b, nil
}

// capabilities returns what the server advertises now: tools, prompts and
// resources while any are registered (each with listChanged), completions
// when a handler is set, logging when Options.Logging is on, and the
// extensions offered to 2025-11-25 clients (see modernCapabilities for
// server/discover's).
func (s *Server) capabilities() era.ServerCapabilities {
	c := s.coreCapabilities()
	c.Extensions = s.advertised(true)
	return c
}

func (s *Server) coreCapabilities() era.ServerCapabilities {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var c era.ServerCapabilities
	if s.tools.len() > 0 {
		c.Tools = &era.ListCapability{ListChanged: true}
	}
	if s.prompts.len() > 0 {
		c.Prompts = &era.ListCapability{ListChanged: true}
	}
	if s.resources.len() > 0 || len(s.templates) > 0 {
		c.Resources = &era.ResourceCapability{Subscribe: true, ListChanged: true}
	}
	if s.completion != nil {
		c.Completions = &struct{}{}
	}
	if s.opts.Logging {
		c.Logging = &struct{}{}
	}
	return c
}

// modernCapabilities are Capabilities plus the extensions, for
// server/discover.
func (s *Server) modernCapabilities() era.ServerCapabilities {
	c := s.coreCapabilities()
	c.Extensions = s.advertised(false)
	return c
}

type discoverWire struct {
	ResultType        string                 `json:"resultType"`
	SupportedVersions []string               `json:"supportedVersions"`
	Capabilities      era.ServerCapabilities `json:"capabilities"`
	Instructions      string                 `json:"instructions,omitempty"`
	TTL               int64                  `json:"ttlMs"`
	Scope             string                 `json:"cacheScope"`
	Meta              json.RawMessage        `json:"_meta"`
}

func (s *Server) discover(ctx context.Context) (json.RawMessage, *mcp.Error) {
	caps, private := s.callerCapabilities(ctx, s.modernCapabilities())
	scope := s.opts.ListCache.Scope
	if private {
		scope = "private"
	}
	return s.encode(discoverWire{
		ResultType:        "complete",
		SupportedVersions: s.supportedVersions(),
		Capabilities:      caps,
		Instructions:      s.opts.Instructions,
		TTL:               s.opts.ListCache.TTL,
		Scope:             scope,
		Meta:              s.infoMeta,
	})
}

// page cuts a list by cursor and page size. The cursor is the offset of the
// next item, base64url-encoded.
func (s *Server) page(n int, cursor *string) (start, end int, next string, e *mcp.Error) {
	if cursor != nil {
		b, err := base64.RawURLEncoding.DecodeString(*cursor)
		off, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || off < 0 || off > n {
			return 0, 0, "", invalidParams("invalid cursor %s", clip.Quote(*cursor))
		}
		start = off
	}
	end = n
	if ps := s.opts.PageSize; ps > 0 && start+ps < n {
		end = start + ps
		next = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
	}
	return start, end, next, nil
}

type listWire struct {
	ResultType string             `json:"resultType,omitempty"`
	Tools      *[]json.RawMessage `json:"tools,omitempty"`
	Prompts    *[]json.RawMessage `json:"prompts,omitempty"`
	Resources  *[]json.RawMessage `json:"resources,omitempty"`
	Templates  *[]json.RawMessage `json:"resourceTemplates,omitempty"`
	NextCursor string             `json:"nextCursor,omitempty"`
	TTL        *int64             `json:"ttlMs,omitempty"`
	Scope      string             `json:"cacheScope,omitempty"`
	Meta       json.RawMessage    `json:"_meta,omitempty"`
}

// cacheHint returns the caching fields for a modern result; legacy results
// carry none.
func cacheHint(r *request, c CachePolicy) (*int64, string) {
	if r.legacy {
		return nil, ""
	}
	ttl := c.TTL
	return &ttl, c.Scope
}

// list encodes one page of a category. An empty category is -32601: its
// capability is not advertised. tools/list and prompts/list count only their
// own items; the two resource lists answer while either resources or
// templates exist.
func (s *Server) list(ctx context.Context, r *request) (json.RawMessage, *mcp.Error) {
	s.mu.RLock()
	var (
		n     int
		item  func(i int) (json.RawMessage, Item)
		field **[]json.RawMessage
		w     = listWire{ResultType: r.resultType(), Meta: s.resultMeta(r, nil)}
		avail bool
	)
	cache := s.opts.ListCache
	switch r.method {
	case "tools/list":
		n, avail, field = s.tools.len(), s.tools.len() > 0, &w.Tools
		item = func(i int) (json.RawMessage, Item) {
			e := s.tools.at(i)
			return e.wire, Item{Kind: ItemTool, Name: e.tool.Name, Scopes: e.opts.Scopes}
		}
	case "prompts/list":
		n, avail, field = s.prompts.len(), s.prompts.len() > 0, &w.Prompts
		item = func(i int) (json.RawMessage, Item) {
			e := s.prompts.at(i)
			return e.wire, Item{Kind: ItemPrompt, Name: e.prompt.Name, Scopes: e.opts.Scopes}
		}
	case "resources/list":
		n, field = s.resources.len(), &w.Resources
		item = func(i int) (json.RawMessage, Item) {
			e := s.resources.at(i)
			if e.unlisted {
				return nil, Item{}
			}
			return e.wire, e.item()
		}
		avail = s.resources.len()+len(s.templates) > 0
	case "resources/templates/list":
		n, field = len(s.templates), &w.Templates
		item = func(i int) (json.RawMessage, Item) {
			e := s.templates[i]
			return e.wire, Item{Kind: ItemResourceTemplate, Name: e.tmpl.URITemplate, Scopes: e.opts.Scopes}
		}
		avail = s.resources.len()+len(s.templates) > 0
	}
	if !avail {
		s.mu.RUnlock()
		return nil, methodNotFound(r.method)
	}
	// What this caller may see (authz.go), then the page of it. The
	// filter runs outside the lock: Options.Visible is user code.
	wires, its := make([]json.RawMessage, n), make([]Item, n)
	for i := 0; i < n; i++ {
		wires[i], its[i] = item(i)
	}
	s.mu.RUnlock()
	all := wires[:0]
	scoped := false
	for i, it := range its {
		scoped = scoped || len(it.Scopes) > 0
		if wires[i] != nil && s.visible(ctx, it) {
			all = append(all, wires[i])
		}
	}
	if s.listPrivate(scoped) {
		cache.Scope = "private"
	}
	w.TTL, w.Scope = cacheHint(r, cache)
	start, end, next, e := s.page(len(all), r.p.Cursor)
	if e != nil {
		return nil, e
	}
	items := all[start:end:end]
	*field, w.NextCursor = &items, next
	return s.encode(w)
}

// mrtrCall holds what the three MRTR methods share: the round and the
// binding its state must match. openRound sets the binding's method,
// target and principal (the principal and the scopes checked:
// stateSubject); the arguments' digest is computed at most once, and only
// when a state is verified or sealed (digested). The binding is held
// here, in the request's allocation, not allocated when the digest is
// known: two allocations fewer per two-round flow, for the same size
// (the caller's principal, which it held too, is read from the context
// by the few who need it).
type mrtrCall struct {
	round    *round.Round
	bound    seal.Binding
	args     json.RawMessage
	digested bool
}

func (mc *mrtrCall) binding() (seal.Binding, error) {
	if !mc.digested {
		d, err := seal.ArgumentsDigest(mc.args)
		if err != nil {
			return seal.Binding{}, err
		}
		mc.bound.Arguments, mc.digested = d, true
	}
	return mc.bound, nil
}

// knownArgs returns the arguments digest if it has been computed.
func (mc *mrtrCall) knownArgs() (seal.Digest, bool) {
	if !mc.digested {
		return seal.Digest{}, false
	}
	return mc.bound.Arguments, true
}

// openRound verifies requestState against the request, parses
// inputResponses, and returns the round. The state's signature, expiry and
// content are verified before anything the request carries is read beyond
// the one linear pass that bounded the body (the envelope walk, or
// rpcwire.CheckLimits for a body the walk leaves to the library); then
// the method, target and principal are compared, and only then are the
// arguments canonicalised and compared. A refused state is -32602.
//
// rd, if not nil, is a new Round allocated with something else (a
// tools/call's with its Call) for the call's round; nil allocates one.
func (s *Server) openRound(ctx context.Context, r *request, target string, args json.RawMessage, opts round.Options, rd *round.Round) (*mrtrCall, *mcp.Error) {
	mc := &r.round // allocated with the request
	// Cleared, then set field by field: a composite literal would be
	// built in openRound's frame and copied (see beginRound).
	*mc = mrtrCall{}
	mc.bound.Method, mc.bound.Target, mc.args = r.method, target, args
	mc.bound.Principal = stateSubject(PrincipalFromContext(ctx), r.scopes)
	var st *seal.State
	if r.p.RequestState != nil {
		var re *mcp.Error
		if st, re = s.checkState(ctx, r, mc); re != nil {
			return nil, re
		}
	}
	return s.beginRound(ctx, r, mc, st, opts, rd)
}

// beginRound is openRound's work after the state: it reads inputResponses
// and starts the call's round. It is a function of its own so that
// openRound's frame, under the state's opening and verification, stays
// small (see prepareToolCall).
//
//go:noinline
func (s *Server) beginRound(ctx context.Context, r *request, mc *mrtrCall, st *seal.State, opts round.Options, rd *round.Round) (*mrtrCall, *mcp.Error) {
	parse := round.ParseResponses
	if r.responsesValid {
		parse = round.ParseValidResponses
	}
	responses, err := parse(r.p.InputResponses)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	opts.Span = s.spanRef(ctx)
	opts.Digests = &s.digests
	if rd == nil {
		rd = new(round.Round)
	}
	rd.Init(r.meta.ClientCapabilities, responses, st, opts)
	mc.round = rd
	return mc, nil
}

// checkState opens and verifies the request's state and checks it was
// issued for this request (mc: its method, target, principal and
// arguments, in that order), and sets mc's binding.
//
//go:noinline
func (s *Server) checkState(ctx context.Context, r *request, mc *mrtrCall) (*seal.State, *mcp.Error) {
	st, err := s.openState(r)
	if err != nil {
		return nil, s.stateError(ctx, r, mc.bound.Target, err)
	}
	d, err := st.Check(mc.bound.Method, mc.bound.Target, mc.bound.Principal, mc.args)
	if err != nil {
		return nil, s.stateError(ctx, r, mc.bound.Target, err)
	}
	mc.bound.Arguments, mc.digested = d, true
	return st, nil
}

// stateError is the wire form of a refused state or of arguments that
// have no canonical form.
func (s *Server) stateError(ctx context.Context, r *request, target string, err error) *mcp.Error {
	s.record(ctx, measurement{Kind: measureStateRefused, Reason: seal.RefusalKind(err)})
	if se := (*seal.StateError)(nil); errors.As(err, &se) && se.Detail != "" {
		// The client is told one reason; the log says which part of the
		// binding differed.
		s.log.Debug("requestState refused", "method", r.method, "target", clip.String(target), "detail", se.Detail)
	}
	if e, ok := asRPCError(err); ok {
		return e
	}
	return invalidParams("%v", err)
}

// suspend turns a handler's ErrInputRequired into an input_required result.
func (s *Server) suspend(r *request, mc *mrtrCall) (json.RawMessage, *mcp.Error) {
	b, err := mc.binding()
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	s.keyNeeded()
	irr, err := mc.round.Suspended(s.sealer, b)
	if err != nil {
		return nil, s.suspendFailed(r, err)
	}
	r.out.inputRequired, r.out.flow = true, irr.Flow
	if r.legacy {
		kept := irr // a copy: irr itself stays on the stack
		r.suspended = &kept
		return nil, nil
	}
	return s.encodeInputRequired(&irr)
}

// encodeInputRequired writes a modern request's input_required result. It
// is a function of its own so that suspend's frame, on the stack while
// the state is sealed, stays small (see prepareToolCall).
//
//go:noinline
func (s *Server) encodeInputRequired(irr *round.Suspension) (json.RawMessage, *mcp.Error) {
	// Written into a reused buffer, then copied into one allocation of its
	// length: 724 bytes, a 768-byte allocation, for BenchmarkMRTRTwoRounds's
	// first round, where reserving room up front (512 bytes more than the
	// state) took 1,024 (issue 23: bytes allocated per flow).
	bp := s.scratch.Get(1024)
	out := append(*bp, `{"resultType":"input_required"`...)
	if len(irr.Questions) > 0 {
		out = append(out, `,"inputRequests":`...)
		var err error
		if out, err = irr.Questions.AppendJSON(out); err != nil {
			s.log.Error("encode input requests", "err", err)
			return nil, &mcp.Error{Code: mcp.InternalError, Message: "Internal error: the input requests could not be encoded"}
		}
	}
	// The sealer writes only base64url characters and dots: nothing to
	// escape (jsonw.String checked each of its 400 or more bytes).
	out = append(out, `,"requestState":"`...)
	out = append(out, irr.RequestState...)
	out = append(out, '"')
	out = append(out, `,"_meta":`...)
	out = append(out, s.infoMeta...)
	out = append(out, '}')
	res := append(make([]byte, 0, len(out)), out...)
	s.scratch.Put(bp, out, maxScratch) // a rare huge one is not kept
	return res, nil
}

// maxScratch is the largest buffer encodeInputRequired keeps for reuse.
const maxScratch = 64 << 10

// suspendFailed is the error for a call whose round could not be
// suspended (its state not sealed). It is out of line so that suspend's
// frame, on the stack while the state is sealed, stays small (see
// prepareToolCall).
//
//go:noinline
func (s *Server) suspendFailed(r *request, err error) *mcp.Error {
	if e, ok := asRPCError(err); ok {
		return e
	}
	if isInternal(err) {
		return &mcp.Error{Code: mcp.InternalError, Message: s.clientText(r.method+" (suspending)", err)}
	}
	s.log.Error("suspend call", "err", err)
	return &mcp.Error{Code: mcp.InternalError, Message: "Internal error: " + err.Error()}
}

// invoke runs a handler and turns a panic into -32603, so one faulty
// handler cannot take the server down. The handler is named kind and name
// ("tool echo"), joined only when it panics: not on every call.
func invoke[R any](s *Server, kind, name string, f func() (R, error)) (res R, err error) {
	defer func() {
		if p := recover(); p != nil {
			what := kind
			if name != "" {
				what += " " + name
			}
			s.log.Error("handler panicked", "handler", what, "panic", p, "stack", string(debug.Stack()))
			err = &mcp.Error{Code: mcp.InternalError, Message: "Internal error: the " + what + " handler failed"}
		}
	}()
	return f()
}

// handlerError maps an error from a prompt, resource or completion handler.
func (s *Server) handlerError(ctx context.Context, what string, err error) *mcp.Error {
	if ctx.Err() != nil {
		return errNoResponse
	}
	if e, ok := asRPCError(err); ok {
		return e
	}
	if isInternal(err) {
		return &mcp.Error{Code: mcp.InternalError, Message: s.clientText(what, err)}
	}
	s.log.Error("handler failed", "handler", what, "err", err)
	return &mcp.Error{Code: mcp.InternalError, Message: "Internal error: " + err.Error()}
}

func (s *Server) callTool(ctx context.Context, r *request, n notifier) (json.RawMessage, *mcp.Error) {
	req, e, mc, asTask, out, re := s.prepareToolCall(ctx, r, n)
	if req == nil {
		return out, re
	}
	if asTask {
		return s.callToolAsTask(ctx, r, e, mc, req)
	}
	res, err := invoke(s, "tool", req.Name, func() (*ToolResult, error) { return e.handler(ctx, req) })
	return s.toolOutcome(ctx, r, e, mc, req.Name, res, err)
}

// prepareToolCall does a tools/call's work before its handler runs: the
// tool, the client's capabilities, the arguments' checks, the round and
// the ToolRequest. It returns a nil req with the call's answer when the
// call ends before its handler. It is a function of its own, not part of
// callTool, so that its frame is gone when the handler runs: a 2025-11-25
// call over HTTP then fits in the connection goroutine's 8 KiB stack,
// which the garbage collector would otherwise shrink at each cycle and the
// next call grow again (a stack copy per connection per cycle, about 1 µs
// per call in issue 23's session-call profile). Its own rare branches are
// out of line too, since its frame is on the stack while a retry's state
// is opened and verified (openRound): about 1 KiB with everything it
// inlined, 288 bytes since (bench's TestFlowStack).
//
//go:noinline
func (s *Server) prepareToolCall(ctx context.Context, r *request, n notifier) (req *ToolRequest, e *toolEntry, mc *mrtrCall, asTask bool, out json.RawMessage, re *mcp.Error) {
	if r.p.Name == nil || *r.p.Name == "" {
		return nil, nil, nil, false, nil, invalidParams("tools/call needs a tool name")
	}
	name := *r.p.Name
	s.mu.RLock()
	e, _ = s.tools.get(name)
	s.mu.RUnlock()
	if e == nil {
		return nil, nil, nil, false, nil, unknownTool(name)
	}
	if re := toolGate(r, e, name, &asTask); re != nil {
		return nil, nil, nil, false, nil, re
	}
	args := r.p.Arguments
	if t := bytes.TrimSpace(args); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		args = json.RawMessage("{}")
	} else if t[0] != '{' {
		return nil, nil, nil, false, nil, invalidParams("tools/call arguments must be a JSON object")
	}
	if r.header != nil && len(e.headers) > 0 {
		if he := toolParamHeaders(r, e, args); he != nil {
			return nil, nil, nil, false, nil, he
		}
	}
	// The Call, the ToolRequest and the call's Round in one allocation:
	// two fewer per tools/call.
	tc := &struct {
		req   ToolRequest
		call  Call
		round round.Round
	}{}
	mc, re = s.openRound(ctx, r, name, args, round.Options{AnswersWithoutState: e.opts.AnswersWithoutState}, &tc.round)
	if re != nil {
		return nil, nil, nil, false, nil, re
	}
	validate := !e.opts.SkipInputValidation && !e.anyArgs
	if d, ok := mc.knownArgs(); validate && ok && e.valid.has(d) {
		validate = false // a retry of arguments that passed before
	}
	if validate && e.flat.accepts(args) {
		validate = false // certainly valid (flatschema.go); the validator words a refusal
	}
	if validate {
		if out, re, ok := s.validateToolArgs(r, e, args); !ok {
			return nil, nil, nil, false, out, re
		}
	}
	call := &tc.call
	initCall(call, r.id, r.method, &r.meta, mc.round, PrincipalFromContext(ctx), n)
	call.storeTimeout = s.opts.StoreTimeout
	call.peer = r.peer
	if e.opts.RunsOnce && r.peer != nil {
		call.peer = stayPeer{r.peer} // its questions wait in place
	}
	req = &tc.req
	req.Call, req.Name, req.Arguments, req.fields = call, name, args, &e.fields
	return req, e, mc, asTask, nil, nil
}

// prepareToolCall's rare branches are functions of their own, out of line,
// so that its frame, on the stack while the state is opened and verified
// (openRound), stays small (see prepareToolCall).

// unknownTool is the error for a tools/call of a tool not registered.
//
//go:noinline
func unknownTool(name string) *mcp.Error {
	return invalidParams("unknown tool %s", clip.Quote(name))
}

// toolGate checks the client's capabilities against what tool e requires,
// and sets *asTask when the call runs as a task.
func toolGate(r *request, e *toolEntry, name string, asTask *bool) *mcp.Error {
	if missing, ok := r.meta.ClientCapabilities.Missing(e.opts.Requires); ok {
		return toolMissing(missing, name)
	}
	if e.opts.Task != TaskForbidden {
		// Only a modern request can declare the extension; a task-required
		// tool refuses every other request before its handler runs.
		*asTask = !r.legacy && r.meta.ClientCapabilities.HasExtension(mcp.TasksExtension)
		if !*asTask && e.opts.Task == TaskRequired {
			return taskRequired(name)
		}
	}
	return nil
}

// toolMissing is the error for a call of a tool whose required client
// capabilities (missing) the request did not declare.
//
//go:noinline
func toolMissing(missing mcp.ClientCapabilities, name string) *mcp.Error {
	return (&mcp.MissingCapabilityError{Required: missing, What: "tool " + name}).RPCError()
}

// taskRequired is the error for a call, not as a task, of a tool that
// runs only as one.
//
//go:noinline
func taskRequired(name string) *mcp.Error {
	err := mcp.ClientCapabilities{}.RequireExtension("tool "+name+" (it runs only as a task)", mcp.TasksExtension)
	re, _ := asRPCError(err)
	return re
}

// toolParamHeaders checks the Mcp-Param headers of a call of tool e
// against its arguments.
//
//go:noinline
func toolParamHeaders(r *request, e *toolEntry, args json.RawMessage) *mcp.Error {
	var m map[string]json.RawMessage
	if err := strictjson.Unmarshal(args, &m); err != nil {
		return invalidParams("tools/call arguments: %v", err)
	}
	return checkParamHeaders(r.header, e.headers, m)
}

// validateToolArgs validates a call's arguments against tool e's input
// schema. It reports false with the call's answer when they fail: a
// protocol error for arguments that are not JSON, an isError result for
// arguments the schema refuses.
//
//go:noinline
func (s *Server) validateToolArgs(r *request, e *toolEntry, args json.RawMessage) (json.RawMessage, *mcp.Error, bool) {
	inst, err := strictjson.DecodeValue(args)
	if err != nil {
		return nil, invalidParams("tools/call arguments: %v", err), false
	}
	if msg := validateArguments(e.input, inst); msg != "" {
		out, re := s.encodeToolResult(r, ErrorResult(msg), nil)
		return out, re, false
	}
	return nil, nil, true
}

// toolOutcome turns what a tool handler returned into the call's answer:
// the encoded result, input_required, or a protocol error.
func (s *Server) toolOutcome(ctx context.Context, r *request, e *toolEntry, mc *mrtrCall, name string, res *ToolResult, err error) (json.RawMessage, *mcp.Error) {
	if err != nil {
		return s.toolFailed(ctx, r, e, mc, name, err)
	}
	if res == nil {
		return nil, &mcp.Error{Code: mcp.InternalError, Message: fmt.Sprintf("Internal error: tool %q returned no result", name)}
	}
	var sc json.RawMessage
	if e.output != nil && !res.IsError {
		var oe *mcp.Error
		if sc, oe = s.checkOutput(name, e.output, res.StructuredContent); oe != nil {
			return nil, oe
		}
	}
	return s.encodeToolResult(r, res, sc)
}

// toolFailed is toolOutcome for a handler that returned an error. It is
// out of line, as prepareToolCall is, to keep toolOutcome's frame small.
//
//go:noinline
func (s *Server) toolFailed(ctx context.Context, r *request, e *toolEntry, mc *mrtrCall, name string, err error) (json.RawMessage, *mcp.Error) {
	if ctx.Err() != nil {
		return nil, errNoResponse
	}
	if errors.Is(err, mrtr.ErrInputRequired) {
		if r.legacy && errors.Is(err, era.ErrParked) {
			return nil, errNoResponse // the legacy adapter keeps the call as its record
		}
		out, se := s.suspend(r, mc)
		if d, ok := mc.knownArgs(); se == nil && ok && !e.opts.SkipInputValidation && !e.anyArgs {
			e.valid.add(d) // the retry may skip validation
		}
		return out, se
	}
	var ue *URLElicitationRequiredError
	if errors.As(err, &ue) {
		return s.urlRequired(r, mc, ue)
	}
	if re, ok := asRPCError(err); ok {
		return nil, re
	}
	return s.encodeToolResult(r, ErrorResult(s.clientText("tool "+name, err)), nil)
}

// checkOutput validates the structuredContent of a tool's result against
// its output schema and returns it encoded. A missing or mismatched one is
// a bug of the server's own code: it is logged and answered -32603, so an
// invalid result never reaches the client.
func (s *Server) checkOutput(name string, sch *jsv.Schema, sc any) (json.RawMessage, *mcp.Error) {
	var b json.RawMessage
	switch v := sc.(type) {
	case nil:
	case json.RawMessage:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			s.log.Error("encode structuredContent", "tool", name, "err", err)
			return nil, &mcp.Error{Code: mcp.InternalError, Message: "Internal error: structuredContent could not be encoded"}
		}
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		s.log.Error("tool result lacks the structuredContent its outputSchema requires", "tool", name)
		return nil, &mcp.Error{Code: mcp.InternalError, Message: fmt.Sprintf("Internal error: tool %q declares an outputSchema but its result has no structuredContent", name)}
	}
	inst, err := strictjson.DecodeValue(b)
	if err != nil {
		s.log.Error("tool result has malformed structuredContent", "tool", name, "err", err)
		return nil, &mcp.Error{Code: mcp.InternalError, Message: fmt.Sprintf("Internal error: tool %q returned structuredContent that is not valid JSON", name)}
	}
	if err := sch.Validate(inst); err != nil {
		s.log.Error("tool result does not match its outputSchema", "tool", name, "problems", schemaProblems(err))
		return nil, &mcp.Error{Code: mcp.InternalError, Message: fmt.Sprintf("Internal error: tool %q returned structuredContent that does not match its outputSchema (details in the server log)", name)}
	}
	return b, nil
}

// encodeToolResult encodes a tool result. sc, when set, is the result's
// structuredContent already encoded (and checked).
func (s *Server) encodeToolResult(r *request, res *ToolResult, sc json.RawMessage) (json.RawMessage, *mcp.Error) {
	// Written by hand: this runs on every tools/call.
	b := make([]byte, 0, resultCap(r, res, sc))
	pre := 0
	if !r.legacy {
		b = append(b, `{"resultType":"complete","content":[`...)
	} else {
		b = rpcwire.ResultPrefix(b, r.id) // the response around the result: see request.frame
		pre = len(b)
		b = append(b, `{"content":[`...)
	}
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = c.AppendJSON(b); err != nil {
			return nil, s.encodeFailed("encode tool result content", err, "Internal error: the result could not be encoded: "+err.Error())
		}
	}
	b = append(b, ']')
	if sc != nil {
		b = append(b, `,"structuredContent":`...)
		b = append(b, sc...)
	} else if res.StructuredContent != nil {
		sc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, s.encodeFailed("encode structuredContent", err, "Internal error: structuredContent could not be encoded")
		}
		b = append(b, `,"structuredContent":`...)
		b = append(b, sc...)
	}
	if res.IsError {
		r.out.isError = true
		b = append(b, `,"isError":true`...)
	}
	if meta := s.resultMeta(r, res.Meta); meta != nil {
		b = append(b, `,"_meta":`...)
		b = append(b, meta...)
	}
	b = append(b, '}')
	if r.legacy {
		r.frame = append(b, '}')
		return b[pre:len(b):len(b)], nil // appending to the result leaves the frame alone
	}
	return b, nil
}

// legacyFrame returns r.frame if it is the response to r with result
// res, the slice encodeToolResult returned (what middleware returned may
// be another), or nil.
func legacyFrame(r *request, res json.RawMessage) []byte {
	f := r.frame
	pre := rpcwire.ResultPrefixLen(r.id)
	if len(res) == 0 || len(f) != pre+len(res)+1 || &f[pre] != &res[0] {
		return nil
	}
	return f
}

// resultCap is the first capacity of encodeToolResult's buffer: 256 bytes
// on the 2026-07-28 protocol, whose results carry the server's info in
// _meta; on the 2025-11-25 one, about the size of the response around
// the result (request.frame; a plain call's in the 144-byte size class,
// where the result took 256 bytes and the response a copy of 96: less to
// allocate and collect on every call; issue 23). A block's escapes, or
// what a hint leaves out, grow the buffer as append does.
func resultCap(r *request, res *ToolResult, sc json.RawMessage) int {
	n := 48 + len(sc)
	if r.legacy {
		n += rpcwire.ResultPrefixLen(r.id) + 1
	}
	for i := range res.Content {
		c := &res.Content[i]
		n += 48 + len(c.Text) + len(c.Data) + len(c.MimeType) + len(c.URI) + len(c.Name) + len(c.Title) + len(c.Description) + len(c.Input)
	}
	if sc == nil && res.StructuredContent != nil || res.Meta != nil {
		n += 128
	}
	if !r.legacy {
		n = max(n, 256)
	}
	return n
}

// encodeFailed logs an encoding failure of a tool's result (what, err)
// and returns the call's -32603 with message. It is out of line so that
// encodeToolResult's frame, on every call's path, stays small (see
// prepareToolCall).
//
//go:noinline
func (s *Server) encodeFailed(what string, err error, message string) *mcp.Error {
	s.log.Error(what, "err", err)
	return &mcp.Error{Code: mcp.InternalError, Message: message}
}

type promptResultWire struct {
	ResultType  string          `json:"resultType,omitempty"`
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

func (s *Server) getPrompt(ctx context.Context, r *request, n notifier) (json.RawMessage, *mcp.Error) {
	if r.p.Name == nil || *r.p.Name == "" {
		return nil, invalidParams("prompts/get needs a prompt name")
	}
	name := *r.p.Name
	s.mu.RLock()
	e, _ := s.prompts.get(name)
	s.mu.RUnlock()
	if e == nil {
		return nil, invalidParams("unknown prompt %s", clip.Quote(name))
	}
	if missing, ok := r.meta.ClientCapabilities.Missing(e.opts.Requires); ok {
		return nil, (&mcp.MissingCapabilityError{Required: missing, What: "prompt " + name}).RPCError()
	}
	var args map[string]string
	if t := bytes.TrimSpace(r.p.Arguments); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := strictjson.Unmarshal(t, &args); err != nil {
			return nil, invalidParams("prompts/get arguments must be an object of strings")
		}
	}
	for _, a := range e.prompt.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, invalidParams("prompt %q needs argument %q", name, a.Name)
		}
	}
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	mc, re := s.openRound(ctx, r, name, argsJSON, round.Options{AnswersWithoutState: e.opts.AnswersWithoutState}, nil)
	if re != nil {
		return nil, re
	}
	call := newCall(r.id, r.method, r.meta, mc.round, PrincipalFromContext(ctx), n)
	call.storeTimeout = s.opts.StoreTimeout
	call.peer = r.peer
	res, err := invoke(s, "prompt", name, func() (*PromptResult, error) {
		return e.handler(ctx, &PromptRequest{Call: call, Name: name, Arguments: args})
	})
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, mrtr.ErrInputRequired) {
			if r.legacy && errors.Is(err, era.ErrParked) {
				return nil, errNoResponse // the legacy adapter keeps the call as its record
			}
			return s.suspend(r, mc)
		}
		if ue := (*URLElicitationRequiredError)(nil); ctx.Err() == nil && errors.As(err, &ue) {
			return s.urlRequired(r, mc, ue)
		}
		return nil, s.handlerError(ctx, "prompt "+name, err)
	}
	if res == nil {
		return nil, &mcp.Error{Code: mcp.InternalError, Message: fmt.Sprintf("Internal error: prompt %q returned no result", name)}
	}
	msgs := res.Messages
	if msgs == nil {
		msgs = []PromptMessage{}
	}
	return s.encode(promptResultWire{ResultType: r.resultType(), Description: res.Description, Messages: msgs, Meta: s.resultMeta(r, res.Meta)})
}

type readResultWire struct {
	ResultType string                 `json:"resultType,omitempty"`
	Contents   []mcp.ResourceContents `json:"contents"`
	TTL        *int64                 `json:"ttlMs,omitempty"`
	Scope      string                 `json:"cacheScope,omitempty"`
	Meta       json.RawMessage        `json:"_meta,omitempty"`
}

func (s *Server) readResource(ctx context.Context, r *request, n notifier) (json.RawMessage, *mcp.Error) {
	uri, e := uriParam(r)
	if e != nil {
		return nil, e
	}
	var (
		h      ResourceHandler
		opts   regOptions
		params map[string]string
	)
	s.mu.RLock()
	if e, ok := s.resources.get(uri); ok {
		h, opts = e.handler, e.opts
	} else {
		for _, t := range s.templates {
			if vals, ok := t.pattern.match(uri); ok {
				h, opts, params = t.handler, t.opts, vals
				break
			}
		}
	}
	s.mu.RUnlock()
	if h == nil {
		return nil, ResourceNotFound(uri)
	}
	if missing, ok := r.meta.ClientCapabilities.Missing(opts.Requires); ok {
		return nil, (&mcp.MissingCapabilityError{Required: missing, What: "resource " + clip.String(uri)}).RPCError()
	}
	mc, re := s.openRound(ctx, r, uri, nil, round.Options{AnswersWithoutState: opts.AnswersWithoutState}, nil)
	if re != nil {
		return nil, re
	}
	call := newCall(r.id, r.method, r.meta, mc.round, PrincipalFromContext(ctx), n)
	call.storeTimeout = s.opts.StoreTimeout
	call.peer = r.peer
	res, err := invoke(s, "resource", uri, func() (*ResourceResult, error) {
		return h(ctx, &ResourceRequest{Call: call, URI: uri, Params: params})
	})
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, mrtr.ErrInputRequired) {
			if r.legacy && errors.Is(err, era.ErrParked) {
				return nil, errNoResponse // the legacy adapter keeps the call as its record
			}
			return s.suspend(r, mc)
		}
		if ue := (*URLElicitationRequiredError)(nil); ctx.Err() == nil && errors.As(err, &ue) {
			return s.urlRequired(r, mc, ue)
		}
		return nil, s.handlerError(ctx, "resource "+uri, err)
	}
	if res == nil {
		return nil, ResourceNotFound(uri)
	}
	cache := s.opts.ReadCache
	if res.Cache != nil {
		cache = *res.Cache
		if cache.Scope == "" {
			cache.Scope = "public"
		}
		if err := cache.validate(); err != nil {
			return nil, s.handlerError(ctx, "resource "+uri, err)
		}
	}
	contents := res.Contents
	if contents == nil {
		contents = []mcp.ResourceContents{}
	}
	w := readResultWire{ResultType: r.resultType(), Contents: contents, Meta: s.resultMeta(r, res.Meta)}
	w.TTL, w.Scope = cacheHint(r, cache)
	return s.encode(w)
}

type completeWire struct {
	ResultType string          `json:"resultType,omitempty"`
	Completion Completion      `json:"completion"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

func (s *Server) complete(ctx context.Context, r *request, n notifier) (json.RawMessage, *mcp.Error) {
	s.mu.RLock()
	h := s.completion
	s.mu.RUnlock()
	if h == nil {
		return nil, methodNotFound(r.method)
	}
	if r.p.Ref == nil || r.p.Argument == nil {
		return nil, invalidParams("completion/complete needs ref and argument")
	}
	switch r.p.Ref.Type {
	case "ref/prompt":
		if r.p.Ref.Name == "" {
			return nil, invalidParams("ref/prompt needs a name")
		}
	case "ref/resource":
		if r.p.Ref.URI == "" {
			return nil, invalidParams("ref/resource needs a uri")
		}
	default:
		return nil, invalidParams("unknown ref type %s", clip.Quote(r.p.Ref.Type))
	}
	req := &CompletionRequest{Call: newCall(r.id, r.method, r.meta, nil, PrincipalFromContext(ctx), n), Ref: *r.p.Ref, Argument: *r.p.Argument}
	req.peer = r.peer
	if r.p.Context != nil {
		req.Context = r.p.Context.Arguments
	}
	c, err := invoke(s, "completion", "", func() (*Completion, error) { return h(ctx, req) })
	if err != nil {
		return nil, s.handlerError(ctx, "completion", err)
	}
	if c == nil {
		c = &Completion{}
	}
	out := *c
	if out.Values == nil {
		out.Values = []string{}
	}
	if len(out.Values) > 100 {
		out.Values, out.HasMore = out.Values[:100], true
	}
	return s.encode(completeWire{ResultType: r.resultType(), Completion: out, Meta: s.resultMeta(r, nil)})
}
