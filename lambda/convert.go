package lambda

// aws-lambda-go's lambdaurl builds the *http.Request from the event and
// streams what the handler writes (status and headers as the response's
// prelude, Set-Cookie moved to the cookies list, several values joined with
// commas). What remains here is what lambdaurl leaves undone:
//
//   - checkEvent: lambdaurl returns a Lambda error for a method or URL
//     net/http refuses, treats a missing method as GET, and pastes the raw
//     path after the domain name, so a path not beginning with "/" would
//     run into the host. Events are checked first and answered with 400.
//   - It ignores the event's cookies list (the guard joins it into the
//     Cookie header), and decodes a base64 body lazily, so a bad body would
//     surface as a read error inside the handler with an unknown length
//     (checkEvent decodes it first).
//   - responseWriter: lambdaurl's writer has no Flush (Baton's SSE needs
//     one), hands the live header map to another goroutine (a race if the
//     handler edits headers after writing), relays any status including
//     1xx, and runs the handler without recover (a panic ends the process).
//   - buffered: lambdaurl answers only the streaming mode; the BUFFERED
//     function URL and the HTTP API drain its stream into one response.

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// adapter serves function URL events on an http.Handler through lambdaurl.
type adapter struct {
	serve func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error)
	// drains holds the buffers the buffered modes read a stream into, so
	// that one read takes what the writer sends at once; they grow to the
	// responses served, up to 4*flushSize.
	drains sync.Pool
}

func newAdapter(h http.Handler) *adapter {
	return &adapter{serve: lambdaurl.Wrap(guard{h})}
}

// invocation is what the adapter and the guard share about one request.
type invocation struct {
	// aborted is set when the handler panicked after the head was sent.
	aborted atomic.Bool
}

type invocationKey struct{}

// errHandlerFailed ends a stream whose handler panicked after sending the
// head: the runtime reports the invocation as failed rather than ending
// the response as if it were whole.
var errHandlerFailed = errors.New("lambda: the HTTP handler panicked while streaming its response")

// stream serves ev, with ctx as the request's context, and returns the
// streaming response. It never panics and never fails.
func (a *adapter) stream(ctx context.Context, ev *events.LambdaFunctionURLRequest) *events.LambdaFunctionURLStreamingResponse {
	fitted, err := checkEvent(ev)
	if err != nil {
		return badRequest("malformed Lambda event: " + err.Error()).stream()
	}
	inv := new(invocation)
	res, err := a.serve(context.WithValue(ctx, invocationKey{}, inv), fitted)
	if err != nil { // net/http refused the method or URL; the handler did not run
		return badRequest("malformed Lambda event: " + err.Error()).stream()
	}
	body, ok := res.Body.(io.ReadCloser)
	if !ok {
		body = io.NopCloser(res.Body)
	}
	res.Body = &streamBody{r: body, inv: inv}
	return res
}

// buffered serves ev and returns the whole response.
func (a *adapter) buffered(ctx context.Context, ev *events.LambdaFunctionURLRequest) outbound {
	res := a.stream(ctx, ev)
	defer res.Close()
	buf, _ := a.drains.Get().(*bytes.Buffer)
	if buf == nil {
		buf = bytes.NewBuffer(make([]byte, 0, 4<<10))
	}
	defer func() {
		if buf.Cap() <= 4*flushSize {
			buf.Reset()
			a.drains.Put(buf)
		}
	}()
	if _, err := buf.ReadFrom(res.Body); err != nil { // nothing has reached the client: the failure can still be told
		return handlerFailed()
	}
	body := buf.Bytes()
	out := outbound{status: res.StatusCode, headers: res.Headers, cookies: res.Cookies}
	if out.headers == nil {
		out.headers = map[string]string{}
	}
	if len(body) == 0 {
		return out
	}
	if isText(out.headers["Content-Type"], out.headers["Content-Encoding"]) && utf8.Valid(body) {
		out.body = string(body)
	} else {
		out.body = base64.StdEncoding.EncodeToString(body)
		out.base64 = true
	}
	return out
}

// streamBody is the body of a streaming response: lambdaurl's pipe, ending
// with errHandlerFailed instead of io.EOF when the handler panicked after
// the head was sent.
type streamBody struct {
	r   io.ReadCloser
	inv *invocation
}

func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.inv.aborted.Load() {
		return n, errHandlerFailed
	}
	return n, err
}

// Close ends the stream early: the handler's further writes fail.
func (b *streamBody) Close() error { return b.r.Close() }

// outbound is a buffered response.
type outbound struct {
	status  int
	headers map[string]string
	cookies []string
	body    string
	base64  bool
}

