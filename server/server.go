package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/baton-mcp/baton/internal/bufpool"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/round"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// defaultBodyReadTimeout is Options.BodyReadTimeout when it is zero.
const defaultBodyReadTimeout = 30 * time.Second

// Options configure a Server. The zero value is usable: a random state key
// per process, loopback-only Host and Origin checks, 4 MiB request bodies
// received within 30 seconds, 64 levels of JSON nesting, 10,000 members per
// object, number literals of at most 100 bytes with exponents within ±400.
type Options struct {
	// Instructions are sent in server/discover.
	Instructions string

	// StateKeys sign and verify requestState. When nil a random key is made
	// for this process: flows then cannot move to another instance or
	// survive a restart. A warning says so the first time a request needs
	// a key, unless SetStateKeys has set keys by then.
	StateKeys *mrtr.KeyRing
	// StateTTL is how long a requestState stays valid (default 10 minutes).
	StateTTL time.Duration
	// StateAudience, if set, binds state to this deployment (JWT "aud").
	StateAudience string
	// MaxStateSize bounds a requestState token in bytes (default 64 KiB).
	MaxStateSize int
	// StateLeeway is the clock skew tolerated between the instance that
	// issued a requestState and the one checking it: a state whose issue
	// time is up to this far ahead of the server's clock is accepted
	// (default 30 seconds; negative for none). Expiry gets no leeway: a
	// state is refused once the server's clock reaches its issue time plus
	// StateTTL. See docs/deployment.md on fleet clocks.
	StateLeeway time.Duration
	// Now is the server's clock, read to write and check the times of
	// requestState and to pace its log lines; nil means the wall clock. It
	// is the only clock the server reads (tests and simulations inject
	// one); the body read timeout is a timer, not a reading of it.
	Now func() time.Time

	// AllowedHosts lists Host header values (host or host:port) that are
	// accepted. When empty, a server reached on a loopback address accepts
	// only loopback host names (DNS-rebinding protection) and a server on
	// any other address accepts any Host.
	AllowedHosts []string
	// AllowedOrigins lists browser origins (scheme://host[:port]) that are
	// accepted; "*" accepts any. Requests without Origin are accepted. When
	// empty, only loopback origins (on a loopback listener) and origins
	// whose host equals the Host header are accepted.
	AllowedOrigins []string

	// The request limits: a body over MaxRequestBytes is refused with 413;
	// the others are checked in one pass over each message before it is
	// parsed, and a message over one is refused (-32700 for the depth,
	// -32602 naming the limit for the rest) before any other work, so a
	// hostile body costs about what a benign body of its size costs. See
	// rpcwire.Limits for why the defaults are safe.

	// MaxRequestBytes bounds a request body (default 4 MiB).
	MaxRequestBytes int64
	// MaxJSONDepth bounds JSON nesting (default 64).
	MaxJSONDepth int
	// MaxJSONMembers bounds the members of any one JSON object in a request
	// (default 10,000), the envelope's included (they have up to about 8).
	// Raise it for tools that take larger maps.
	MaxJSONMembers int
	// MaxJSONNumberLength bounds a number literal in a request, in bytes
	// (default 100: an int64 needs 20, a float64 24).
	MaxJSONNumberLength int
	// MaxJSONNumberExponent bounds the exponent of a number literal in a
	// request (default 400: a float64 needs ±324). Exact arithmetic on a
	// number (a schema's integer, minimum or multipleOf) costs time in
	// proportion to its exponent.
	MaxJSONNumberExponent int
	// BodyReadTimeout bounds how long a request body may take to arrive
	// over HTTP, from when the server starts reading it (the headers have
	// arrived) to its last byte (default 30 seconds; negative for none). A
	// body that stalls is cut: the request is answered 408 with -32600 and
	// the connection is closed. The server watches the bodies being read
	// with a few timers (eight at most), each ticking every tenth of the
	// timeout while a body it watches is in flight (none when idle), so a
	// stalled body is cut between the
	// timeout and a tenth of it later, never sooner: by moving the
	// connection's read deadline into the past. A body's watch ends when
	// it has been read, so it never cuts a long-lived response (SSE
	// progress, subscriptions/listen), as http.Server.ReadTimeout would.
	// It needs a ResponseWriter that can set deadlines (net/http's can,
	// through http.ResponseController); with one that cannot, bodies are
	// read without it. Headers are not covered: set
	// http.Server.ReadHeaderTimeout (see docs/deployment.md).
	BodyReadTimeout time.Duration

	// MaxListenSubscriptions bounds the resourceSubscriptions of one
	// subscriptions/listen stream (default 1000; negative for no limit). A
	// longer list is refused with -32602 naming the limit; so is one whose
	// URIs total more than 256 KiB. A stream keeps its own copy of the
	// URIs, so it holds at most that much besides its connection.
	MaxListenSubscriptions int
	// MaxListenStreams bounds the subscriptions/listen streams open on
	// this server at once (default 1000; negative for no limit). One more
	// is refused with HTTP 503 and -32603 until one closes.
	MaxListenStreams int
	// MaxListenStreamsPerPrincipal bounds the streams open at once for one
	// principal (PrincipalFromContext), or, for anonymous callers,
	// for one client address: the peer's IP as net/http reports it (behind
	// a proxy that is the proxy's address, so all anonymous callers behind
	// it share one quota; authenticate them to count each on its own).
	// Over stdio, anonymous means the one client on the pipe. Default 16;
	// negative for no limit. One more is refused with HTTP 429 and -32600.
	MaxListenStreamsPerPrincipal int

	// ListCache is the caching hint on server/discover and the list
	// results (default: TTL 0, scope "public").
	ListCache CachePolicy
	// ReadCache is the default caching hint on resources/read (default:
	// TTL 0, scope "public").
	ReadCache CachePolicy
	// PageSize bounds the items per list page; 0 returns everything at once.
	PageSize int
	// Visible, if set, decides per request what a caller may see and
	// use, for what scopes cannot express (a tenant, a role): an item it
	// rejects is left out of the lists and answered as unknown when
	// called. Items declared with RequireScopes are checked against the
	// caller's Grant first. Lists are then sent with cacheScope "private".
	Visible func(ctx context.Context, item Item) bool

	// Logging advertises the (deprecated) logging capability.
	Logging bool

	// Middleware wraps the handling of every request, in order: the first
	// is the outermost. See Middleware.
	Middleware []Middleware

	// Telemetry, if set, traces every request and takes the server's
	// measurements on OpenTelemetry (see Telemetry). Nil costs nothing.
	Telemetry *Telemetry
	// testTelemetry replaces Telemetry's instrumentation in this
	// package's tests, which record what the server reports.
	testTelemetry telemetry

	// Legacy, if set, serves 2025-11-25 (and 2025-06-18, 2025-03-26)
	// clients on the same endpoint and process: initialize, Mcp-Session-Id
	// sessions, server-to-client requests. Package legacy's New returns
	// one. Without it, initialize is refused with the supported versions.
	Legacy LegacyAdapter

	// Fanout, if set, carries list and resource changes to and from the
	// other instances of the deployment. The server receives in one
	// goroutine until Close.
	Fanout Fanout

	// StoreTimeout bounds every call the server makes to a shared store:
	// the task store (each tasks/* request's store work together, a
	// task's creation, a lease's renewal, one attempt at writing a
	// result), the ledger of Call.Redeem, and a fan-out publish (default
	// 5 seconds). A store that stalls (a paused Redis) so costs a request
	// at most this long before it is refused with HTTP 503 and
	// Retry-After, having written nothing. Give the Redis client
	// ContextTimeoutEnabled so that it honours the deadline.
	StoreTimeout time.Duration

	// TrustedProxies lists the proxies (load balancers) whose
	// X-Forwarded-For is believed when the address of an anonymous caller
	// is read for the task quotas (TaskOptions.MaxRunningPerClient,
	// MaxStoredPerClient), as legacy.Options.TrustedProxies does for
	// sessions. Without it every anonymous caller behind a proxy shares
	// the proxy's quota.
	TrustedProxies []netip.Prefix

	// Tasks configures the tasks extension, served for tools registered
	// with RunAsTask. The zero value keeps tasks in memory, for
	// this process only; a fleet shares a store (redisfleet.Fleet.Tasks).
	Tasks TaskOptions

	// Logger receives the server's own diagnostics (nil: slog to stderr).
	// Many of them can be caused by a peer, so the server rate-limits its
	// lines per message: a burst of 10, then one a second; the lines
	// dropped are counted on the next one written ("suppressed"=n).
	// The legacy adapter logs through the limited logger too.
	Logger *slog.Logger
}

