package legacy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/sse"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// The protocol versions served, newest first.
var versions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// Defaults for Options.
const (
	defaultCallTimeout          = 600 * time.Second
	defaultSessionIdle          = 30 * time.Minute
	defaultMaxRounds            = 16
	defaultKeepAlive            = 15 * time.Second
	defaultMaxSessions          = 10000
	defaultMaxSessionsPerClient = 100
	defaultMaxSubscriptions     = 1000
	defaultMaxAnswerBytes       = 1 << 20
	defaultMaxAnswersPerSecond  = 32
)

// codeSessionNotFound answers a request for an unknown or expired session.
const codeSessionNotFound = -32001

// Options configure an adapter. The zero value is usable.
type Options struct {
	// CallTimeout bounds every wait for a client answer: a blocking client
	// call or a bridged round (default 600 s).
	CallTimeout time.Duration
	// HoldFor is how long a call of a 2025-11-25 HTTP session keeps its
	// handler waiting for an answer before the call parks (default 2 s).
	// A quick answer (a client that samples, lists roots or fills a form
	// within the window) goes straight to the handler that waits for it.
	// A parked call is a record in the Store, not a goroutine: its
	// client's stream ends with a retry field (SSE polling), and the
	// answer, POSTed to any instance, runs the handler again from the top
	// there, with the answers recorded so far; the client gets what
	// follows on the stream it resumes, on any instance. Calls of older
	// sessions, whose clients do not poll, park only when the instance
	// drains; a tool registered with server.RunsOnce never parks (its
	// question waits in place). Negative is for a serverless function,
	// where nothing may run after a response: the call parks as soon as
	// its question is out, and an answer runs the call's next step (to its
	// next question or its response) before it is acknowledged.
	HoldFor time.Duration
	// SessionIdle is how long a session may go unused before it expires
	// (default 30 minutes). Use is a request other than ping, a call in
	// flight (a call waiting for its client's answer included) and an open
	// GET stream. A ping is answered but does not keep a session: it costs
	// a client nothing, so counting it would let one client hold any
	// number of sessions forever, and the specification's ping checks that
	// the peer responds, not that the session is wanted. Notifications
	// and responses do not count either; the call a response answers
	// does, while it runs.
	SessionIdle time.Duration
	// MaxRounds bounds how many times the bridge serves an input_required
	// result for one call (default 16).
	MaxRounds int
	// KeepAlive is how often a stream that waits for the client gets an SSE
	// comment (default 15 s).
	KeepAlive time.Duration
	// MaxSessions bounds the open HTTP sessions of the Store (default
	// 10000; with a shared store, of the fleet). One more initialize is
	// refused with HTTP 503 and -32603, and Retry-After: the seconds until
	// the soonest of the open sessions expires if it is not used again.
	MaxSessions int
	// MaxSessionsPerClient bounds the open HTTP sessions of one principal
	// (server.PrincipalFromContext) or, for anonymous callers, of one client
	// address, as TrustedProxies says how to read it (default 100;
	// negative for no limit). One more initialize is refused with HTTP 429
	// and -32600, and Retry-After: the seconds until that client's soonest
	// session expires. A client that floods initialize fills only its own
	// quota: others still get sessions.
	MaxSessionsPerClient int
	// MaxSubscriptions bounds the resources/subscribe URIs of one session
	// (default 1000, and 256 KiB of URIs; negative for no limit on the
	// count). One more is refused with -32602 naming the limit.
	MaxSubscriptions int
	// MaxAnswerBytes bounds the body of a POST that carries a client's
	// answer to a server request (an elicitation, sampling or roots
	// result): default 1 MiB, which fits a form's answer or a sampled
	// message with an image. A larger one is refused with HTTP 413 and
	// -32602 naming the limit, and goes nowhere.
	MaxAnswerBytes int
	// MaxAnswersPerSecond bounds the unmatched answers one session POSTs
	// to one instance (answers that name no request waiting for them, or
	// are over MaxAnswerBytes), per second, with bursts of twice as many
	// (default 32; negative for no limit). An answer the server is
	// waiting for is matched first and never counts. Past the limit an
	// answer is refused with HTTP 429, -32600, Retry-After: 1 and the
	// limit in the error's data.
	MaxAnswersPerSecond int
	// TrustedProxies lists the proxies (load balancers) whose
	// X-Forwarded-For header is believed when the client address of an
	// anonymous caller is read for MaxSessionsPerClient. The header is read
	// only from a peer in one of these prefixes, from the right, skipping
	// the addresses of trusted proxies; the first other address is the
	// client's. With none (the default) the client address is the peer's
	// IP, so behind a proxy all anonymous callers share the proxy's quota.
	TrustedProxies []netip.Prefix
	// Store keeps the HTTP sessions. nil means a memory store of this
	// adapter, for one process. Give every instance of a fleet the same
	// shared store (redisfleet.Fleet.Sessions): a session made on one instance
	// is then served by any, and a client's answer to a server request,
	// POSTed to any instance, reaches the call waiting for it.
	Store Store
	// Events keeps the events of the sessions' streams, for clients that
	// resume a cut stream with Last-Event-ID (see EventStore). nil means
	// the Store when it is an EventStore too (redisfleet's is), so a
	// client resumes on any instance of a fleet; else a memory event store
	// of this adapter (resumes on this instance only).
	Events EventStore
	// Now is the clock of the default store and of the adapter's own
	// bookkeeping (nil: the wall clock). A shared store keeps its own
	// clock (redisfleet's store reads the Redis server's).
	Now func() time.Time
}

