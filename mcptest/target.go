package mcptest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// defaultEndpoint is the URL an in-process request is addressed to when
// the target was made by Handler: the Host is localhost (so the server's
// DNS-rebinding check accepts it) and the path is /mcp (where the examples
// mount the endpoint; a server used directly as a handler answers on every
// path).
const defaultEndpoint = "http://localhost/mcp"

// A Target carries one HTTP request to a server and returns its response.
// Handler delivers in process, URL over the network, RoundRobin alternates
// between several targets; a Client sends every request through one.
type Target interface {
	// send points req (built without a URL) at the target's endpoint and
	// delivers it.
	send(req *http.Request) (*http.Response, error)
	// check reports a target that cannot deliver anything.
	check() error
}

// Handler returns a target that serves every request in process by calling
// h.ServeHTTP directly, with no socket: the request is addressed to
// http://localhost/mcp and comes from 127.0.0.1. The response streams (a
// server's SSE events reach the client as they are flushed) and closing it
// cancels the request's context, as a dropped connection would. A request
// returns only once h.ServeHTTP has returned, so a test that got its
// answer has no handler still running. A handler that panics fails its
// request with an error instead of crashing the test binary.
func Handler(h http.Handler) Target {
	return HandlerAt(defaultEndpoint, h)
}

// HandlerAt is Handler with another endpoint URL, for a handler that
// routes on the path or checks the Host.
func HandlerAt(endpoint string, h http.Handler) Target {
	t := &handlerTarget{h: h}
	t.endpoint, t.err = parseEndpoint(endpoint)
	if t.err == nil && h == nil {
		t.err = errors.New("mcptest: Handler needs a non-nil http.Handler")
	}
	return t
}

// URL returns a target that sends every request to endpoint (an http or
// https URL) with hc, or with http.DefaultClient when hc is nil.
func URL(endpoint string, hc *http.Client) Target {
	t := &urlTarget{hc: hc}
	if t.hc == nil {
		t.hc = http.DefaultClient
	}
	t.endpoint, t.err = parseEndpoint(endpoint)
	return t
}

// RoundRobin returns a target that sends each request to the next of
// targets in turn (the first request to targets[0]), so a multi-round flow
// moves from instance to instance as it would behind a load balancer.
func RoundRobin(targets ...Target) Target {
	t := &roundRobin{targets: targets}
	if len(targets) == 0 {
		t.err = errors.New("mcptest: RoundRobin needs at least one target")
	}
	for i, x := range targets {
		if x == nil {
			t.err = fmt.Errorf("mcptest: RoundRobin target %d is nil", i)
			break
		}
		if err := x.check(); err != nil {
			t.err = err
			break
		}
	}
	return t
}

func parseEndpoint(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("mcptest: endpoint %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcptest: endpoint %q is not an absolute http or https URL", s)
	}
	return u, nil
}

// hostOf returns the Host a request goes out with: the endpoint's, or
// the one WithHeader("Host", …) set, which it removes from the header
// (Go sends req.Host, never a Host header field).
func hostOf(req *http.Request, endpoint string) string {
	h, ok := req.Header["Host"]
	if !ok {
		return endpoint
	}
	req.Header.Del("Host")
	if len(h) == 0 {
		return endpoint
	}
	return h[0]
}

type urlTarget struct {
	endpoint *url.URL
	hc       *http.Client
	err      error
}

func (t *urlTarget) check() error { return t.err }

func (t *urlTarget) send(req *http.Request) (*http.Response, error) {
	if t.err != nil {
		return nil, t.err
	}
	u := *t.endpoint
	req.URL = &u
	req.Host = hostOf(req, u.Host)
	return t.hc.Do(req)
}

type roundRobin struct {
	targets []Target
	next    atomic.Uint64
	err     error
}

func (t *roundRobin) check() error { return t.err }

func (t *roundRobin) send(req *http.Request) (*http.Response, error) {
	if t.err != nil {
		return nil, t.err
	}
	i := (t.next.Add(1) - 1) % uint64(len(t.targets))
	return t.targets[i].send(req)
}

