package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-mcp/baton/internal/sse"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/jsonrpc"
)

// Handler returns the server as an http.Handler built on echo. It serves
// the MCP endpoint at every path; use Mount to serve it at one path of an
// existing echo application.
func (s *Server) Handler() http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	s.Mount(e, "/*")
	return e
}

// Mount registers the MCP endpoint on e at path for POST, GET and DELETE
// (GET and DELETE serve legacy sessions, and are otherwise 405). Middleware
// given here runs before the endpoint, for example authentication.
func (s *Server) Mount(e *echo.Echo, path string, m ...echo.MiddlewareFunc) {
	h := func(c echo.Context) error {
		s.ServeHTTP(c.Response(), c.Request())
		return nil
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		e.Add(method, path, h, m...)
	}
}

// ServeHTTP serves one request of the Streamable HTTP transport. It makes
// the Server itself an http.Handler for plain net/http muxes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if status, msg := s.checkOrigin(r); status != 0 {
		writeError(w, status, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.InvalidRequest, Message: msg})
		return
	}
	if r.Method != http.MethodPost {
		if s.legacy != nil && r.Header.Get(HeaderSessionID) != "" && (r.Method == http.MethodGet || r.Method == http.MethodDelete) {
			s.legacy.ServeLegacy(w, r, nil, nil)
			return
		}
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.InvalidRequest, Message: "Method not allowed: use POST"})
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.InvalidRequest, Message: "Unsupported Content-Type " + ct + ": use application/json"})
			return
		}
	}
	body, err := readBody(w, r, s.opts.MaxRequestBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.Errorf(jsonrpc.InvalidRequest, "Request body exceeds the %d-byte limit", s.opts.MaxRequestBytes))
			return
		}
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.Errorf(jsonrpc.InvalidRequest, "Could not read the request body: %v", err))
		return
	}
	// The usual request (modern, no session) is decoded in one pass.
	if r.Header.Get(HeaderSessionID) == "" {
		if req, e, ok := decodeModern(body, s.opts.MaxJSONDepth); ok {
			s.serveModern(w, r, req, e)
			return
		}
	}
	msg, derr := jsonrpc.Decode(body, jsonrpc.Limits{MaxDepth: s.opts.MaxJSONDepth})
	if derr != nil {
		var id jsonrpc.ID
		if msg != nil {
			id = msg.ID
		}
		writeError(w, jsonrpc.HTTPStatus(derr.Code), id, derr)
		return
	}
	if s.legacy != nil && s.isLegacy(r, msg) {
		s.legacy.ServeLegacy(w, r, body, msg)
		return
	}
	switch {
	case msg.IsNotification():
		w.WriteHeader(http.StatusAccepted)
		return
	case msg.IsResponse():
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.InvalidRequest, Message: "Unexpected response: this server sends no requests to modern clients"})
		return
	}
	if msg.Method == "initialize" && !hasModernMeta(msg.Params) {
		writeError(w, http.StatusBadRequest, msg.ID, s.initializeRefusal(msg))
		return
	}
	req, e := decodeRequest(msg)
	s.serveModern(w, r, req, e)
}

// serveModern checks the headers and version of a decoded modern request
// (e is its envelope error, if any) and serves it.
func (s *Server) serveModern(w http.ResponseWriter, r *http.Request, req *request, e *jsonrpc.Error) {
	if e == nil {
		name, hasName := mcpName(req)
		e = checkStandardHeaders(r.Header, req.method, req.meta.ProtocolVersion, name, hasName)
	}
	if e == nil {
		e = s.checkVersion(req.meta.ProtocolVersion)
	}
	if e != nil {
		writeError(w, jsonrpc.HTTPStatus(e.Code), req.id, e)
		return
	}
	req.header = r.Header
	if req.method == "subscriptions/listen" {
		s.listenHTTP(w, r, req)
		return
	}
	st := sse.New(w, r)
	res, e := s.handle(r.Context(), req, streamNotifier{st})
	finishStream(st, req.id, res, e)
}

// initializeRefusal answers a legacy initialize when no legacy handler is
// attached: the versions this server does speak, so the client can tell.
func (s *Server) initializeRefusal(msg *jsonrpc.Message) *jsonrpc.Error {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = strictjson.Unmarshal(msg.Params, &p)
	return &jsonrpc.Error{
		Code:    jsonrpc.UnsupportedProtocolVersion,
		Message: "Unsupported protocol version: this server speaks only the stateless protocol and does not support initialize",
		Data:    map[string]any{"supported": []string{ProtocolVersion}, "requested": p.ProtocolVersion},
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
	case "tasks/get", "tasks/update", "tasks/cancel":
		if r.p.TaskID != nil {
			return *r.p.TaskID, true
		}
	}
	return "", false
}

func writeError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	b, _ := jsonrpc.AppendError(nil, id, e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// checkOrigin applies the Host and Origin policy. It returns 0 when the
// request may proceed, or the status and message to refuse it with.
func (s *Server) checkOrigin(r *http.Request) (int, string) {
	loopback := false
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ta, ok := la.(*net.TCPAddr); ok {
			loopback = ta.IP.IsLoopback()
		}
	}
	host := r.Host
	if len(s.opts.AllowedHosts) > 0 {
		if !hostAllowed(host, s.opts.AllowedHosts) {
			return http.StatusForbidden, "Forbidden: Host " + host + " is not allowed"
		}
	} else if loopback && !isLoopbackHost(hostname(host)) {
		return http.StatusForbidden, "Forbidden: Host " + host + " is not a loopback name (DNS rebinding protection)"
	}
	origin := r.Header.Get("Origin")
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
		return http.StatusForbidden, "Forbidden: malformed Origin " + origin
	}
	if strings.EqualFold(u.Host, host) && len(s.opts.AllowedOrigins) == 0 {
		return 0, ""
	}
	if loopback && len(s.opts.AllowedOrigins) == 0 && isLoopbackHost(u.Hostname()) {
		return 0, ""
	}
	return http.StatusForbidden, "Forbidden: Origin " + origin + " is not allowed"
}

func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
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
	b, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		return err
	}
	return n.st.Send(b)
}

var closeBrace = []byte("}")

// finishStream writes the final response, or nothing for a cancelled
// request.
func finishStream(st *sse.Stream, id jsonrpc.ID, result json.RawMessage, e *jsonrpc.Error) {
	if e == errNoResponse {
		st.Abandon()
		return
	}
	if e != nil {
		body, _ := jsonrpc.AppendError(nil, id, e)
		st.Finish(jsonrpc.HTTPStatus(e.Code), body)
		return
	}
	var prefix [64]byte
	st.FinishResult(jsonrpc.ResultPrefix(prefix[:0], id), result, closeBrace)
}

// listenKeepAlive is how often an idle listen stream sends an SSE comment.
const listenKeepAlive = 25 * time.Second

// listenHTTP serves subscriptions/listen as a long-lived SSE stream.
func (s *Server) listenHTTP(w http.ResponseWriter, r *http.Request, req *request) {
	agreed, e := s.agreeFilter(req)
	if e != nil {
		writeError(w, jsonrpc.HTTPStatus(e.Code), req.id, e)
		return
	}
	st := sse.New(w, r)
	st.Open()
	s.listen(r.Context(), req.id, agreed, st.Send, st.KeepAlive)
}

// readBody reads the request body up to max bytes. A declared length is
// read in one allocation.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, max)
	if n := r.ContentLength; n > 0 && n <= max {
		buf := make([]byte, n)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		// Whatever follows the declared length is an error net/http reports.
		return buf, nil
	}
	return io.ReadAll(rd)
}