// adapter serves legacy sessions for one server.Server. Create it with New
// and give it to the server as server.Options.Legacy; it serves that one
// server.
type adapter struct {
	httpServer atomic.Pointer[http.Server] // the server of the latest inline call, for a poll (completeResponse)
	srv        *server.Server
	d          era.Dispatcher[server.RequestMeta]
	opts       Options
	store      Store
	events     EventStore
	shared     bool   // the store was given: other instances may share it
	instance   string // names this adapter in records and messages
	now        func() time.Time
	keep       time.Duration // how often sessions in use are touched
	nextID     atomic.Int64  // server-to-client request ids
	draining   atomic.Bool   // Shutdown began: no new sessions
	calls      atomic.Int64  // POSTed requests in progress on this instance
	drain      drainState    // Shutdown: the streams of calls are ended (drain.go)
	callStore  callStore     // the store's records of waiting calls, if it keeps them (waiting.go)
	parkNow    chan struct{} // closed when Shutdown begins: waiting calls park at once
	inline     bool          // HoldFor negative: a call's next step runs before its answer is acknowledged
	parkOnce   sync.Once
	streams    *streamKeys // names the kept streams (streamkey.go)
	frames     sse.Frames  // the buffers the calls' streams frame their events in

	mu        sync.Mutex
	live      map[string]*session   // HTTP sessions in use on this instance, by id
	stdio     map[*session]struct{} // stdio sessions (one per process)
	stopWatch func()

	answers answerState // answers between instances: see answers.go

	life context.Context // ends at Close
	stop context.CancelFunc
	wg   sync.WaitGroup // the keeper and the receiver
}

// New returns the adapter opts configures (nil for the defaults). Pass it
// to server.New as Options.Legacy; the server serves, drains and closes it
// with itself:
//
//	srv, err := server.New(info, &server.Options{Legacy: legacy.New(nil)})
func New(opts *Options) server.LegacyAdapter { return newAdapter(opts) }