// Server is an MCP server. Create one with New, register tools, prompts and
// resources, and serve it as an http.Handler (ServeHTTP; echo.WrapHandler
// puts it on echo) or with ServeStdio. All methods
// are safe for concurrent use; tools and prompts may be added and removed
// while serving, and listeners are told.
type Server struct {
	info     mcp.Implementation
	opts     Options
	tel      telemetry // Options.Telemetry's instrumentation, or nil
	sealer   *seal.Sealer
	log      *slog.Logger
	infoMeta json.RawMessage // {"io.modelcontextprotocol/serverInfo":{...}}
	digests  round.Digests   // question digests, remembered across rounds

	bodyWatch bodyWatches  // readBody's timeouts
	scratch   bufpool.Pool // encodeInputRequired's buffers, for reuse

	// randomKey is set while the state keys are the random ones New made
	// (no Options.StateKeys, no SetStateKeys yet); keyWarn warns of it
	// once, when a request first needs a key.
	randomKey atomic.Bool
	keyWarn   sync.Once

	// scoped is set, and never cleared, once an item is registered with
	// RequireScopes: until then authorize has nothing to check (authz.go).
	scoped atomic.Bool

	mu         sync.RWMutex
	tools      registry[*toolEntry]
	prompts    registry[*promptEntry]
	resources  registry[*resourceEntry]
	templates  []*templateEntry
	completion CompletionHandler

	hub    *hub
	legacy LegacyAdapter
	tasks  *taskHost
	exts   extensionSet
	skills skillSet
	// skillsReg serialises AddSkills.
	skillsReg sync.Mutex

	taskWatch taskListeners

	fanout    Fanout
	draining  chan struct{} // closed by Shutdown
	drainOnce sync.Once
	closeOnce sync.Once
	life      context.Context // ends at Close
	stop      context.CancelFunc
	relayDone chan struct{}
}

