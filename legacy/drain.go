package legacy

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/sse"
	"github.com/baton-mcp/baton/mcp"
)

// detachGrace is how long after Shutdown begins the streams of the calls
// still in progress here, and the GET streams, are ended (with a retry
// field): their clients resume them with Last-Event-ID on another
// instance, while the calls go on here until they end or the drain's
// deadline. Most calls end within it, on their own streams.
const detachGrace = time.Second

// detachRetry is the retry field sent on a stream the drain ends: how
// long its client waits before it resumes the stream elsewhere.
const detachRetry = 500 * time.Millisecond

// detachEvery is how often the drain tries again to end the streams of
// the calls that could not be ended yet (no event with an id went out).
const detachEvery = 100 * time.Millisecond

// drainState is the adapter's part of a graceful shutdown.
type drainState struct {
	once  sync.Once
	ch    chan struct{} // closed detachGrace after Shutdown began
	start sync.Once

	// The calls served on their request's goroutine (serveCall), whose
	// streams the drain ends from outside: a list, so that a call adds
	// and removes itself without allocating.
	mu   sync.Mutex
	head *keptStream
}

// detach returns a channel closed once the streams are to be ended.
func (d *drainState) detach() chan struct{} {
	d.once.Do(func() { d.ch = make(chan struct{}) })
	return d.ch
}

// begin starts the countdown to detaching the streams (once); then, until
// life ends, it ends the streams of the calls listed, as soon as each
// can be.
func (d *drainState) begin(life context.Context) {
	d.start.Do(func() {
		ch := d.detach()
		time.AfterFunc(detachGrace, func() { close(ch) })
		go d.sweep(life, ch)
	})
}

// sweep ends the streams of the listed calls once ch is closed, and
// again every detachEvery for those that could not be ended yet or
// began since, until life ends (the adapter closes).
func (d *drainState) sweep(life context.Context, ch <-chan struct{}) {
	select {
	case <-ch:
	case <-life.Done():
		return
	}
	t := time.NewTicker(detachEvery)
	defer t.Stop()
	var batch []*keptStream
	for {
		batch = batch[:0]
		d.mu.Lock()
		for k := d.head; k != nil; k = k.next {
			if !k.listDetached {
				batch = append(batch, k)
			}
		}
		d.mu.Unlock()
		for _, k := range batch {
			if k.detach(detachRetry) {
				d.mu.Lock()
				k.listDetached = true
				d.mu.Unlock()
			}
		}
		clear(batch)
		select {
		case <-life.Done():
			return
		case <-t.C:
		}
	}
}

// add lists k, a call whose stream the drain ends from outside.
func (d *drainState) add(k *keptStream) {
	d.mu.Lock()
	k.next = d.head
	if d.head != nil {
		d.head.prev = k
	}
	d.head = k
	d.mu.Unlock()
}

// remove takes k off the list, once its call has ended: from then on the
// drain leaves its response alone.
func (d *drainState) remove(k *keptStream) {
	k.mu.Lock()
	k.over = true
	k.mu.Unlock()
	d.mu.Lock()
	if k.prev != nil {
		k.prev.next = k.next
	} else if d.head == k {
		d.head = k.next
	}
	if k.next != nil {
		k.next.prev = k.prev
	}
	k.prev, k.next = nil, nil
	d.mu.Unlock()
}

