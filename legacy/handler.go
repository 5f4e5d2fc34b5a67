package legacy

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/sse"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/jsonrpc"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// The protocol versions served, newest first.
var versions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// Defaults for Options.
const (
	DefaultCallTimeout = 600 * time.Second
	DefaultSessionIdle = 30 * time.Minute
	DefaultMaxRounds   = 16
	DefaultKeepAlive   = 15 * time.Second
	DefaultMaxSessions = 10000
)

// codeSessionNotFound answers a request for an unknown or expired session.
const codeSessionNotFound = -32001

// Options configure a Handler. The zero value is usable.
type Options struct {
	// CallTimeout bounds every wait for a client answer: a blocking client
	// call or a bridged round (default 600 s).
	CallTimeout time.Duration
	// SessionIdle is how long a session may go without a request before it
	// expires (default 30 minutes). A session with a request in flight or
	// an open GET stream does not expire.
	SessionIdle time.Duration
	// MaxRounds bounds how many times the bridge serves an input_required
	// result for one call (default 16).
	MaxRounds int
	// KeepAlive is how often a stream that waits for the client gets an SSE
	// comment (default 15 s).
	KeepAlive time.Duration
	// MaxSessions bounds the open HTTP sessions (default 10000); initialize
	// beyond it gets 503.
	MaxSessions int
}

// Handler serves legacy sessions for one server.Server. Create it with New
// and give it to the server as server.Options.Legacy; it serves that one
// server.
type Handler struct {
	srv  *server.Server
	d    era.Dispatcher[server.RequestMeta]
	opts Options

	mu        sync.Mutex
	sessions  map[string]*session   // HTTP sessions by id
	stdio     map[*session]struct{} // stdio sessions (one per process)
	lastSweep time.Time
	stopWatch func()
}

// New returns a Handler configured by opts (nil for the defaults). Pass it
// to server.New as Options.Legacy:
//
//	srv, err := server.New(info, &server.Options{Legacy: legacy.New(nil)})
func New(opts *Options) *Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = DefaultSessionIdle
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = DefaultMaxRounds
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	return &Handler{opts: o, sessions: make(map[string]*session), stdio: make(map[*session]struct{}), lastSweep: time.Now()}
}

// Bind is called by server.New; it is not for other use. It ties h to
// srv, once.
func (h *Handler) Bind(srv *server.Server, d era.Dispatcher[server.RequestMeta]) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.srv != nil {
		return errors.New("this legacy.Handler already serves another server; make one per server")
	}
	h.srv, h.d = srv, d
	h.stopWatch = srv.Watch(h.changed)
	return nil
}

// Versions lists the legacy protocol versions served, newest first.
func (h *Handler) Versions() []string { return slices.Clone(versions) }

// Close ends every session (their waits fail) and stops watching the server.
func (h *Handler) Close() {
	h.mu.Lock()
	stop := h.stopWatch
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
	h.mu.Lock()
	all := make([]*session, 0, len(h.sessions))
	for id, s := range h.sessions {
		all = append(all, s)
		delete(h.sessions, id)
	}
	h.mu.Unlock()
	for _, s := range all {
		s.close(errHandlerClosed)
	}
}

var (
	errHandlerClosed = errors.New("the server closed the session")
	errDeleted       = errors.New("the client deleted the session")
	errExpired       = errors.New("the session expired")
)

// SessionCount returns the number of open HTTP sessions.
func (h *Handler) SessionCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

func newSessionID() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// changed forwards server changes to the sessions' GET streams.
func (h *Handler) changed(c server.Change) {
	var method string
	switch c.Kind {
	case server.ToolsChanged:
		method = "notifications/tools/list_changed"
	case server.PromptsChanged:
		method = "notifications/prompts/list_changed"
	case server.ResourcesChanged:
		method = "notifications/resources/list_changed"
	case server.ResourceUpdated:
		method = "notifications/resources/updated"
	default:
		return
	}
	var params any
	if c.Kind == server.ResourceUpdated {
		params = map[string]string{"uri": c.URI}
	}
	msg, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		return
	}
	h.mu.Lock()
	targets := make([]*session, 0, len(h.sessions)+len(h.stdio))
	for _, s := range h.sessions {
		targets = append(targets, s)
	}
	for s := range h.stdio {
		targets = append(targets, s)
	}
	h.mu.Unlock()
	// Sending may block on a stdio write: never under h.mu.
	for _, s := range targets {
		if c.Kind == server.ResourceUpdated && !s.subscribed(c.URI) {
			continue
		}
		s.sendSession(msg)
	}
}

// sweep expires idle sessions, at most twice per idle period.
func (h *Handler) sweep(now time.Time) {
	h.mu.Lock()
	if now.Sub(h.lastSweep) < h.opts.SessionIdle/2 {
		h.mu.Unlock()
		return
	}
	h.lastSweep = now
	var expired []*session
	for id, s := range h.sessions {
		if s.idleSince(now) > h.opts.SessionIdle {
			expired = append(expired, s)
			delete(h.sessions, id)
		}
	}
	h.mu.Unlock()
	for _, s := range expired {
		s.close(errExpired)
	}
}