// newAdapter is New, for this package's tests that reach the adapter's
// own state.
func newAdapter(opts *Options) *adapter {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = defaultCallTimeout
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = defaultSessionIdle
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = defaultMaxRounds
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = defaultKeepAlive
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = defaultMaxSessions
	}
	if o.MaxAnswerBytes <= 0 {
		o.MaxAnswerBytes = defaultMaxAnswerBytes
	}
	inline := o.HoldFor < 0
	switch {
	case o.HoldFor == 0:
		o.HoldFor = defaultHoldFor
	case inline:
		o.HoldFor = 0 // parks at once
	}
	for _, lim := range []struct {
		v   *int
		def int
	}{{&o.MaxSessionsPerClient, defaultMaxSessionsPerClient}, {&o.MaxSubscriptions, defaultMaxSubscriptions}, {&o.MaxAnswersPerSecond, defaultMaxAnswersPerSecond}} {
		switch {
		case *lim.v == 0:
			*lim.v = lim.def
		case *lim.v < 0:
			*lim.v = 0 // no limit
		}
	}
	now := o.Now
	if now == nil {
		now = time.Now // the adapter's one reading of the wall clock
	}
	h := &adapter{opts: o, store: o.Store, shared: o.Store != nil, instance: randomID(""), now: now, streams: newStreamKeys(),
		live: make(map[string]*session), stdio: make(map[*session]struct{}),
		answers: answerState{wake: make(chan struct{}, 1), buckets: make(map[string]*answerBucket)}}
	if h.store == nil {
		h.store = newMemoryStore(now)
	}
	h.callStore, _ = h.store.(callStore)
	h.inline = inline
	h.parkNow = make(chan struct{})
	h.events = o.Events
	if h.events == nil {
		if es, ok := h.store.(EventStore); ok {
			h.events = es
		} else {
			h.events = NewMemoryEventStore(0)
		}
	}
	// A session in use is touched four times per idle period (at least
	// once a minute), so it never goes idle while it is in use.
	h.keep = max(min(o.SessionIdle/4, time.Minute), time.Millisecond)
	h.life, h.stop = context.WithCancel(context.Background())
	return h
}

// Bind is called by server.New; it is not for other use. It ties h to
// srv, once: it watches the server's changes and starts the keeper and,
// with a shared store, the receiver of the other instances' messages.
func (h *adapter) Bind(srv *server.Server, d era.Dispatcher[server.RequestMeta]) error {
	h.mu.Lock()
	if h.srv != nil {
		h.mu.Unlock()
		return errors.New("this legacy.adapter already serves another server; make one per server")
	}
	h.srv, h.d = srv, d
	h.stopWatch = d.Watch(h.changed)
	h.mu.Unlock()
	h.wg.Add(1)
	go h.keeper()
	if h.shared {
		h.wg.Add(2)
		go h.receiver()
		go h.answerPoller()
	}
	if _, mem := h.events.(*memoryEventStore); !mem {
		h.wg.Add(1)
		go h.beater()
	}
	return nil
}

// Shutdown is called by server.Server.Shutdown; it is not for other use.
// It stops taking new sessions (initialize is answered 503 with
// Retry-After: 1) and waits until the requests in progress on this
// instance (a call parked on the client's answer among them) have ended,
// or ctx ends. server.Server.Shutdown then closes the adapter.
func (h *adapter) Shutdown(ctx context.Context) error {
	h.draining.Store(true)
	h.parkOnce.Do(func() { close(h.parkNow) })
	h.drain.begin(h.life)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for h.calls.Load() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("legacy: %d calls in progress: %w", h.calls.Load(), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// Versions lists the legacy protocol versions served, newest first.
func (h *adapter) Versions() []string { return slices.Clone(versions) }

// Close ends every session in use on this instance (their waits fail)
// and stops watching the server. With the default store every session
// ends; a shared store keeps them, for the other instances to serve.
func (h *adapter) Close() {
	h.mu.Lock()
	stopWatch := h.stopWatch
	h.mu.Unlock()
	if stopWatch != nil {
		stopWatch()
	}
	h.stop()
	h.wg.Wait()
	h.mu.Lock()
	all := make([]*session, 0, len(h.live))
	for id, s := range h.live {
		all = append(all, s)
		delete(h.live, id)
	}
	h.mu.Unlock()
	for _, s := range all {
		s.close(errHandlerClosed)
	}
	if m, ok := h.store.(*memoryStore); ok && !h.shared {
		m.clear()
	}
}

var (
	errHandlerClosed = errors.New("the server closed the session")
	errDeleted       = errors.New("the client deleted the session")
	errExpired       = errors.New("the session ended: it expired, or was deleted on another instance")
)

// SessionCount returns the number of open HTTP sessions in the Store (with
// a shared store, of the fleet), or -1 if the store cannot be read.
func (h *adapter) SessionCount() int {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	n, err := h.store.Count(ctx)
	if err != nil {
		return -1
	}
	return n
}

func newSessionID() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// validSessionID reports whether id has the form of an id newSessionID
// makes, so that nothing else reaches the store.
func validSessionID(id string) bool {
	if len(id) != 32 {
		return false
	}
	return base64URL(id)
}

// base64URL reports whether s holds only base64url characters (the
// alphabet of RFC 4648 §5, no padding). It looks each byte up in a table:
// the five range tests per byte were about 600 instructions of every
// blocking round trip (two session ids; BenchmarkLegacyElicitInProcess,
// callgrind, issue 23). The lookups of 8 bytes are OR-ed together and
// tested once, without a branch per byte (the loop of a branch per byte
// was still 520 instructions a round trip). TestBase64URLTable holds the
// table to the ranges.
func base64URL(s string) bool {
	var bad byte
	for len(s) >= 8 {
		t := &base64URLBad
		bad |= t[s[0]] | t[s[1]] | t[s[2]] | t[s[3]] | t[s[4]] | t[s[5]] | t[s[6]] | t[s[7]]
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		bad |= base64URLBad[s[i]]
	}
	return bad == 0
}

// base64URLBad is 1 for the bytes that are not base64url characters and
// 0 for those that are; built once, read only.
var base64URLBad = func() (t [256]byte) {
	for c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			t[c] = 1
		}
	}
	return t
}()

