package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/loglevel"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/sse"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// wire carries the messages of one client request before its response:
// the POST's SSE stream on HTTP, stdout on stdio.
type wire interface {
	send(msg []byte) error
	keepAlive() error
}

// reply is a client's answer to a server-to-client request.
type reply struct {
	id     string
	result json.RawMessage
	err    *mcp.Error
	taken  bool // taken from the store, which let go of its park (answerTaker)
}

// session is one legacy client: a stdio process, or an HTTP session in use
// on this instance (its record, which every instance reads, is in the
// adapter's Store; this is what lives only here: the calls in flight, the
// answers they wait for, an open GET stream).
type session struct {
	h          *adapter
	id         string
	version    string
	caps       mcp.ClientCapabilities
	clientInfo *mcp.Implementation
	principal  string // the authenticated subject that opened the session
	http       bool   // an HTTP session, kept in the store

	calls sync.WaitGroup // requests being served

	// refs and uses are guarded by h.mu: acquisitions, and those that are
	// use. int32 keeps a session in the 320-byte size class (it is
	// allocated for each request of an HTTP session; issue 23).
	refs, uses int32

	mu       sync.Mutex
	logLevel string
	subs     map[string]bool // made on first use
	rev      int64           // the record revision logLevel and subs come from
	touched  time.Time       // when this instance last recorded a use
	inflight inflight        // client request id → cancel
	pending  waiters         // server request id → waiter
	get      chan []byte     // the open GET stream's queue, or nil
	getStop  chan struct{}   // closed to end the GET stream, once it is claimed
	getRev   int64           // the record revision that names this instance its holder
	out      func([]byte) error
	// cause says why the session closed (nil while it is open), and done
	// is closed then: made by the first wait (doneChan), as most live
	// sessions serve one request and end without one.
	cause error
	done  chan struct{}
}

func newSession(h *adapter, id string, p *initializeParams, out func([]byte) error) *session {
	return &session{
		h: h, id: id, version: p.ProtocolVersion, caps: *p.Capabilities, clientInfo: p.ClientInfo,
		logLevel: "info",
		out:      out,
	}
}

// sessionFromRecord makes the live part of an HTTP session.
func sessionFromRecord(h *adapter, rec *Record) *session {
	return &session{
		h: h, id: rec.ID, version: rec.ProtocolVersion, caps: rec.Capabilities, clientInfo: rec.ClientInfo,
		principal: rec.Principal, http: true, rev: -1,
		logLevel: "info",
	}
}

// refresh takes what may have changed from a record read from the store,
// unless the session already has a later revision.
func (s *session) refresh(rec *Record, touched bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if touched && rec.LastUsed.After(s.touched) {
		s.touched = rec.LastUsed
	}
	if rec.Rev < s.rev {
		return
	}
	s.rev, s.logLevel = rec.Rev, rec.LogLevel
	clear(s.subs)
	if len(rec.Subscriptions) > 0 && s.subs == nil {
		s.subs = make(map[string]bool, len(rec.Subscriptions))
	}
	for _, u := range rec.Subscriptions {
		s.subs[u] = true
	}
}

func (s *session) subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[uri]
}

// close ends the session: waits fail with cause, requests are cancelled,
// the GET stream ends.
func (s *session) close(cause error) {
	// The requests in flight are cancelled here rather than each
	// watching the session (a context.AfterFunc per request):
	// serveRequest registers a request in inflight and reads cause under
	// s.mu, so a request is either cancelled here or sees the session
	// closed.
	s.mu.Lock()
	cause = s.shut(cause)
	cancels := s.inflight.cancels()
	s.mu.Unlock()
	for _, c := range cancels {
		c(cause)
	}
}

// shut records that the session closed, with cause (nil:
// context.Canceled), unless it closed already, and wakes the waits on
// doneChan; it returns the cause that stays. Called with s.mu held.
func (s *session) shut(cause error) error {
	if s.cause != nil {
		return s.cause
	}
	if cause == nil {
		cause = context.Canceled
	}
	s.cause = cause
	if s.done != nil { // else doneChan makes it closed
		close(s.done)
	}
	return cause
}

// closedCause returns why the session closed, or nil while it is open.
func (s *session) closedCause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cause
}

