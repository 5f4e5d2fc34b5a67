package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/sse"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// ServeHTTP serves one request of the Streamable HTTP transport: the Server
// is an http.Handler, served at every path it is given (mount it on an
// http.ServeMux at one, or on echo with echo.WrapHandler). It answers POST,
// and GET and DELETE of a 2025-11-25 session when Options.Legacy is set;
// any other method is 405.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.isDraining() {
		// Shutdown has begun: every response closes its connection, so a
		// proxy drops each pooled connection to this instance cleanly after
		// its next response, instead of meeting one closed under a request
		// it has just written (see Serve).
		w.Header().Set("Connection", "close")
	}
	if status, msg := s.checkOrigin(r); status != 0 {
		writeError(w, status, mcp.ID{}, &mcp.Error{Code: mcp.InvalidRequest, Message: msg})
		return
	}
	if r.Method != http.MethodPost {
		s.serveNotPost(w, r)
		return
	}
	if ct := headerGet(r.Header, "Content-Type"); ct != "" && ct != "application/json" && !contentTypeJSON(w, ct) {
		return
	}
	hs := callHeaders{h: r.Header} // read when needed (load)
	if !s.authorizeHeaders(w, r, &hs) {
		return
	}
	body, err := readBody(w, r, s.opts.MaxRequestBytes, s.opts.BodyReadTimeout, s.bodyWatch.of(r.RemoteAddr))
	if err != nil {
		s.bodyFailed(w, err)
		return
	}
	// The usual request (modern, no session) is decoded in one pass.
	if headerGet(r.Header, headerSessionID) == "" {
		if req, e, ok := decodeModern(body, s.jsonLimits()); ok {
			s.serveModern(w, r, req, e, &hs)
			return
		}
	} else if s.legacy != nil && s.serveLegacyDecoded(w, r, body) { // legacy_envelope.go
		return
	}
	s.serveDecoded(w, r, body, &hs)
}

// ServeHTTP's branches other than a request it serves are functions of
// their own, out of line, so that its frame, under every call's handler,
// stays small (issue 23: a call, and each round of a flow, within the
// 8 KiB stack net/http starts a connection's goroutine with).

// serveNotPost answers a request whose method is not POST.
//
//go:noinline
func (s *Server) serveNotPost(w http.ResponseWriter, r *http.Request) {
	if s.legacy != nil && headerGet(r.Header, headerSessionID) != "" && (r.Method == http.MethodGet || r.Method == http.MethodDelete) {
		s.legacy.ServeLegacy(w, r, nil, nil)
		return
	}
	w.Header()["Allow"] = headerAllowPost
	writeError(w, http.StatusMethodNotAllowed, mcp.ID{}, &mcp.Error{Code: mcp.InvalidRequest, Message: "Method not allowed: use POST"})
}

// contentTypeJSON reports whether ct, a Content-Type other than exactly
// application/json, names JSON; if not, it answers 415.
//
//go:noinline
func contentTypeJSON(w http.ResponseWriter, ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, mcp.ID{}, &mcp.Error{Code: mcp.InvalidRequest, Message: "Unsupported Content-Type " + clip.String(ct) + ": use application/json"})
		return false
	}
	return true
}

// bodyFailed answers a request whose body could not be read.
//
//go:noinline
func (s *Server) bodyFailed(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, mcp.ID{}, mcp.Errorf(mcp.InvalidRequest, "Request body exceeds the %d-byte limit", s.opts.MaxRequestBytes))
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeError(w, http.StatusRequestTimeout, mcp.ID{}, mcp.Errorf(mcp.InvalidRequest, "Request body not received within %v", s.opts.BodyReadTimeout))
	default:
		writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.Errorf(mcp.InvalidRequest, "Could not read the request body: %v", err))
	}
}