// jsonLimits are the limits every message is checked against.
func (s *Server) jsonLimits() rpcwire.Limits {
	return rpcwire.Limits{
		MaxDepth:          s.opts.MaxJSONDepth,
		MaxMembers:        s.opts.MaxJSONMembers,
		MaxNumberLength:   s.opts.MaxJSONNumberLength,
		MaxNumberExponent: s.opts.MaxJSONNumberExponent,
	}
}

// withDefaults returns opts (nil: none) with every unset option at its
// default, or the first invalid one's error.
func withDefaults(opts *Options) (Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 4 << 20
	}
	if o.MaxJSONDepth <= 0 {
		o.MaxJSONDepth = rpcwire.DefaultMaxDepth
	}
	if o.MaxJSONMembers <= 0 {
		o.MaxJSONMembers = rpcwire.DefaultMaxMembers
	}
	if o.MaxJSONNumberLength <= 0 {
		o.MaxJSONNumberLength = rpcwire.DefaultMaxNumberLength
	}
	if o.MaxJSONNumberExponent <= 0 {
		o.MaxJSONNumberExponent = rpcwire.DefaultMaxNumberExponent
	}
	if o.BodyReadTimeout == 0 {
		o.BodyReadTimeout = defaultBodyReadTimeout
	}
	if o.StoreTimeout <= 0 {
		o.StoreTimeout = defaultStoreTimeout
	}
	for _, lim := range []struct {
		v   *int
		def int
	}{{&o.MaxListenSubscriptions, 1000}, {&o.MaxListenStreams, 1000}, {&o.MaxListenStreamsPerPrincipal, 16}} {
		switch {
		case *lim.v == 0:
			*lim.v = lim.def
		case *lim.v < 0:
			*lim.v = 0 // no limit
		}
	}
	for _, cp := range []*CachePolicy{&o.ListCache, &o.ReadCache} {
		if cp.Scope == "" {
			cp.Scope = "public"
		}
		if err := cp.validate(); err != nil {
			return o, err
		}
	}
	if o.PageSize < 0 {
		return o, fmt.Errorf("server: negative PageSize %d", o.PageSize)
	}
	return o, nil
}