// serveCall runs a POSTed request of session s. The call's events are
// kept for a client that resumes, and a cut stream does not cancel the
// call: the transport says a disconnection is not a cancellation.
//
// The call runs on the request's own goroutine. When the instance drains,
// the stream of a call still in progress is ended from outside
// (keptStream.detach): the retry field is written, and the HTTP/1.x
// response is completed on its connection, taken from net/http, which is
// then closed; the call goes on, its events only kept. A response that
// cannot be completed from outside (HTTP/2, or a ResponseWriter that does
// not reach its connection) gets the call on a goroutine of its own
// instead, so that the request can end while the call goes on
// (serveCallAside).
func (h *adapter) serveCall(w http.ResponseWriter, r *http.Request, rec *Record, use bool, msg *rpcwire.Message, decoded any) {
	h.calls.Add(1)
	s := h.acquire(rec, use)
	k := h.newCallStream(w, r, rec.ID, msg.ID)
	if r.ProtoMajor != 1 || !hijackable(w) {
		h.serveCallAside(r, s, use, k, msg, decoded)
		return
	}
	defer h.calls.Add(-1)
	defer h.releaseBefore(s, use, k.flushFinal)
	k.conn, k.chunked = w, r.ProtoAtLeast(1, 1)
	if hs, _ := r.Context().Value(http.ServerContextKey).(*http.Server); hs != nil && h.httpServer.Load() != hs {
		h.httpServer.Store(hs) // a poll hands a connection back to it
	}
	h.drain.add(k)
	defer h.drain.remove(k)
	s.serveRequest(context.WithoutCancel(r.Context()), msg, decoded, k, k.finish, func() { k.cancelled(msg.ID) })
}

// serveCallAside runs the call in its own goroutine so that, once the
// drain ends the streams, the HTTP request can end while the call goes on
// (its events are kept for the client that resumes).
func (h *adapter) serveCallAside(r *http.Request, s *session, use bool, k *keptStream, msg *rpcwire.Message, decoded any) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer h.calls.Add(-1)
		defer h.releaseBefore(s, use, k.flushFinal)
		s.serveRequest(context.WithoutCancel(r.Context()), msg, decoded, k, k.finish, func() { k.cancelled(msg.ID) })
	}()
	select {
	case <-done:
		return
	case <-h.drain.detach():
	}
	// Draining: end the stream as soon as the client can resume it (it
	// has an event id), unless the call ends first.
	t := time.NewTicker(detachEvery)
	defer t.Stop()
	for !k.detach(detachRetry) {
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// hijackable reports whether w, or a ResponseWriter it wraps (Unwrap, as
// http.ResponseController follows), can hand over its connection.
func hijackable(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case http.Hijacker:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

// refuseDraining answers a GET on an instance that shuts down: 503, to be
// retried at once, on another instance.
func (h *adapter) refuseDraining(w http.ResponseWriter) {
	h.refuse(context.Background(), w, http.StatusServiceUnavailable, mcp.ID{}, mcp.Errorf(mcp.InternalError,
		"this server instance is shutting down and opens no new stream; try again (another instance will serve it)"), "draining", time.Second)
}

// endDraining answers a GET on an instance that shuts down: a stream that
// ends at once with a retry field (and, for a resumed stream, a priming
// event with the client's own last id), so that the client reconnects,
// through the balancer, to another instance. A 503 would do for a client
// that retries it, but the official Go SDK (v1.8.0) ends its session on a
// 503 to its GET. A client that does not accept SSE gets the 503.
func (h *adapter) endDraining(w http.ResponseWriter, r *http.Request) {
	if !sse.AcceptsSSE(r.Header.Get("Accept")) {
		h.refuseDraining(w)
		return
	}
	st := sse.New(w, r)
	st.Open()
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		if _, _, ok := parseEventID(last); ok {
			_ = st.SendID(last, nil)
		}
	}
	st.EndRetry(detachRetry)
}

// detach ends the client's stream of a call that goes on, if the client
// can resume it: the stream is open and an event with an id went out.
// From then on the call's messages are only kept. It reports whether the
// stream is detached (or the call is over: nothing is left to detach).
func (k *keptStream) detach(retry time.Duration) bool { return k.detachKeep(retry, nil) }

// detachKeep is detach; a non-nil keep (a poll) serves the connection on after
// the response, as net/http would have, rather than closing it.
func (k *keptStream) detachKeep(retry time.Duration, keep *http.Server) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.detached || k.over {
		return true
	}
	if k.key == "" || k.failed || !k.st.Streaming() || k.st.Done() {
		return false
	}
	k.st.EndRetry(retry)
	k.detached = true
	if k.conn != nil {
		// The request's goroutine runs the call: the response is
		// completed here, on its connection (nothing else writes to it:
		// every write goes through k, under k.mu, and the stream is
		// done).
		completeResponse(k.conn, k.chunked, keep)
	}
	return true
}