// serveDecoded serves a body the one-pass paths left to the general
// decoder: its exact errors, a 2025-11-25 request that is not a session's
// call, a notification, a response, initialize, an extension method.
//
//go:noinline
func (s *Server) serveDecoded(w http.ResponseWriter, r *http.Request, body []byte, hs *callHeaders) {
	msg, derr := rpcwire.Decode(body, s.jsonLimits())
	if derr != nil {
		var id mcp.ID
		if msg != nil {
			id = msg.ID
		}
		writeError(w, rpcwire.HTTPStatus(derr.Code), id, derr)
		return
	}
	if s.legacy != nil && s.isLegacy(r, msg) {
		if !s.authorizeMessage(w, r, msg) {
			return
		}
		s.legacy.ServeLegacy(w, r, body, msg)
		return
	}
	switch {
	case msg.IsNotification():
		w.WriteHeader(http.StatusAccepted)
		return
	case msg.IsResponse():
		writeError(w, http.StatusBadRequest, mcp.ID{}, &mcp.Error{Code: mcp.InvalidRequest, Message: "Unexpected response: this server sends no requests to modern clients"})
		return
	}
	if msg.Method == "initialize" && !hasModernMeta(msg.Params) {
		writeError(w, http.StatusBadRequest, msg.ID, s.initializeRefusal(msg))
		return
	}
	req, e := decodeRequest(msg)
	s.serveModern(w, r, req, e, hs)
}

// serveModern checks the headers (hs: Mcp-Method and Mcp-Name) and
// version of a decoded modern request (e is its envelope error, if any)
// and serves it.
func (s *Server) serveModern(w http.ResponseWriter, r *http.Request, req *request, e *mcp.Error, hs *callHeaders) {
	if e == nil {
		name, hasName := mcpName(req)
		if !hasName {
			name, hasName = s.extensionTarget(req)
		}
		e = checkStandardHeaders(r.Header, hs, req.method, req.meta.ProtocolVersion, name, hasName)
	}
	if e == nil {
		e = s.checkVersion(req.meta.ProtocolVersion)
	}
	if e != nil {
		writeError(w, rpcwire.HTTPStatus(e.Code), req.id, e)
		return
	}
	if req.method == "completion/complete" && !s.authorizeDecoded(w, r, req) {
		return
	}
	req.header = r.Header
	if req.method == "subscriptions/listen" {
		status := 0
		_, e := s.intercept(r.Context(), s.methodRequest(r.Context(), req), func(ctx context.Context) ([]byte, resultNote, *mcp.Error) {
			var e *mcp.Error
			status, e = s.listenHTTP(w, r.WithContext(ctx), req)
			return []byte{}, resultNote{}, e
		})
		if e != nil {
			if status == 0 {
				status = rpcwire.HTTPStatus(e.Code)
			}
			writeError(w, status, req.id, e)
		}
		return
	}
	rs := req.resp // allocated with the request
	if rs == nil {
		rs = new(modernResponse)
		req.resp = rs
	}
	rs.hr = r
	st := &rs.stream
	st.Init(w, r)
	res, e := s.handle(r.Context(), req, streamNotifier{st})
	if e != nil && e != errNoResponse && req.status != 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(retrySeconds(req.retryAfter), 10))
		e = s.refusal(r.Context(), e, limitStore, int(req.status), req.retryAfter)
		body, _ := rpcwire.AppendError(nil, req.id, e)
		st.Finish(int(req.status), body)
		return
	}
	finishStream(st, req.id, res, e, rs.prefix[:0])
}

// initializeRefusal answers a legacy initialize when no legacy handler is
// attached: the versions this server does speak, so the client can tell.
func (s *Server) initializeRefusal(msg *rpcwire.Message) *mcp.Error {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = strictjson.Unmarshal(msg.Params, &p)
	return &mcp.Error{
		Code:    mcp.UnsupportedProtocolVersion,
		Message: "Unsupported protocol version: this server speaks only the stateless protocol and does not support initialize",
		Data:    map[string]any{"supported": []string{mcp.ProtocolVersion}, "requested": p.ProtocolVersion},
	}
}

// mcpName returns the value Mcp-Name must carry for the request.
func mcpName(r *request) (string, bool) {
	switch r.method {
	case "tools/call", "prompts/get":
		if r.p.Name != nil {
			return *r.p.Name, true
		}
	case "resources/read":
		if r.p.URI != nil {
			return *r.p.URI, true
		}
	}
	return "", false
}