// doneChan returns a channel closed when the session closes.
func (s *session) doneChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
		if s.cause != nil {
			close(s.done)
		}
	}
	return s.done
}

// sendSession sends a message that belongs to no request: on the GET
// stream (HTTP) or stdout (stdio). When another instance holds the GET
// stream it goes there. Without a GET stream it is dropped, as the
// specification allows.
func (s *session) sendSession(msg []byte) {
	if !s.http || !s.h.shared {
		s.sendLocal(msg)
		return
	}
	// Another instance may have taken the stream over a moment ago: the
	// record says where it is.
	s.h.sendToStream(s, msg)
}

// sendLocal sends a session message on the GET stream this instance holds,
// or stdout, and reports whether the session has either. A GET stream
// counts once it is claimed and until it is taken over.
func (s *session) sendLocal(msg []byte) bool {
	s.mu.Lock()
	out, get := s.out, s.get
	if s.http && s.getStop == nil {
		get = nil
	}
	s.mu.Unlock()
	if out != nil {
		_ = out(msg)
		return true
	}
	if get == nil {
		return false
	}
	select {
	case get <- msg:
	default:
		s.h.d.Logger().Warn("legacy session GET stream is full; dropping a notification", "session", s.id)
	}
	return true
}

// stopGET ends the GET stream this instance holds, if any, when holder,
// another instance, claimed the session's stream at a revision later than
// this instance's claim.
func (s *session) stopGET(rev int64, holder string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.getStop == nil || rev <= s.getRev || holder == s.h.instance {
		return
	}
	close(s.getStop)
	s.getStop = nil
}

// serveGET holds the session's GET stream open for session notifications.
// When the client resumes a GET stream of the session (Last-Event-ID),
// its events after pos are sent first.
func (s *session) serveGET(w http.ResponseWriter, r *http.Request, resume, pos string) {
	if !sse.AcceptsSSE(r.Header.Get("Accept")) {
		writeJSONError(w, http.StatusNotAcceptable, mcp.ID{}, mcp.Errorf(mcp.InvalidRequest, "the GET stream needs Accept: text/event-stream"))
		return
	}
	q, stop := make(chan []byte, 64), make(chan struct{})
	s.mu.Lock()
	if s.get != nil {
		s.mu.Unlock()
		writeJSONError(w, http.StatusConflict, mcp.ID{}, mcp.Errorf(mcp.InvalidRequest, "this session already has a GET stream"))
		return
	}
	s.get = q
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.get == q {
			s.get, s.getStop = nil, nil
		}
		s.mu.Unlock()
	}()
	rev := int64(-1)
	if s.http {
		// The session's stream is here now: session messages sent by
		// other instances come to this one, and the instance that held it
		// before (a client reconnecting elsewhere) lets it go.
		var err error
		sctx, cancel := s.h.storeCtx(r.Context())
		rev, err = s.h.claimStream(sctx, s)
		cancel()
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				writeJSONError(w, http.StatusNotFound, mcp.ID{}, &mcp.Error{Code: codeSessionNotFound, Message: "Session not found: initialize a new session"})
			} else {
				s.h.storeFailed(w, mcp.ID{}, "claim the GET stream", err)
			}
			return
		}
		defer s.h.releaseStream(s)
	}
	// Only a claimed stream can be taken over.
	s.mu.Lock()
	s.getStop, s.getRev = stop, rev
	s.mu.Unlock()
	st := sse.New(w, r)
	st.Open()
	if resume != "" {
		s.h.replayGET(r.Context(), st, s, resume, pos)
	}
	var k *keptStream
	if s.http {
		k = s.h.newKeptStream(s.id, st, mcp.ID{})
	}
	tick := time.NewTicker(s.h.opts.KeepAlive)
	defer tick.Stop()
	closed := s.doneChan()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-closed:
			return
		case <-stop:
			return
		case <-s.h.drain.detach(): // the instance shuts down: resume elsewhere
			st.EndRetry(detachRetry)
			return
		case <-tick.C:
			if st.KeepAlive() != nil {
				return
			}
		case msg := <-q:
			var err error
			if k != nil {
				k.mu.Lock()
				_, err = k.sendKept(st, msg)
				k.mu.Unlock()
			} else {
				err = st.Send(msg)
			}
			if err != nil {
				return
			}
		}
	}
}