// completeResponse ends an HTTP/1.x SSE response whose handler goes on:
// it takes the connection from net/http, writes the end of the chunked
// body (HTTP/1.1; an HTTP/1.0 body ends with its connection), and closes
// the connection (the instance is shutting down; the client makes its
// next request on another). A response whose body is encoded by a
// wrapper (Content-Encoding) cannot be ended cleanly from here: its
// connection is only closed, and the client resumes as from a cut stream.
// After this the ResponseWriter belongs to nobody: a wrapper that flushed
// it once the handler returned would make net/http panic (Baton's own
// wrappers do not; docs/deployment.md tells users).
//
// A poll (keep, the request's server) must not close the connection: the
// client has read a complete response that did not say "Connection:
// close", so it may already be sending its next request on it, and a POST
// that meets a closed idle connection is not retried (net/http, and so the
// official Go SDK, fails it: "server closed idle connection"). keep serves
// the connection on instead, as net/http would have after the handler
// returned (serveOn).
func completeResponse(w http.ResponseWriter, chunked bool, keep *http.Server) {
	encoded := w.Header().Get("Content-Encoding") != ""
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return // the stream stays open (its retry field sent) until the call ends
	}
	if chunked && !encoded {
		_, _ = buf.WriteString("0\r\n\r\n")
		_ = buf.Flush()
		if keep != nil {
			serveOn(keep, conn, buf.Reader)
			return
		}
	}
	_ = conn.Close()
}

// serveOn serves HTTP on conn, taken from hs, with hs's handler and
// limits: conn's next requests (the first may already be in r's buffer)
// are answered as hs would answer them, until the client or the idle
// timeout closes it. hs.Shutdown does not see it; an idle one closes at
// hs.IdleTimeout (or ReadTimeout).
func serveOn(hs *http.Server, conn net.Conn, r *bufio.Reader) {
	child := &http.Server{
		Handler: hs.Handler, ReadTimeout: hs.ReadTimeout, ReadHeaderTimeout: hs.ReadHeaderTimeout,
		WriteTimeout: hs.WriteTimeout, IdleTimeout: hs.IdleTimeout, MaxHeaderBytes: hs.MaxHeaderBytes, ErrorLog: hs.ErrorLog,
		BaseContext: hs.BaseContext, ConnContext: hs.ConnContext, ConnState: hs.ConnState,
		// HTTP/1.x only (the connection already speaks it; a TLS one is
		// past its handshake), and nothing of hs's that Serve would write.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	go func() { _ = child.Serve(&oneConn{c: &bufferedConn{Conn: conn, r: r}, addr: conn.LocalAddr()}) }()
}

// oneConn is a listener that accepts one connection, then none.
type oneConn struct {
	mu   sync.Mutex
	c    net.Conn
	addr net.Addr
}

func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.c; c != nil {
		l.c = nil
		return c, nil
	}
	return nil, net.ErrClosed // Serve returns; the accepted connection is served on
}

func (l *oneConn) Close() error { return nil }

func (l *oneConn) Addr() net.Addr { return l.addr }

// bufferedConn reads what the hijack's reader buffered before the
// connection itself.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// pollRetry is the retry field of a stream a handler ends itself
// (server.Call.CloseStream): how long its client waits before it
// reconnects for what follows.
const pollRetry = 500 * time.Millisecond

// poll ends the client's stream of a call that goes on (SSE polling,
// SEP-1699): a stream on which nothing was kept yet first gets a priming
// event (an id, no data), so that the client has an id to resume from;
// then it is detached, as the drain does, with the retry field. It
// reports whether the stream is ended.
func (k *keptStream) poll(retry time.Duration) bool {
	if !k.st.CanSend() {
		return false
	}
	k.mu.Lock()
	if k.detached {
		k.mu.Unlock()
		return true
	}
	if k.over || k.st.Done() {
		k.mu.Unlock()
		return false
	}
	if k.key == "" {
		if kept, err := k.sendKept(k.st, []byte{}); !kept || err != nil {
			k.mu.Unlock()
			return false
		}
	}
	k.mu.Unlock()
	return k.detachKeep(retry, k.h.httpServer.Load())
}