func (h *Handler) lookup(id string) *session {
	h.sweep(time.Now())
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

func writeJSONError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	b, _ := jsonrpc.AppendError(nil, id, e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ServeLegacy serves an HTTP request the server routed to a legacy
// session; the server calls it, not users.
func (h *Handler) ServeLegacy(w http.ResponseWriter, r *http.Request, body []byte, msg *jsonrpc.Message) {
	sid := r.Header.Get(server.HeaderSessionID)
	if r.Method == http.MethodPost && msg != nil && msg.Method == "initialize" {
		if sid != "" {
			writeJSONError(w, http.StatusBadRequest, msg.ID, jsonrpc.Errorf(jsonrpc.InvalidRequest, "initialize must not carry an %s header", server.HeaderSessionID))
			return
		}
		h.initializeHTTP(w, r, msg)
		return
	}
	var id jsonrpc.ID
	if msg != nil {
		id = msg.ID
	}
	s := h.lookup(sid)
	if s != nil && s.principal != mrtr.PrincipalFromContext(r.Context()) {
		s = nil // another subject's session does not exist for this one
	}
	if s == nil {
		writeJSONError(w, http.StatusNotFound, id, &jsonrpc.Error{Code: codeSessionNotFound, Message: "Session not found: initialize a new session"})
		return
	}
	if v := r.Header.Get(server.HeaderProtocolVersion); v != "" && v != s.version {
		writeJSONError(w, http.StatusBadRequest, id, jsonrpc.Errorf(jsonrpc.InvalidRequest, "%s %s does not match the session's version %q", server.HeaderProtocolVersion, clip.Quote(v), s.version))
		return
	}
	s.touch()
	switch r.Method {
	case http.MethodDelete:
		h.mu.Lock()
		delete(h.sessions, s.id)
		h.mu.Unlock()
		s.close(errDeleted)
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		s.serveGET(w, r)
	case http.MethodPost:
		switch {
		case msg.IsResponse():
			s.deliver(msg)
			w.WriteHeader(http.StatusAccepted)
		case msg.IsNotification():
			s.notification(msg)
			w.WriteHeader(http.StatusAccepted)
		default:
			st := sse.New(w, r)
			s.serveRequest(r.Context(), msg, httpWire{st}, func(res []byte) { st.Finish(http.StatusOK, res) }, st.Abandon)
		}
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeJSONError(w, http.StatusMethodNotAllowed, id, jsonrpc.Errorf(jsonrpc.InvalidRequest, "method %s not allowed", r.Method))
	}
}

type initializeParams struct {
	ProtocolVersion string                 `json:"protocolVersion"`
	Capabilities    *client.Capabilities   `json:"capabilities"`
	ClientInfo      *server.Implementation `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string                    `json:"protocolVersion"`
	Capabilities    server.ServerCapabilities `json:"capabilities"`
	ServerInfo      server.Implementation     `json:"serverInfo"`
	Instructions    string                    `json:"instructions,omitempty"`
}

// negotiate reads initialize params and returns the session settings and
// the result.
func (h *Handler) negotiate(msg *jsonrpc.Message) (*initializeParams, []byte, *jsonrpc.Error) {
	var p initializeParams
	if len(msg.Params) == 0 || strictjson.Unmarshal(msg.Params, &p) != nil {
		return nil, nil, jsonrpc.Errorf(jsonrpc.InvalidParams, "initialize needs params with protocolVersion, capabilities and clientInfo")
	}
	if p.ProtocolVersion == "" || p.Capabilities == nil {
		return nil, nil, jsonrpc.Errorf(jsonrpc.InvalidParams, "initialize needs protocolVersion and capabilities")
	}
	if !slices.Contains(versions, p.ProtocolVersion) {
		p.ProtocolVersion = versions[0]
	}
	res, err := json.Marshal(initializeResult{
		ProtocolVersion: p.ProtocolVersion,
		Capabilities:    h.srv.Capabilities(),
		ServerInfo:      h.srv.Info(),
		Instructions:    h.srv.Instructions(),
	})
	if err != nil {
		return nil, nil, jsonrpc.Errorf(jsonrpc.InternalError, "encode initialize result: %v", err)
	}
	return &p, res, nil
}

func (h *Handler) initializeHTTP(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	p, res, e := h.negotiate(msg)
	if e != nil {
		writeJSONError(w, http.StatusBadRequest, msg.ID, e)
		return
	}
	h.sweep(time.Now())
	id, err := newSessionID()
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, msg.ID, jsonrpc.Errorf(jsonrpc.InternalError, "%v", err))
		return
	}
	s := newSession(h, id, p, nil)
	s.principal = mrtr.PrincipalFromContext(r.Context())
	h.mu.Lock()
	if len(h.sessions) >= h.opts.MaxSessions {
		h.mu.Unlock()
		s.close(errHandlerClosed)
		writeJSONError(w, http.StatusServiceUnavailable, msg.ID, jsonrpc.Errorf(jsonrpc.InternalError, "too many sessions (%d); try again later", h.opts.MaxSessions))
		return
	}
	h.sessions[id] = s
	h.mu.Unlock()
	w.Header().Set(server.HeaderSessionID, id)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(jsonrpc.AppendResult(nil, msg.ID, res))
}

// httpWire carries a call's messages on its POST stream.
type httpWire struct{ st *sse.Stream }

func (w httpWire) send(msg []byte) error {
	if err := w.st.Send(msg); err != nil {
		if errors.Is(err, sse.ErrNoSSE) {
			return fmt.Errorf("cannot reach the client: its request did not accept text/event-stream")
		}
		return err
	}
	return nil
}

func (w httpWire) keepAlive() error { return w.st.KeepAlive() }
