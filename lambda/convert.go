package lambda

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
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/baton-mcp/baton/jsonrpc"
)

// inbound is what both event kinds say about the HTTP request.
type inbound struct {
	method, rawPath, rawQuery string
	domain, sourceIP          string
	protocol                  string
	headers                   map[string]string
	cookies                   []string
	body                      string
	base64                    bool
}

// outbound is what both response kinds carry.
type outbound struct {
	status  int
	headers map[string]string
	cookies []string
	body    string
	base64  bool
}

// errMalformed marks an event that cannot become an HTTP request.
type errMalformed struct{ msg string }

func (e *errMalformed) Error() string { return e.msg }

func malformed(format string, args ...any) error {
	return &errMalformed{msg: fmt.Sprintf(format, args...)}
}

// serve runs h on the request the event describes and returns the
// response. It never panics.
func serve(ctx context.Context, h http.Handler, in *inbound) outbound {
	r, err := newRequest(ctx, in)
	if err != nil {
		return badRequest("malformed Lambda event: " + err.Error())
	}
	w := &responseWriter{header: make(http.Header)}
	if !run(h, w, r) {
		return errorResponse(http.StatusInternalServerError, jsonrpc.InternalError, "Internal Server Error: the handler failed")
	}
	return w.result(r.Method)
}

// run calls h and reports whether it returned without panicking; a panic
// is logged with its stack (http.ErrAbortHandler silently, as net/http
// does). Once run returns, the writer refuses further writes.
func run(h http.Handler, w *responseWriter, r *http.Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				slog.ErrorContext(r.Context(), "lambda: the HTTP handler panicked", "panic", p, "method", r.Method, "path", r.URL.Path, "stack", string(debug.Stack()))
			}
			ok = false
		}
		w.close()
	}()
	h.ServeHTTP(w, r)
	return true
}

// badRequest is the answer to an event that is not a usable request.
func badRequest(msg string) outbound {
	return errorResponse(http.StatusBadRequest, jsonrpc.InvalidRequest, "Bad Request: "+msg)
}

func errorResponse(status, code int, msg string) outbound {
	b, _ := jsonrpc.AppendError(nil, jsonrpc.ID{}, &jsonrpc.Error{Code: code, Message: msg})
	return outbound{
		status:  status,
		headers: map[string]string{"Content-Type": "application/json"},
		body:    string(b),
	}
}

// newRequest builds the server-side request an event describes.
func newRequest(ctx context.Context, in *inbound) (*http.Request, error) {
	if in.method == "" {
		return nil, malformed("no requestContext.http.method")
	}
	if !isToken(in.method) {
		return nil, malformed("method %q is not a valid HTTP method", in.method)
	}
	if !strings.HasPrefix(in.rawPath, "/") {
		return nil, malformed("rawPath %q is not an absolute path", in.rawPath)
	}
	uri := in.rawPath
	if in.rawQuery != "" {
		uri += "?" + in.rawQuery
	}
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return nil, malformed("rawPath and rawQueryString: %v", err)
	}
	header := make(http.Header, len(in.headers)+1)
	host := in.domain
	for k, v := range in.headers {
		if !isToken(k) {
			return nil, malformed("header name %q is not valid", k)
		}
		if !validFieldValue(v) {
			return nil, malformed("header %q has a control character in its value", k)
		}
		ck := http.CanonicalHeaderKey(k)
		switch ck {
		case "Host":
			if host == "" {
				host = v
			}
			continue
		case "Content-Length", "Transfer-Encoding":
			continue // the body is whole and its length known
		}
		header[ck] = append(header[ck], v)
	}
	if host == "" {
		return nil, malformed("no requestContext.domainName nor host header")
	}
	if !validHost(host) {
		return nil, malformed("domain name %q is not a valid host", host)
	}
	if len(in.cookies) > 0 {
		for _, c := range in.cookies {
			if !validFieldValue(c) {
				return nil, malformed("a cookie has a control character")
			}
		}
		jar := strings.Join(in.cookies, "; ")
		if prev := header["Cookie"]; len(prev) > 0 {
			jar = strings.Join(prev, "; ") + "; " + jar
		}
		header["Cookie"] = []string{jar}
	}
	var body []byte
	if in.base64 {
		if body, err = base64.StdEncoding.DecodeString(in.body); err != nil {
			return nil, malformed("isBase64Encoded is true but the body is not base64: %v", err)
		}
	} else if in.body != "" {
		body = []byte(in.body)
	}
	major, minor, ok := http.ParseHTTPVersion(in.protocol)
	proto := in.protocol
	if !ok {
		proto, major, minor = "HTTP/1.1", 1, 1
	}
	remote := ""
	if ip := net.ParseIP(in.sourceIP); ip != nil {
		remote = net.JoinHostPort(in.sourceIP, "0")
	}
	r := &http.Request{
		Method:        in.method,
		URL:           u,
		Proto:         proto,
		ProtoMajor:    major,
		ProtoMinor:    minor,
		Header:        header,
		Host:          host,
		RemoteAddr:    remote,
		RequestURI:    uri,
		ContentLength: int64(len(body)),
		Body:          http.NoBody,
	}
	if len(body) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return r.WithContext(ctx), nil
}

// isToken reports whether s is an HTTP token (RFC 9110), as method and
// header names must be.
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

// responseWriter buffers the whole response, as Lambda does. It is a
// Flusher whose Flush does nothing, so streaming handlers (Baton's SSE)
// accumulate their events in the body.
type responseWriter struct {
	mu     sync.Mutex
	header http.Header // what the handler edits
	sent   http.Header // snapshot taken at WriteHeader
	status int
	body   bytes.Buffer
	closed bool
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
	w.writeHeader(code)
}

func (w *responseWriter) writeHeader(code int) {
	if w.status != 0 || w.closed {
		return
	}
	if code >= 100 && code < 200 {
		return
	}
	if code < 100 || code > 999 {
		code = http.StatusInternalServerError
	}
	w.status = code
	w.sent = w.header.Clone()
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
	return w.body.Write(p)
}

// Flush implements http.Flusher. Lambda sends nothing before the handler
// returns, so there is nothing to do.
func (w *responseWriter) Flush() {}

func (w *responseWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// result converts the buffered response.
func (w *responseWriter) result(method string) outbound {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = http.StatusOK
		w.sent = w.header.Clone()
	}
	out := outbound{status: w.status, headers: make(map[string]string, len(w.sent)+1)}
	body := w.body.Bytes()
	if method == http.MethodHead {
		body = nil
	}
	for k, vs := range w.sent {
		if len(vs) == 0 {
			continue // a nil value suppresses a header in net/http too
		}
		switch k {
		case "Set-Cookie":
			out.cookies = append(out.cookies, vs...)
			continue
		case "Transfer-Encoding", "Connection", "Trailer":
			continue
		}
		out.headers[k] = strings.Join(vs, ",")
	}
	if _, has := w.sent["Content-Type"]; !has && len(w.body.Bytes()) > 0 && bodyAllowed(w.status) {
		out.headers["Content-Type"] = http.DetectContentType(w.body.Bytes())
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