// Header values set on every error response, built once: Header.Set
// canonicalises the key and allocates the value's slice per response (an
// error response is what hostile traffic gets). Each has length and
// capacity 1, so an Add to the same key copies it rather than writing
// into it.
var (
	headerJSON      = []string{"application/json"}
	headerAllowPost = []string{http.MethodPost}
	headerRetry1    = []string{"1"}
)

func writeError(w http.ResponseWriter, status int, id mcp.ID, e *mcp.Error) {
	b, _ := rpcwire.AppendError(nil, id, e)
	w.Header()["Content-Type"] = headerJSON
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// checkOrigin applies the Host and Origin policy. It returns 0 when the
// request may proceed, or the status and message to refuse it with.
//
// Whether the request came to a loopback listener is found only where it
// decides something: not for the usual Host of a request to one
// (loopbackHostPort), which passes either way, nor for a request without
// Origin. Finding it walks the request's context and asserts two types,
// about 130 instructions of every request over loopback HTTP (valgrind,
// bench's BenchmarkLegacySessionCallHTTP, issue 23).
func (s *Server) checkOrigin(r *http.Request) (int, string) {
	host := r.Host
	if len(s.opts.AllowedHosts) > 0 {
		if !hostAllowed(host, s.opts.AllowedHosts) {
			return http.StatusForbidden, "Forbidden: Host " + clip.String(host) + " is not allowed"
		}
	} else if !loopbackHostPort(host) && onLoopback(r) && !isLoopbackHost(hostname(host)) {
		return http.StatusForbidden, "Forbidden: Host " + clip.String(host) + " is not a loopback name (DNS rebinding protection)"
	}
	origin := headerGet(r.Header, "Origin")
	if origin == "" {
		return 0, ""
	}
	for _, o := range s.opts.AllowedOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return 0, ""
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return http.StatusForbidden, "Forbidden: malformed Origin " + clip.String(origin)
	}
	if strings.EqualFold(u.Host, host) && len(s.opts.AllowedOrigins) == 0 {
		return 0, ""
	}
	if len(s.opts.AllowedOrigins) == 0 && isLoopbackHost(u.Hostname()) && onLoopback(r) {
		return 0, ""
	}
	return http.StatusForbidden, "Forbidden: Origin " + clip.String(origin) + " is not allowed"
}

// onLoopback reports whether r came to a loopback listener.
func onLoopback(r *http.Request) bool {
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ta, ok := la.(*net.TCPAddr); ok {
			return ta.IP.IsLoopback()
		}
	}
	return false
}