// stream returns o as a streaming response.
func (o outbound) stream() *events.LambdaFunctionURLStreamingResponse {
	return &events.LambdaFunctionURLStreamingResponse{
		StatusCode: o.status,
		Headers:    o.headers,
		Cookies:    o.cookies,
		Body:       strings.NewReader(o.body),
	}
}

// badRequest is the answer to an event that is not a usable request.
func badRequest(msg string) outbound {
	return errorResponse(http.StatusBadRequest, mcp.InvalidRequest, "Bad Request: "+msg)
}

// handlerFailed is the answer when the handler panicked.
func handlerFailed() outbound {
	return errorResponse(http.StatusInternalServerError, mcp.InternalError, "Internal Server Error: the handler failed")
}

func errorResponse(status, code int, msg string) outbound {
	b, _ := rpcwire.AppendError(nil, mcp.ID{}, &mcp.Error{Code: code, Message: msg})
	return outbound{
		status:  status,
		headers: map[string]string{"Content-Type": "application/json"},
		body:    string(b),
	}
}

// errMalformed marks an event that cannot become an HTTP request.
type errMalformed struct{ msg string }

func (e *errMalformed) Error() string { return e.msg }

func malformed(format string, args ...any) error {
	return &errMalformed{msg: fmt.Sprintf(format, args...)}
}

// checkEvent checks what lambdaurl takes on trust and returns the event as
// lambdaurl should see it: ev itself, or when the body is base64 or the
// event has no domain name, a copy with the body decoded and the domain
// name taken from the host header. ev is not modified.
func checkEvent(ev *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLRequest, error) {
	rc := &ev.RequestContext
	if rc.HTTP.Method == "" {
		return nil, malformed("no requestContext.http.method")
	}
	if !strings.HasPrefix(ev.RawPath, "/") {
		return nil, malformed("rawPath %q is not an absolute path", ev.RawPath)
	}
	if strings.ContainsAny(ev.RawPath, "?#") {
		return nil, malformed("rawPath %q has a query or fragment", ev.RawPath)
	}
	if strings.IndexByte(ev.RawQueryString, '#') >= 0 {
		return nil, malformed("rawQueryString %q has a fragment", ev.RawQueryString)
	}
	host := rc.DomainName
	for k, v := range ev.Headers {
		if !isToken(k) {
			return nil, malformed("header name %q is not valid", k)
		}
		if !validFieldValue(v) {
			return nil, malformed("header %q has a control character in its value", k)
		}
		if host == "" && strings.EqualFold(k, "host") {
			host = v
		}
	}
	if host == "" {
		return nil, malformed("no requestContext.domainName nor host header")
	}
	if !validHost(host) {
		return nil, malformed("domain name %q is not a valid host", host)
	}
	for _, c := range ev.Cookies {
		if !validFieldValue(c) {
			return nil, malformed("a cookie has a control character")
		}
	}
	if host == rc.DomainName && !ev.IsBase64Encoded {
		return ev, nil
	}
	fitted := *ev
	fitted.RequestContext.DomainName = host
	if ev.IsBase64Encoded {
		body, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return nil, malformed("isBase64Encoded is true but the body is not base64: %v", err)
		}
		fitted.Body, fitted.IsBase64Encoded = string(body), false
	}
	return &fitted, nil
}

// isToken reports whether s is an HTTP token (RFC 9110), as header names
// must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// validFieldValue reports whether v may be a header value: no control
// characters other than horizontal tab.
func validFieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// validHost reports whether h may be a Host header: printable, no spaces,
// no path or user information.
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("/?#@\\", c) >= 0 {
			return false
		}
	}
	return true
}

// guard is the handler lambdaurl runs: it gives h a responseWriter over
// lambdaurl's and recovers a panic.
type guard struct{ h http.Handler }

func (g guard) ServeHTTP(lw http.ResponseWriter, r *http.Request) {
	// lambdaurl leaves out the event's cookies list.
	if ev, ok := lambdaurl.RequestFromContext(r.Context()); ok && len(ev.Cookies) > 0 {
		jar := strings.Join(ev.Cookies, "; ")
		if prev := r.Header["Cookie"]; len(prev) > 0 {
			jar = strings.Join(prev, "; ") + "; " + jar
		}
		r.Header["Cookie"] = []string{jar}
	}
	// As net/http does: the Host header is r.Host, RequestURI is set, and
	// RemoteAddr is "IP:port" (lambdaurl gives the bare source IP).
	delete(r.Header, "Host")
	r.RequestURI = r.URL.RequestURI()
	if net.ParseIP(r.RemoteAddr) != nil {
		r.RemoteAddr = net.JoinHostPort(r.RemoteAddr, "0")
	} else {
		r.RemoteAddr = ""
	}
	w := &responseWriter{inner: lw, header: make(http.Header), head: r.Method == http.MethodHead}
	defer func() {
		p := recover()
		if p != nil && p != http.ErrAbortHandler {
			slog.ErrorContext(r.Context(), "lambda: the HTTP handler panicked", "panic", p, "method", r.Method, "path", r.URL.Path, "stack", string(debug.Stack()))
		}
		if w.finish(p != nil) {
			if inv, ok := r.Context().Value(invocationKey{}).(*invocation); ok {
				inv.aborted.Store(true)
			}
		}
	}()
	g.h.ServeHTTP(w, r)
}