// deliver routes a client's response to the waiting server request.
func (s *session) deliver(msg *rpcwire.Message) {
	s.deliverReply(msg.ID.String(), msg.Result, msg.Error)
}

// deliverReply hands an answer to the server request waiting under key
// and reports whether one was waiting.
func (s *session) deliverReply(key string, result json.RawMessage, e *mcp.Error) bool {
	return s.deliverTo(reply{id: key, result: result, err: e})
}

// deliverRaw is deliverReply for the key given as bytes (see
// waiters.takeRaw).
func (s *session) deliverRaw(key []byte, result json.RawMessage, e *mcp.Error) bool {
	s.mu.Lock()
	k, ch, ok := s.pending.takeRaw(key)
	s.mu.Unlock()
	if ok {
		ch <- reply{id: k, result: result, err: e}
	}
	return ok
}

// deliverTo hands rp to the server request waiting under rp.id and reports
// whether one was waiting.
func (s *session) deliverTo(rp reply) bool {
	s.mu.Lock()
	ch, ok := s.pending.take(rp.id)
	s.mu.Unlock()
	if ok {
		ch <- rp
	}
	return ok
}

// notification handles a client notification.
func (s *session) notification(msg *rpcwire.Message) {
	if id, reason, ok := parseCancel(msg); ok {
		s.cancelRequest(id, reason)
	}
}

// parseCancel reads a notifications/cancelled: the id (JSON text) of the
// request it cancels and why. Other notifications (notifications/initialized,
// roots/list_changed, …) need nothing.
func parseCancel(msg *rpcwire.Message) (id, reason string, ok bool) {
	if msg.Method != "notifications/cancelled" {
		return "", "", false
	}
	var p struct {
		RequestID mcp.ID `json:"requestId"`
		Reason    string `json:"reason"`
	}
	if strictjson.Unmarshal(msg.Params, &p) != nil || p.RequestID.IsZero() {
		return "", "", false
	}
	reason = "the client cancelled the request"
	if p.Reason != "" {
		reason += ": " + clip.String(p.Reason)
	}
	return p.RequestID.String(), reason, true
}

// cancelRequest cancels the client's request id (JSON text) if it runs
// here and reports whether it did. A client cancels only its own
// requests; server request ids are another id space.
func (s *session) cancelRequest(id, reason string) bool {
	s.mu.Lock()
	cancel, ok := s.inflight.get(id)
	s.mu.Unlock()
	if ok {
		cancel(errors.New(reason))
	}
	return ok
}

// serveRequest runs one client request. finish writes the response;
// abandon ends the stream without one (the request was cancelled).
// decoded, if not nil, is the server's decoding of msg's params (see
// era.Request.Decoded).
func (s *session) serveRequest(parent context.Context, msg *rpcwire.Message, decoded any, w wire, finish func([]byte), abandon func()) {
	key := msg.ID.Raw() // the id's JSON text (see inflight), as msg.ID.String()
	if len(key) == 0 {
		key = []byte("null")
	}
	ctx, cancel := context.WithCancelCause(parent)
	s.mu.Lock()
	added := s.inflight.add(key, cancel)
	closed := s.cause
	if !added {
		s.mu.Unlock()
		cancel(nil)
		finishError(finish, msg.ID, mcp.Errorf(mcp.InvalidRequest, "request id %s is already in use", clip.String(string(key))))
		return
	}
	s.mu.Unlock()
	if closed != nil { // closed before the request was registered (see close)
		cancel(closed)
	}
	s.calls.Add(1)
	defer func() {
		s.mu.Lock()
		s.inflight.remove(key)
		s.mu.Unlock()
		cancel(nil)
		s.calls.Done()
	}()

	var (
		resp []byte       // the whole response, when the server wrote one around res
		wc   *waitingCall // the call's, if it may park
	)
	res, e := s.admit(msg)
	if e == nil {
		res, resp, wc, e = s.run(ctx, msg, decoded, w)
	}
	if wc != nil {
		if wc.parked {
			return // the call waits as its record: its next run answers it
		}
		defer s.h.endCall(s.id, wc) // once the response is kept
	}
	if e == nil {
		e = s.persist(ctx, msg)
	}
	switch {
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), errHandlerClosed):
		// The server, not the client, ended it: a client that resumes the
		// stream is told so.
		finishError(finish, msg.ID, mcp.Errorf(mcp.InternalError, "%s was not completed: %v; call again", clip.String(msg.Method), errHandlerClosed))
	case e == era.ErrNoResponse || ctx.Err() != nil:
		abandon() // cancelled: no response, whatever the handler returned
	case e != nil:
		finishError(finish, msg.ID, e)
	case resp != nil:
		finish(resp)
	default:
		finishResult(finish, msg.ID, res)
	}
}