func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// loopbackHostPort reports whether host is one of the usual Host headers
// of a request to a loopback listener: 127.0.0.1, localhost or [::1] with
// a port of digits, spelled as clients send them. For those
// isLoopbackHost(hostname(host)) is true; false means only that host is
// not one of them, and the general check decides. It spares every request
// to a loopback listener net.SplitHostPort, strings.ToLower and
// netip.ParseAddr: about 850 instructions a request over loopback HTTP
// (valgrind, bench's BenchmarkFlowHTTP, issue 23).
func loopbackHostPort(host string) bool {
	var port string
	switch {
	case strings.HasPrefix(host, "127.0.0.1:"):
		port = host[len("127.0.0.1:"):]
	case strings.HasPrefix(host, "localhost:"):
		port = host[len("localhost:"):]
	case strings.HasPrefix(host, "[::1]:"):
		port = host[len("[::1]:"):]
	default:
		return false
	}
	if port == "" {
		return false
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	// netip parses without allocating (net.ParseIP allocates the address,
	// on every request to a loopback listener); a zone is refused, as
	// net.ParseIP refuses it.
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

func hostAllowed(host string, allowed []string) bool {
	name := hostname(host)
	for _, a := range allowed {
		if strings.EqualFold(a, host) || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// errStreamClosed is returned by Notify once a request has been answered.
var errStreamClosed = sse.ErrClosed

// streamNotifier sends a request's notifications on its response stream.
// When the client did not accept text/event-stream they are dropped: the
// response can only be the final JSON body.
type streamNotifier struct{ st *sse.Stream }

// Notify implements Notifier.
func (n streamNotifier) Notify(ctx context.Context, method string, params any) error {
	if !n.st.CanSend() {
		return nil
	}
	b, err := rpcwire.EncodeNotification(method, params)
	if err != nil {
		return err
	}
	return n.st.Send(b)
}

var closeBrace = []byte("}")

// finishStream writes the final response, or nothing for a cancelled
// request. The result's prefix is written into buf, which should have
// room for it: a buffer that lives with the request (one on the stack
// escapes to the heap, as the writer is an interface).
func finishStream(st *sse.Stream, id mcp.ID, result json.RawMessage, e *mcp.Error, buf []byte) {
	if e == errNoResponse {
		st.Abandon()
		return
	}
	if e != nil {
		body, _ := rpcwire.AppendError(nil, id, e)
		st.Finish(rpcwire.HTTPStatus(e.Code), body)
		return
	}
	st.FinishResult(rpcwire.ResultPrefix(buf, id), result, closeBrace)
}

// listenKeepAlive is how often an idle listen stream sends an SSE comment.
const listenKeepAlive = 25 * time.Second

// listenHTTP serves subscriptions/listen as a long-lived SSE stream, or
// returns the error that refuses it (and its HTTP status, 0 for the
// error's usual one) before anything is written.
func (s *Server) listenHTTP(w http.ResponseWriter, r *http.Request, req *request) (int, *mcp.Error) {
	agreed, e := s.agreeFilter(req)
	if e != nil {
		return 0, e
	}
	l, status, e := s.openListener(agreed, listenOwner(r.Context(), r.RemoteAddr))
	if e != nil {
		if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
			w.Header()["Retry-After"] = headerRetry1
			e = s.refusal(r.Context(), e, limitDraining, status, time.Second)
		}
		return status, e
	}
	st := sse.New(w, r)
	st.Open()
	s.listen(r.Context(), req.id, agreed, l, st.Send, st.KeepAlive)
	return 0, nil
}

// firstBodyBuffer is the most readBody allocates before any byte of a body
// has arrived: a body declared no longer is read in one allocation of its
// declared length; a longer one starts here and grows with what arrives.
const firstBodyBuffer = 16 << 10

// readBody reads the request body as it arrives, up to max bytes, within
// timeout of the call (no limit when timeout is not positive). The buffer
// grows with the bytes received, doubling at most up to the declared
// Content-Length (or max), so a peer that declares a large body and sends
// little of it costs what it sent: never an allocation of the declared
// length up front.
//
// The timeout is kept by the server's bodyWatch: once a body has taken it
// (and at most a tenth more), the connection's read deadline is moved into
// the past, which fails the pending read at once; the watch ends once the
// whole body has arrived, so long-lived responses (SSE,
// subscriptions/listen) are not cut. A ResponseWriter that cannot set
// deadlines (http.ErrNotSupported) reads without a timeout.
func readBody(w http.ResponseWriter, r *http.Request, max int64, timeout time.Duration, watch *bodyWatch) ([]byte, error) {
	// A body of a declared length within the limit cannot pass the limit:
	// net/http ends it at its length (HTTP/1.1) or fails it when more comes
	// (HTTP/2), and readLimited stops at max in any case. Others are read
	// through http.MaxBytesReader, which also closes the connection once a
	// body has passed the limit.
	rd := r.Body
	if r.ContentLength < 0 || r.ContentLength > max {
		rd = http.MaxBytesReader(w, r.Body, max)
	}
	if timeout > 0 {
		n, ok := watch.start(w, timeout), false
		defer func() { watch.done(n, ok) }() // a panicking Read must not leave it watched
		body, err := readLimited(rd, r.ContentLength, max)
		ok = err == nil
		return body, err
	}
	return readLimited(rd, r.ContentLength, max)
}

// readLimited reads rd to its end. declared is the Content-Length (-1 when
// unknown); rd itself enforces max. The buffer keeps one spare byte past
// the length expected, so the read that finds the end needs no other.
func readLimited(rd io.Reader, declared, max int64) ([]byte, error) {
	limit := max
	if declared >= 0 && declared < limit {
		limit = declared
	}
	buf := make([]byte, 0, min(limit, firstBodyBuffer)+1)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				if limit == max {
					return nil, &http.MaxBytesError{Limit: max}
				}
				limit = max // more than declared: rd decides
			}
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