type handlerTarget struct {
	endpoint *url.URL
	h        http.Handler
	err      error
}

func (t *handlerTarget) check() error { return t.err }

// errClientClosed is what a handler's writes fail with once the client
// closed the response.
var errClientClosed = errors.New("mcptest: the client closed the response")

func (t *handlerTarget) send(req *http.Request) (*http.Response, error) {
	if t.err != nil {
		return nil, t.err
	}
	u := *t.endpoint
	ctx, cancel := context.WithCancel(req.Context())
	sreq := req.Clone(ctx)
	sreq.URL = &u
	sreq.Host = hostOf(sreq, u.Host)
	sreq.RequestURI = u.RequestURI()
	sreq.RemoteAddr = "127.0.0.1:1"
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}

	pr, pw := io.Pipe()
	gone := make(chan struct{})
	w := &streamWriter{header: http.Header{}, pw: pw, committed: make(chan struct{}), gone: gone}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				var err error
				if p == http.ErrAbortHandler {
					err = errors.New("mcptest: the handler aborted the response")
				} else {
					err = fmt.Errorf("mcptest: the handler panicked: %v\n%s", p, debug.Stack())
				}
				w.abort(err)
				return
			}
			w.commit(http.StatusOK)
			_ = pw.Close()
		}()
		t.h.ServeHTTP(w, sreq)
	}()
	body := &handlerBody{pr: pr, cancel: cancel, done: done, gone: gone}
	select {
	case <-w.committed:
	case <-ctx.Done():
		_ = body.Close()
		return nil, ctx.Err()
	}
	if w.err != nil {
		_ = body.Close()
		return nil, w.err
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.snapshot,
		Body:          body,
		ContentLength: -1,
		Request:       req,
	}, nil
}

// handlerBody is the client's end of an in-process response. Closing it
// cancels the request's context, unblocks the handler's writes and waits
// for ServeHTTP to return.
type handlerBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
	gone   chan struct{}
	once   sync.Once
}

func (b *handlerBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *handlerBody) Close() error {
	b.once.Do(func() {
		close(b.gone)
		b.cancel()
		_ = b.pr.CloseWithError(errClientClosed)
		<-b.done
	})
	return nil
}

// streamWriter is an http.ResponseWriter whose body goes straight into a
// pipe the client reads, so nothing is buffered: a flushed SSE event is
// readable at once. The status and a copy of the header are fixed when
// the response is committed (the first WriteHeader, Write or Flush, or the
// handler's return).
type streamWriter struct {
	header    http.Header
	pw        *io.PipeWriter
	mu        sync.Mutex
	status    int
	snapshot  http.Header
	err       error // set before committed is closed when the handler failed first
	committed chan struct{}
	isDone    bool
	gone      chan struct{} // closed when the client closed the response
}

func (w *streamWriter) Header() http.Header { return w.header }

func (w *streamWriter) WriteHeader(status int) {
	if status >= 100 && status < 200 && status != http.StatusSwitchingProtocols {
		return // informational: not the response
	}
	w.commit(status)
}

func (w *streamWriter) commit(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.isDone {
		return
	}
	w.isDone = true
	w.status = status
	w.snapshot = w.header.Clone()
	close(w.committed)
}

func (w *streamWriter) abort(err error) {
	w.mu.Lock()
	first := !w.isDone
	if first {
		w.isDone = true
		w.err = err
		close(w.committed)
	}
	w.mu.Unlock()
	_ = w.pw.CloseWithError(err)
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.commit(http.StatusOK)
	return w.pw.Write(p)
}

// Flush commits the response; the body is never buffered.
func (w *streamWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush for http.ResponseController: it fails once the
// client has closed the response.
func (w *streamWriter) FlushError() error {
	w.commit(http.StatusOK)
	select {
	case <-w.gone:
		return errClientClosed
	default:
		return nil
	}
}