// A 2025-11-25 call over HTTP runs on its connection's goroutine, whose
// stack net/http starts at 8 KiB; a call deeper than that grows it to 16
// KiB, and the garbage collector, finding the idle connection using a
// quarter of it, shrinks it back at each cycle: a stack copy per
// connection per cycle, about 1 µs per call in issue 23's session-call
// profile. So the frames between the connection and a tool's handler are
// kept small: the rare branches of serveRequest, run and bridge are
// functions of their own (finishError, runOwn, bridgeFailed), kept out of
// line, as are bridge's request (dispatchRequest) and, in package server,
// prepareToolCall.

// finishResult writes res as the result of request id.
//
//go:noinline
func finishResult(finish func([]byte), id mcp.ID, res json.RawMessage) {
	finish(rpcwire.AppendResult(make([]byte, 0, len(res)+len(id.Raw())+40), id, res))
}

// finishError writes e as the response to request id.
//
//go:noinline
func finishError(finish func([]byte), id mcp.ID, e *mcp.Error) {
	b, _ := rpcwire.AppendError(nil, id, e)
	finish(b)
}

func (s *session) meta() server.RequestMeta {
	s.mu.Lock()
	defer s.mu.Unlock()
	return server.RequestMeta{ProtocolVersion: s.version, ClientCapabilities: s.caps, ClientInfo: s.clientInfo, LogLevel: s.logLevel}
}

// run serves one request and returns its result: the session's own
// methods here (through the server's middleware), the rest through the
// server's dispatch. resp, when set, is the whole response with that
// result, as the server wrote it (era.Outcome.Response).
func (s *session) run(ctx context.Context, msg *rpcwire.Message, decoded any, w wire) (res json.RawMessage, resp []byte, wc *waitingCall, e *mcp.Error) {
	switch msg.Method {
	case "ping", "initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "server/discover", "subscriptions/listen":
		res, e = s.runOwn(ctx, msg)
		return res, nil, nil, e
	}
	p := newPeer(s, w)
	if p.wc == nil && s.http && s.h.callStore != nil {
		if k, ok := w.(*keptStream); ok {
			p.wc = &waitingCall{msg: msg, params: msg.Params, stream: k}
		}
	}
	res, resp, e = s.bridge(ctx, msg, decoded, p)
	return res, resp, p.wc, e
}

// newPeer returns the peer of a call of s on w: the spare one of a call's
// kept stream, allocated with it (newCallStream), else a new one. Only
// the call's goroutine runs it, once per call.
func newPeer(s *session, w wire) *peer {
	if k, ok := w.(*keptStream); ok && k.spare != nil {
		p := k.spare
		k.spare = nil
		if p.s == nil { // a resumed call's peer comes made (waiting.go)
			*p = peer{s: s, w: w}
		}
		return p
	}
	return &peer{s: s, w: w}
}

// runOwn serves one of the session's own methods through the server's
// middleware.
//
//go:noinline
func (s *session) runOwn(ctx context.Context, msg *rpcwire.Message) (json.RawMessage, *mcp.Error) {
	r := &era.Request[server.RequestMeta]{ID: msg.ID, Method: msg.Method, Params: msg.Params, Meta: s.meta(), SessionID: s.id}
	return s.h.d.Intercept(ctx, r, func(context.Context) (json.RawMessage, *mcp.Error) { return s.own(msg) })
}