// changed forwards server changes to the sessions' GET streams.
func (h *adapter) changed(c era.Change) {
	var method string
	switch c.Kind {
	case era.ToolsChanged:
		method = "notifications/tools/list_changed"
	case era.PromptsChanged:
		method = "notifications/prompts/list_changed"
	case era.ResourcesChanged:
		method = "notifications/resources/list_changed"
	case era.ResourceUpdated:
		method = "notifications/resources/updated"
	default:
		return
	}
	var params any
	if c.Kind == era.ResourceUpdated {
		params = map[string]string{"uri": c.URI}
	}
	msg, err := rpcwire.EncodeNotification(method, params)
	if err != nil {
		return
	}
	h.mu.Lock()
	targets := make([]*session, 0, len(h.live)+len(h.stdio))
	for _, s := range h.live {
		targets = append(targets, s)
	}
	for s := range h.stdio {
		targets = append(targets, s)
	}
	h.mu.Unlock()
	// Sending may block on a stdio write: never under h.mu. Every
	// instance hears the changes (its own, and with a server fan-out the
	// others'), so each sends them only on the streams it holds.
	for _, s := range targets {
		if c.Kind == era.ResourceUpdated && !s.subscribed(c.URI) {
			continue
		}
		s.sendLocal(msg)
	}
}

// refuse answers a request refused for load or by a quota (status 429 or
// 503): Retry-After, the JSON-RPC error with the limit and the seconds in
// its data (rpcwire.Refusal: clients read the body, not the header), and
// the server logs and counts it (Dispatcher.Refused).
func (h *adapter) refuse(ctx context.Context, w http.ResponseWriter, status int, id mcp.ID, e *mcp.Error, limit string, retry time.Duration) {
	secs := rpcwire.RetrySeconds(retry)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	e.Data = &rpcwire.Refusal{Limit: limit, RetryAfterSeconds: secs}
	if h.d != nil {
		h.d.Refused(ctx, limit, status, retry)
	}
	writeJSONError(w, status, id, e)
}