// flushSize is how much the writer buffers before sending without a
// Flush: the runtime reads the stream 32 KiB at a time.
const flushSize = 32 << 10

// responseWriter is what the handler writes to. It keeps the body until
// the handler flushes (or has flushSize bytes, or returns), so the status
// and headers are sent, and a panic can still become a 500, until then. It
// is safe for concurrent use; once the handler has returned, writes fail.
type responseWriter struct {
	mu        sync.Mutex
	inner     http.ResponseWriter // lambdaurl's
	header    http.Header         // what the handler edits
	head      bool                // a HEAD request: the body is dropped
	status    int                 // 0 until WriteHeader
	committed bool                // the status and headers went to inner
	buf       []byte
	closed    bool
}

// errWriteAfterReturn is returned by writes made after the handler
// returned: the response has been handed to Lambda.
var errWriteAfterReturn = errors.New("lambda: write after the handler returned")

// Header implements http.ResponseWriter.
func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter. Informational (1xx) statuses
// cannot be relayed and are ignored; an invalid status becomes 500.
func (w *responseWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.writeHeader(code)
	}
}

func (w *responseWriter) writeHeader(code int) {
	if w.status != 0 {
		return
	}
	if code >= 100 && code < 200 {
		return
	}
	if code < 100 || code > 999 {
		code = http.StatusInternalServerError
	}
	w.status = code
	// The headers as they are now: later edits have no effect. inner's map
	// is read by lambdaurl's goroutine only once inner.WriteHeader is called.
	out := w.inner.Header()
	for k, vs := range w.header {
		switch {
		case len(vs) == 0: // a nil value suppresses a header in net/http too
		case k == "Transfer-Encoding", k == "Connection", k == "Trailer":
		default:
			out[k] = vs
		}
	}
}

// Write implements http.ResponseWriter.
func (w *responseWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, errWriteAfterReturn
	}
	w.writeHeader(http.StatusOK)
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.head {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) >= flushSize {
		if err := w.flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush implements http.Flusher: what was written is sent now.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError sends what was written, reporting a stream the reader has
// closed; http.ResponseController.Flush uses it.
func (w *responseWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errWriteAfterReturn
	}
	return w.flush()
}

// flush sends the head if it has not gone yet, then the buffered body.
func (w *responseWriter) flush() error {
	if !w.committed {
		w.writeHeader(http.StatusOK)
		h := w.inner.Header()
		if _, has := h["Content-Type"]; !has && len(w.buf) > 0 && bodyAllowed(w.status) {
			h["Content-Type"] = []string{http.DetectContentType(w.buf)}
		}
		w.committed = true
		w.inner.WriteHeader(w.status)
	}
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.inner.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// finish ends the response once the handler has returned or panicked and
// reports whether the response had to be cut short: a panic before the
// head was sent becomes a 500, after it the stream can only be ended.
func (w *responseWriter) finish(panicked bool) (aborted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if !panicked {
		_ = w.flush() // an error means the reader has gone
		return false
	}
	if w.committed {
		return true
	}
	out := handlerFailed()
	h := w.inner.Header()
	clear(h)
	h["Content-Type"] = []string{out.headers["Content-Type"]}
	w.committed = true
	w.inner.WriteHeader(out.status)
	_, _ = io.WriteString(w.inner, out.body)
	return false
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// isText reports whether a body of this type and encoding is text that
// Lambda may carry as a JSON string.
func isText(contentType, contentEncoding string) bool {
	if contentEncoding != "" && !strings.EqualFold(contentEncoding, "identity") {
		return false
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	if _, ok := params["charset"]; ok {
		return true
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript",
		"application/ecmascript", "application/x-www-form-urlencoded",
		"application/x-ndjson", "application/jsonl", "application/graphql",
		"application/yaml", "application/toml":
		return true
	}
	return false
}