// New returns a server that identifies itself as info.
func New(info mcp.Implementation, opts *Options) (*Server, error) {
	if info.Name == "" || info.Version == "" {
		return nil, errors.New("server: Implementation needs a name and a version")
	}
	o, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	now := wallClock(o.Now)
	base := o.Logger
	if base == nil {
		base = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	log := slog.New(newLogLimiter(base.Handler(), now))
	ring := o.StateKeys
	if ring == nil {
		k, err := mrtr.RandomKey()
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		if ring, err = mrtr.NewKeyRing(k); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	tel := o.testTelemetry
	if o.Telemetry != nil {
		ot, err := newOtelTelemetry(o.Telemetry)
		if err != nil {
			return nil, fmt.Errorf("server: Options.Telemetry: %w", err)
		}
		tel = ot
	}
	sealer, err := seal.NewSealer(ring, seal.SealerOptions{TTL: o.StateTTL, Leeway: o.StateLeeway, Audience: o.StateAudience, MaxSize: o.MaxStateSize, Now: o.Now})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	infoJSON, err := json.Marshal(map[string]any{metaServerInfo: info})
	if err != nil {
		return nil, fmt.Errorf("server: encode server info: %w", err)
	}
	s := &Server{tel: tel,
		info:     info,
		opts:     o,
		sealer:   sealer,
		log:      log,
		infoMeta: infoJSON,
	}
	s.randomKey.Store(o.StateKeys == nil)
	s.hub = newHub(log)
	s.hub.maxStreams, s.hub.maxPerOwner = o.MaxListenStreams, o.MaxListenStreamsPerPrincipal
	if s.tasks, err = newTaskHost(s, o.Tasks); err != nil {
		return nil, err
	}
	if o.Legacy != nil {
		if err := o.Legacy.Bind(s, legacyDispatcher{s}); err != nil {
			return nil, fmt.Errorf("server: legacy adapter: %w", err)
		}
		s.legacy = o.Legacy
	}
	s.life, s.stop = context.WithCancel(context.Background())
	s.draining = make(chan struct{})
	if o.Fanout != nil {
		s.fanout = o.Fanout
		s.relayDone = make(chan struct{})
		go s.relay()
	}
	return s, nil
}

func (c CachePolicy) validate() error {
	if c.TTL < 0 {
		return fmt.Errorf("server: negative cache TTL %d", c.TTL)
	}
	if c.Scope != "public" && c.Scope != "private" {
		return fmt.Errorf("server: cache scope %q is neither public nor private", c.Scope)
	}
	return nil
}

// Info returns the server's identity.
func (s *Server) Info() mcp.Implementation { return s.info }

// SetStateKeys replaces the key ring that signs and verifies requestState,
// while serving: to rotate, put the new key first and keep the old ones
// until the state they signed has expired (the state TTL plus the leeway).
// State signed by a key still in the new ring keeps verifying.
func (s *Server) SetStateKeys(ring *mrtr.KeyRing) error {
	if err := s.sealer.SetKeys(ring); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.randomKey.Store(false)
	return nil
}

// keyNeeded is called when a request seals or opens a requestState: on
// the random key New made (no Options.StateKeys and no SetStateKeys
// since), it warns once, since such states die with the process.
func (s *Server) keyNeeded() {
	if !s.randomKey.Load() {
		return
	}
	s.keyWarn.Do(func() {
		if s.randomKey.Load() {
			s.log.Warn("no state key configured: using a random key for this process; input_required flows cannot move between instances or survive a restart. " +
				"Set server.Options.StateKeys (or call SetStateKeys) with a key ring every instance shares")
		}
	})
}

type toolEntry struct {
	tool    Tool
	wire    json.RawMessage // the encoded Tool
	handler ToolHandler
	opts    regOptions
	input   *jsv.Schema
	output  *jsv.Schema // nil: no outputSchema, results are not checked
	anyArgs bool        // the input schema accepts every object: skip validation
	flat    *flatSchema // the input schema, when flat enough to check without the validator
	headers []paramHeader
	valid   validMemo       // arguments known to pass the input schema
	fields  strictjson.Memo // key tables for ToolRequest.Bind
}

// AddTool registers a tool, replacing any tool of the same name. The input
// schema must be a JSON object schema (a missing schema means {"type":
// "object"}); it is compiled now and arguments are validated against it on
// every call, a mismatch being an isError result the model can correct.
// An output schema, if set, must be an object schema too: every result
// that is not an error must then carry structuredContent that matches it,
// or the call fails with -32603 (a server bug, logged) rather than send an
// invalid result. For schemas inferred from Go types, see the package-level
// AddTool.
func (s *Server) AddTool(t Tool, h ToolHandler, opts ...ToolOption) error {
	o, err := collectOptions(fmt.Sprintf("add tool %q", t.Name), opts, ToolOption.applyTool)
	if err != nil {
		return err
	}
	return s.addTool(t, h, o)
}

// addTool checks, compiles and registers a tool.
func (s *Server) addTool(t Tool, h ToolHandler, o regOptions) error {
	if err := checkToolName(t.Name); err != nil {
		return fmt.Errorf("add tool: %w", err)
	}
	if h == nil {
		return fmt.Errorf("add tool %q: nil handler", t.Name)
	}
	switch {
	case o.Task < TaskForbidden || o.Task > TaskRequired:
		return fmt.Errorf("add tool %q: unknown TaskSupport %d", t.Name, o.Task)
	case o.DeferTask && o.Task == TaskForbidden:
		return fmt.Errorf("add tool %q: DeferTask needs RunAsTask(TaskOptional) or RunAsTask(TaskRequired)", t.Name)
	case o.TaskMayRerun && o.Task == TaskForbidden:
		return fmt.Errorf("add tool %q: TaskMayRerun needs RunAsTask(TaskOptional) or RunAsTask(TaskRequired)", t.Name)
	case o.TaskMayRerun && (o.RunsOnce || o.DeferTask):
		return fmt.Errorf("add tool %q: TaskMayRerun runs the handler again, which RunsOnce and DeferTask rule out", t.Name)
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	e := &toolEntry{tool: t, handler: h, opts: o}
	s.noteScopes(o)
	var err error
	if e.input, err = compileSchema("tool "+t.Name+" input", t.InputSchema, true); err != nil {
		return fmt.Errorf("add tool: %w", err)
	}
	e.anyArgs = acceptsAnyObject(t.InputSchema)
	e.flat = flatSchemaOf(t.InputSchema)
	if len(t.OutputSchema) > 0 {
		if e.output, err = compileSchema("tool "+t.Name+" output", t.OutputSchema, true); err != nil {
			return fmt.Errorf("add tool: %w", err)
		}
	}
	if e.headers, err = paramHeaders(t.InputSchema); err != nil {
		return fmt.Errorf("add tool %q: %w", t.Name, err)
	}
	if e.wire, err = marshalNoEscape(t); err != nil {
		return fmt.Errorf("add tool %q: encode: %w", t.Name, err)
	}
	register(s, &s.tools, t.Name, e, era.ToolsChanged)
	return nil
}

// RemoveTool unregisters a tool and reports whether it existed.
func (s *Server) RemoveTool(name string) bool { return unregister(s, &s.tools, name, era.ToolsChanged) }

type promptEntry struct {
	prompt  Prompt
	wire    json.RawMessage
	handler PromptHandler
	opts    regOptions
}

// AddPrompt registers a prompt, replacing any prompt of the same name.
func (s *Server) AddPrompt(p Prompt, h PromptHandler, opts ...PromptOption) error {
	if p.Name == "" {
		return errors.New("add prompt: empty name")
	}
	if h == nil {
		return fmt.Errorf("add prompt %q: nil handler", p.Name)
	}
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		if a.Name == "" || seen[a.Name] {
			return fmt.Errorf("add prompt %q: argument names must be non-empty and unique", p.Name)
		}
		seen[a.Name] = true
	}
	o, err := collectOptions(fmt.Sprintf("add prompt %q", p.Name), opts, PromptOption.applyPrompt)
	if err != nil {
		return err
	}
	e := &promptEntry{prompt: p, handler: h, opts: o}
	s.noteScopes(o)
	if e.wire, err = json.Marshal(p); err != nil {
		return fmt.Errorf("add prompt %q: encode: %w", p.Name, err)
	}
	register(s, &s.prompts, p.Name, e, era.PromptsChanged)
	return nil
}

// RemovePrompt unregisters a prompt and reports whether it existed.
func (s *Server) RemovePrompt(name string) bool {
	return unregister(s, &s.prompts, name, era.PromptsChanged)
}

type resourceEntry struct {
	res     Resource
	wire    json.RawMessage
	handler ResourceHandler
	opts    regOptions
	// skill is set for a file of a skill (skills.go): the innermost
	// skill holding it, whose visibility it has.
	skill *skillEntry
	// unlisted leaves the resource out of resources/list (a skill's
	// supporting file).
	unlisted bool
}

// item is the entry as Options.Visible sees it.
func (e *resourceEntry) item() Item {
	if e.skill != nil {
		return e.skill.item()
	}
	return Item{Kind: ItemResource, Name: e.res.URI, Scopes: e.opts.Scopes}
}

type templateEntry struct {
	tmpl    ResourceTemplate
	wire    json.RawMessage
	pattern *uriTemplate
	handler ResourceHandler
	opts    regOptions
}

// AddResource registers a static resource, replacing any with the same URI
// (but for the files of skills, which AddSkills serves).
func (s *Server) AddResource(r Resource, h ResourceHandler, opts ...ResourceOption) error {
	if r.URI == "" || r.Name == "" {
		return errors.New("add resource: URI and name are required")
	}
	if h == nil {
		return fmt.Errorf("add resource %q: nil handler", r.URI)
	}
	o, err := collectOptions(fmt.Sprintf("add resource %q", r.URI), opts, ResourceOption.applyResource)
	if err != nil {
		return err
	}
	e := &resourceEntry{res: r, handler: h, opts: o}
	s.noteScopes(o)
	if e.wire, err = json.Marshal(r); err != nil {
		return fmt.Errorf("add resource %q: encode: %w", r.URI, err)
	}
	s.mu.Lock()
	if o, ok := s.resources.get(r.URI); ok && o.skill != nil {
		s.mu.Unlock()
		return fmt.Errorf("add resource %q: the URI is a file of a skill (AddSkills)", r.URI)
	}
	s.resources.put(r.URI, e)
	s.mu.Unlock()
	s.changed(era.Change{Kind: era.ResourcesChanged})
	return nil
}

// RemoveResource unregisters a static resource and reports whether it
// existed. The files of skills (AddSkills) stay: it reports false for
// them.
func (s *Server) RemoveResource(uri string) bool {
	s.mu.Lock()
	e, ok := s.resources.get(uri)
	ok = ok && e.skill == nil && s.resources.remove(uri)
	s.mu.Unlock()
	if ok {
		s.changed(era.Change{Kind: era.ResourcesChanged})
	}
	return ok
}

// register adds or replaces name in r and tells listeners.
func register[E any](s *Server, r *registry[E], name string, e E, kind era.ChangeKind) {
	s.mu.Lock()
	r.put(name, e)
	s.mu.Unlock()
	s.changed(era.Change{Kind: kind})
}

// unregister removes name from r and tells listeners when it existed.
func unregister[E any](s *Server, r *registry[E], name string, kind era.ChangeKind) bool {
	s.mu.Lock()
	ok := r.remove(name)
	s.mu.Unlock()
	if ok {
		s.changed(era.Change{Kind: kind})
	}
	return ok
}

// AddResourceTemplate registers a URI template. A resources/read whose URI
// matches no static resource is matched against templates in the order they
// were added.
func (s *Server) AddResourceTemplate(t ResourceTemplate, h ResourceHandler, opts ...ResourceOption) error {
	if t.URITemplate == "" || t.Name == "" {
		return errors.New("add resource template: URI template and name are required")
	}
	if h == nil {
		return fmt.Errorf("add resource template %q: nil handler", t.URITemplate)
	}
	p, err := parseURITemplate(t.URITemplate)
	if err != nil {
		return fmt.Errorf("add resource template: %w", err)
	}
	o, err := collectOptions(fmt.Sprintf("add resource template %q", t.URITemplate), opts, ResourceOption.applyResource)
	if err != nil {
		return err
	}
	e := &templateEntry{tmpl: t, pattern: p, handler: h, opts: o}
	s.noteScopes(o)
	if e.wire, err = json.Marshal(t); err != nil {
		return fmt.Errorf("add resource template %q: encode: %w", t.URITemplate, err)
	}
	s.mu.Lock()
	s.templates = append(s.templates, e)
	s.mu.Unlock()
	s.changed(era.Change{Kind: era.ResourcesChanged})
	return nil
}

// SetCompletion installs the completion/complete handler and advertises
// the completions capability.
func (s *Server) SetCompletion(h CompletionHandler) {
	s.mu.Lock()
	s.completion = h
	s.mu.Unlock()
}

// NotifyResourceUpdated tells listeners subscribed to uri that it changed.
func (s *Server) NotifyResourceUpdated(uri string) {
	s.changed(era.Change{Kind: era.ResourceUpdated, URI: uri})
}

// registry is a set of named entries that keeps the order they were first
// added in (lists are served in that order). It is guarded by Server.mu.
type registry[E any] struct {
	byName map[string]E
	order  []string
}

// put adds or replaces the entry for name.
func (r *registry[E]) put(name string, e E) {
	if r.byName == nil {
		r.byName = make(map[string]E)
	}
	if _, exists := r.byName[name]; !exists {
		r.order = append(r.order, name)
	}
	r.byName[name] = e
}

// remove deletes the entry for name and reports whether there was one.
func (r *registry[E]) remove(name string) bool {
	if _, ok := r.byName[name]; !ok {
		return false
	}
	delete(r.byName, name)
	r.order = slices.DeleteFunc(r.order, func(n string) bool { return n == name })
	return true
}

func (r *registry[E]) get(name string) (E, bool) {
	e, ok := r.byName[name]
	return e, ok
}

func (r *registry[E]) len() int { return len(r.order) }

// at returns the i-th entry in order.
func (r *registry[E]) at(i int) E { return r.byName[r.order[i]] }

// checkToolName applies the naming rule of the specification: 1 to 128
// characters from A-Z, a-z, 0-9, '_', '-' and '.'.
func checkToolName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("tool name %q must be 1 to 128 characters long", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("tool name %q may contain only letters, digits, '_', '-' and '.'", name)
		}
	}
	return nil
}

// marshalNoEscape encodes v without HTML-escaping strings, so schemas and
// descriptions read back as they were written.
func marshalNoEscape(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