// own serves the methods a session answers itself.
func (s *session) own(msg *rpcwire.Message) (json.RawMessage, *mcp.Error) {
	switch msg.Method {
	case "ping":
		return json.RawMessage("{}"), nil
	case "initialize":
		return nil, mcp.Errorf(mcp.InvalidRequest, "the session is already initialized")
	case "logging/setLevel":
		if s.h.d.Capabilities().Logging == nil {
			return nil, &mcp.Error{Code: mcp.MethodNotFound, Message: "Method not found: logging/setLevel"}
		}
		var p struct {
			Level string `json:"level"`
		}
		if strictjson.Unmarshal(msg.Params, &p) != nil || !loglevel.Valid(p.Level) {
			return nil, mcp.Errorf(mcp.InvalidParams, "logging/setLevel needs a level: debug, info, notice, warning, error, critical, alert or emergency")
		}
		s.mu.Lock()
		s.logLevel = p.Level
		s.mu.Unlock()
		return json.RawMessage("{}"), nil
	case "resources/subscribe", "resources/unsubscribe":
		if s.h.d.Capabilities().Resources == nil {
			return nil, &mcp.Error{Code: mcp.MethodNotFound, Message: "Method not found: " + clip.String(msg.Method)}
		}
		var p struct {
			URI string `json:"uri"`
		}
		if strictjson.Unmarshal(msg.Params, &p) != nil || p.URI == "" {
			return nil, mcp.Errorf(mcp.InvalidParams, "%s needs a uri", msg.Method)
		}
		s.mu.Lock()
		if msg.Method == "resources/subscribe" {
			if s.subs == nil {
				s.subs = make(map[string]bool)
			}
			s.subs[p.URI] = true
		} else {
			delete(s.subs, p.URI)
		}
		s.mu.Unlock()
		return json.RawMessage("{}"), nil
	}
	return nil, &mcp.Error{Code: mcp.MethodNotFound, Message: "Method not found: " + clip.String(msg.Method) + " is not part of protocol " + s.version}
}

// bridge dispatches a request and serves input_required results by asking
// the client for real, up to MaxRounds times. Every run of the handler
// shares p, which sends each notification once per request (see the
// package documentation). decoded goes with the first run only: the
// later ones carry other params. Each run's request to the dispatch is
// allocated for it: the dispatch copies what it needs, so a call parked in
// its handler does not keep it.
func (s *session) bridge(ctx context.Context, msg *rpcwire.Message, decoded any, p *peer) (json.RawMessage, []byte, *mcp.Error) {
	params := msg.Params
	for round := 0; ; round++ {
		if round > 0 {
			p.newRun() // the handler starts again from the top
			decoded = nil
		}
		if p.wc != nil {
			p.wc.params = params
		}
		out, e := s.h.d.Dispatch(ctx, s.dispatchRequest(msg, params, decoded, p))
		if p.wc != nil && p.wc.parked {
			return nil, nil, nil // parked: whatever the handler returned is dropped
		}
		if e != nil {
			return nil, nil, e
		}
		if !out.Suspended {
			return out.Result, out.Response, nil
		}
		if round >= s.h.opts.MaxRounds {
			return nil, nil, bridgeFailed("%s suspended more than %d times; giving up", msg.Method, s.h.opts.MaxRounds)
		}
		var err error
		if params, err = withState(params, out.RequestState); err != nil {
			return nil, nil, bridgeFailed("%s: %v", msg.Method, err)
		}
	}
}

// dispatchRequest is the request one run of bridge hands the dispatch.
//
//go:noinline
func (s *session) dispatchRequest(msg *rpcwire.Message, params json.RawMessage, decoded any, p *peer) *era.Request[server.RequestMeta] {
	return &era.Request[server.RequestMeta]{
		ID: msg.ID, Method: msg.Method, Params: params, Meta: s.meta(),
		Notifier: p, Peer: p, SessionID: s.id, Decoded: decoded,
	}
}

// bridgeFailed is bridge's internal error.
//
//go:noinline
func bridgeFailed(format string, args ...any) *mcp.Error {
	return mcp.Errorf(mcp.InternalError, format, args...)
}

// withState returns params with requestState set to state.
func withState(params json.RawMessage, state string) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(params) > 0 {
		if err := strictjson.Unmarshal(params, &m); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
	}
	st, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	m["requestState"] = st
	return json.Marshal(m)
}