func writeJSONError(w http.ResponseWriter, status int, id mcp.ID, e *mcp.Error) {
	b, _ := rpcwire.AppendError(nil, id, e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ServeLegacy serves an HTTP request the server routed to a legacy
// session; the server calls it, not users.
func (h *adapter) ServeLegacy(w http.ResponseWriter, r *http.Request, body []byte, msg *rpcwire.Message) {
	h.ServeLegacyDecoded(w, r, body, msg, nil)
}

// ServeLegacyDecoded is ServeLegacy for a request whose params the server
// decoded already (decoded, handed back to its dispatch with the call's
// first run); the server calls it, not users.
func (h *adapter) ServeLegacyDecoded(w http.ResponseWriter, r *http.Request, body []byte, msg *rpcwire.Message, decoded any) {
	// During a drain the server has set Connection: close already: it
	// marks itself draining before it calls Shutdown, and every request
	// comes here through its ServeHTTP.
	sid := headerValue(r.Header, sessionIDKey)
	if r.Method == http.MethodPost && msg != nil && msg.Method == "initialize" {
		h.serveInitialize(w, r, sid, msg)
		return
	}
	var id mcp.ID
	if msg != nil {
		id = msg.ID
	}
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodDelete:
	default:
		refuseMethod(w, r, id)
		return
	}
	// Only a request other than ping, and a GET stream, are use.
	use := r.Method == http.MethodGet || (msg != nil && msg.IsRequest() && msg.Method != "ping")
	var (
		rec   *Record
		local Record // the record, read from the default store
	)
	err := ErrNotFound
	if validSessionID(sid) {
		rec, err = h.readRecord(r.Context(), sid, use, &local)
	}
	if err == nil && rec.Principal != server.PrincipalFromContext(r.Context()) {
		err = ErrNotFound // another subject's session does not exist for this one
	}
	if err != nil {
		h.refuseRecord(w, id, err)
		return
	}
	if v := headerValue(r.Header, protocolVersionKey); v != "" && v != rec.ProtocolVersion {
		refuseVersion(w, id, v, rec.ProtocolVersion)
		return
	}
	switch r.Method {
	case http.MethodDelete:
		h.deleteSession(w, r, sid, id)
	case http.MethodGet:
		h.serveGETRequest(w, r, rec, use)
	case http.MethodPost:
		switch {
		case msg.IsResponse():
			if h.acceptAnswer(w, r, sid, body, msg) {
				w.WriteHeader(http.StatusAccepted)
			}
		case msg.IsNotification():
			h.clientNotification(sid, msg)
			w.WriteHeader(http.StatusAccepted)
		default:
			h.serveCall(w, r, rec, use, msg, decoded)
		}
	}
}

// The rare branches of ServeLegacyDecoded are functions of their own,
// kept out of line, so that its frame, under every call of a session over
// HTTP, stays small (see finishError).

// serveInitialize serves an initialize POST; sid is its session id
// header, which it must not carry.
//
//go:noinline
func (h *adapter) serveInitialize(w http.ResponseWriter, r *http.Request, sid string, msg *rpcwire.Message) {
	if sid != "" {
		writeJSONError(w, http.StatusBadRequest, msg.ID, mcp.Errorf(mcp.InvalidRequest, "initialize must not carry an %s header", rpcwire.HeaderSessionID))
		return
	}
	h.initializeHTTP(w, r, msg)
}

// refuseMethod answers an HTTP method a session endpoint does not serve.
//
//go:noinline
func refuseMethod(w http.ResponseWriter, r *http.Request, id mcp.ID) {
	w.Header().Set("Allow", "GET, POST, DELETE")
	writeJSONError(w, http.StatusMethodNotAllowed, id, mcp.Errorf(mcp.InvalidRequest, "method %s not allowed", r.Method))
}

// refuseRecord answers a request whose session could not be read (err
// not nil): 404 when it does not exist (for this caller), else the
// store's failure.
//
//go:noinline
func (h *adapter) refuseRecord(w http.ResponseWriter, id mcp.ID, err error) {
	if errors.Is(err, ErrNotFound) {
		writeJSONError(w, http.StatusNotFound, id, &mcp.Error{Code: codeSessionNotFound, Message: "Session not found: initialize a new session"})
		return
	}
	h.storeFailed(w, id, "read the session", err)
}

// refuseVersion answers a request whose protocol version header v is not
// its session's version.
//
//go:noinline
func refuseVersion(w http.ResponseWriter, id mcp.ID, v, version string) {
	writeJSONError(w, http.StatusBadRequest, id, mcp.Errorf(mcp.InvalidRequest, "%s %s does not match the session's version %q", rpcwire.HeaderProtocolVersion, clip.Quote(v), version))
}

// deleteSession serves a DELETE of session sid.
//
//go:noinline
func (h *adapter) deleteSession(w http.ResponseWriter, r *http.Request, sid string, id mcp.ID) {
	sctx, cancel := h.storeCtx(r.Context())
	_, err := h.store.Delete(sctx, sid)
	cancel()
	if err != nil {
		h.storeFailed(w, id, "delete the session", err)
		return
	}
	h.broadcast(&fleetMessage{Kind: kindClosed, Session: sid}) // here too
	w.WriteHeader(http.StatusNoContent)
}

// serveGETRequest serves a GET of the session of rec: its stream, or the
// resumption of a call's.
//
//go:noinline
func (h *adapter) serveGETRequest(w http.ResponseWriter, r *http.Request, rec *Record, use bool) {
	if h.draining.Load() {
		h.endDraining(w, r)
		return
	}
	s := h.acquire(rec, use)
	defer h.release(s, use)
	stream, pos, meta, err := h.lastEventStream(r.Context(), r, s)
	if err != nil {
		h.storeFailed(w, mcp.ID{}, "read a stream to resume", err)
		return
	}
	if meta != nil && len(meta.Request) > 0 {
		h.resumeCall(w, r, s, stream, pos, meta)
		return
	}
	s.serveGET(w, r, stream, pos)
}

// protocolVersionKey is rpcwire.HeaderProtocolVersion in the canonical
// form net/http keys a request's headers by, so that reading it does not
// canonicalize (and allocate) the name on every request.
var protocolVersionKey = http.CanonicalHeaderKey(rpcwire.HeaderProtocolVersion)

// sessionIDKey is rpcwire.HeaderSessionID in canonical form (see
// protocolVersionKey).
var sessionIDKey = http.CanonicalHeaderKey(rpcwire.HeaderSessionID)

// headerValue is h.Get(key) for a key already canonical.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// endCancelled ends the stream of a request the client cancelled. The
// 2025-11-25 transport answers a POST carrying a request with
// text/event-stream or application/json, and a cancelled request gets no
// response: the SSE stream (opened now if nothing was sent on it yet)
// ends without one. A client that accepts only JSON gets an error
// response instead, the one body its Accept allows.
func endCancelled(st *sse.Stream, id mcp.ID) {
	if !st.CanSend() {
		b, _ := rpcwire.AppendError(nil, id, mcp.Errorf(mcp.InternalError, "the request was cancelled"))
		st.Finish(http.StatusOK, b)
		return
	}
	st.Open()
	st.Abandon()
}

// storeTimeout bounds a store operation the adapter makes on its own
// behalf (touching sessions in use, forwarding a message), when no
// request's context applies.
const storeTimeout = 10 * time.Second

// storeFailed answers a request that the store could not serve: 503, to
// be retried in a second, with a reference to the log line that has the
// detail (the store's errors name hosts and addresses).
func (h *adapter) storeFailed(w http.ResponseWriter, id mcp.ID, what string, err error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	ref := hex.EncodeToString(b[:])
	h.d.Logger().Error("legacy session store failed", "op", what, "ref", ref, "err", err)
	h.refuse(context.Background(), w, http.StatusServiceUnavailable, id, mcp.Errorf(mcp.InternalError, "Internal error (ref %s): details are in the server log", ref), "store", time.Second)
}

type initializeParams struct {
	ProtocolVersion string                  `json:"protocolVersion"`
	Capabilities    *mcp.ClientCapabilities `json:"capabilities"`
	ClientInfo      *mcp.Implementation     `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string                 `json:"protocolVersion"`
	Capabilities    era.ServerCapabilities `json:"capabilities"`
	ServerInfo      mcp.Implementation     `json:"serverInfo"`
	Instructions    string                 `json:"instructions,omitempty"`
}

// maxInitializeParams bounds the params of initialize. What they declare
// (capabilities, clientInfo) is kept in the session's record for the
// session's life, and read again by every request (from Redis, with a
// shared store), so a client cannot make it large.
const maxInitializeParams = 64 << 10

// negotiate reads initialize params and returns the session settings and
// the result.
func (h *adapter) negotiate(msg *rpcwire.Message) (*initializeParams, []byte, *mcp.Error) {
	var p initializeParams
	if len(msg.Params) > maxInitializeParams {
		return nil, nil, mcp.Errorf(mcp.InvalidParams, "initialize params are %d bytes; capabilities and clientInfo must fit in %d KiB", len(msg.Params), maxInitializeParams>>10)
	}
	if len(msg.Params) == 0 || strictjson.Unmarshal(msg.Params, &p) != nil {
		return nil, nil, mcp.Errorf(mcp.InvalidParams, "initialize needs params with protocolVersion, capabilities and clientInfo")
	}
	if p.ProtocolVersion == "" || p.Capabilities == nil {
		return nil, nil, mcp.Errorf(mcp.InvalidParams, "initialize needs protocolVersion and capabilities")
	}
	if !slices.Contains(versions, p.ProtocolVersion) {
		p.ProtocolVersion = versions[0]
	}
	res, err := json.Marshal(initializeResult{
		ProtocolVersion: p.ProtocolVersion,
		Capabilities:    h.d.Capabilities(),
		ServerInfo:      h.srv.Info(),
		Instructions:    h.d.Instructions(),
	})
	if err != nil {
		return nil, nil, mcp.Errorf(mcp.InternalError, "encode initialize result: %v", err)
	}
	return &p, res, nil
}

func (h *adapter) initializeHTTP(w http.ResponseWriter, r *http.Request, msg *rpcwire.Message) {
	if h.draining.Load() {
		h.refuse(r.Context(), w, http.StatusServiceUnavailable, msg.ID, mcp.Errorf(mcp.InternalError,
			"this server instance is shutting down and opens no new session; try again (another instance will serve it)"), "draining", time.Second)
		return
	}
	p, res, e := h.negotiate(msg)
	if e != nil {
		writeJSONError(w, http.StatusBadRequest, msg.ID, e)
		return
	}
	id, err := newSessionID()
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, msg.ID, mcp.Errorf(mcp.InternalError, "%v", err))
		return
	}
	rec := &Record{
		ID: id, ProtocolVersion: p.ProtocolVersion, Capabilities: *p.Capabilities, ClientInfo: p.ClientInfo,
		Principal: server.PrincipalFromContext(r.Context()), Owner: h.owner(r),
		LogLevel: "info", CreatedAt: h.now(),
	}
	sctx, cancel := h.storeCtx(r.Context())
	defer cancel()
	err = h.store.Create(sctx, rec, Limits{Idle: h.opts.SessionIdle, MaxSessions: h.opts.MaxSessions, MaxPerOwner: h.opts.MaxSessionsPerClient})
	var le *LimitError
	switch {
	case errors.As(err, &le):
		h.refuseSession(r.Context(), w, msg.ID, rec.Owner, le)
		return
	case err != nil:
		h.storeFailed(w, msg.ID, "create a session", err)
		return
	}
	w.Header().Set(rpcwire.HeaderSessionID, id)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(rpcwire.AppendResult(nil, msg.ID, res))
}

// refuseSession answers an initialize that a limit refused: 429 for the
// client's quota, 503 for the total, both saying when to retry.
func (h *adapter) refuseSession(ctx context.Context, w http.ResponseWriter, id mcp.ID, owner string, le *LimitError) {
	secs := rpcwire.RetrySeconds(le.RetryAfter)
	if !le.PerOwner {
		h.refuse(ctx, w, http.StatusServiceUnavailable, id, mcp.Errorf(mcp.InternalError,
			"too many sessions (%d); try again later (in %d s)", le.Limit, secs), "legacy.Options.MaxSessions", le.RetryAfter)
		return
	}
	who := "this principal"
	if !strings.HasPrefix(owner, "principal:") {
		who = "this client address"
	}
	h.refuse(ctx, w, http.StatusTooManyRequests, id, mcp.Errorf(mcp.InvalidRequest,
		"Too many sessions: %s has its limit of %d open; end one (DELETE) or try again in %d s", who, le.Limit, secs), "legacy.Options.MaxSessionsPerClient", le.RetryAfter)
}
