package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Serve serves hs on ln until ctx ends, then stops for a rolling restart,
// safely behind a proxy that keeps idle keep-alive connections to the
// instance (nginx's upstream keepalive, Envoy, a cloud load balancer).
// hs.Handler is whatever routes requests to s (s itself, a mux, echo with
// echo.WrapHandler). Serve sets hs.ConnState (calling the one set before).
// It returns nil after a graceful stop, or the error that ended serving.
//
// The stop, in this order, all within drain of ctx's end:
//
//  1. The drain of step 2 begins, then ln is closed: a proxy's new
//     connections are refused, which it
//     retries on another instance (nginx's proxy_next_upstream error, its
//     default, does so even for a POST, which was not sent). Connections
//     already open go on being served.
//  2. The drain of Shutdown: no new tasks, 2025-11-25 sessions or
//     listen streams (503, Retry-After); listen streams close; every
//     response carries Connection: close, so the proxy drops each pooled
//     connection after its next response; 2025-11-25 streams of calls
//     still in progress a moment later end with a retry field, and their
//     clients resume them (Last-Event-ID) on another instance while the
//     calls finish here. Serve waits for running tasks and calls.
//  3. Serve waits until every connection has closed (the proxy has used
//     or dropped every one it kept; each response now ends its
//     connection): closing an idle connection races with a request the
//     proxy may be writing on it, which the proxy would answer with 502
//     and, for a POST, not resend. Set the proxy's idle
//     timeout for upstream connections (nginx's keepalive_timeout in the
//     upstream block) well under drain, and under hs.IdleTimeout.
//  4. http.Server.Shutdown, which waits for the requests still active;
//     then the work begun meanwhile is waited for, and s is closed (Close:
//     what still runs is failed at once).
//
// If the deadline passes first, what remains is cut (hs.Close), and s is
// closed; the deadline's error is logged and not returned.
func (s *Server) Serve(ctx context.Context, hs *http.Server, ln net.Listener, drain time.Duration) error {
	conns := trackConns(hs)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		_ = s.Close()
		return fmt.Errorf("server: serve: %w", err)
	case <-ctx.Done():
	}
	clock := wallClock(s.opts.Now)
	start := clock()
	dctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	// Draining before the listener closes: a request on an open
	// connection from now on is answered with Connection: close.
	s.beginDrain()
	_ = ln.Close() // hs.Serve returns; open connections are served on
	<-errc
	derr := s.drain(dctx)
	work := clock().Sub(start) // the work in progress, before the proxy lets go of its connections
	ierr := conns.waitClosed(dctx)
	herr := hs.Shutdown(dctx)
	if herr != nil {
		_ = hs.Close()
	}
	if herr == nil && derr == nil {
		derr = s.drain(dctx) // calls and tasks begun on the last connections
	}
	err := errors.Join(derr, ierr, herr)
	_ = s.Close()
	if err != nil {
		s.log.Warn("shutdown: the drain deadline passed; what remained was cut", "drain", drain, "err", err)
	} else {
		s.log.Info("shutdown: drained", "took", clock().Sub(start).Round(time.Millisecond), "work", work.Round(time.Millisecond))
	}
	return nil
}

// connTracker counts the open connections of an http.Server.
type connTracker struct {
	mu      sync.Mutex
	open    map[net.Conn]struct{}
	changed chan struct{} // closed and replaced when open shrinks
}

func trackConns(hs *http.Server) *connTracker {
	t := &connTracker{open: map[net.Conn]struct{}{}, changed: make(chan struct{})}
	prev := hs.ConnState
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		t.set(c, st)
		if prev != nil {
			prev(c, st)
		}
	}
	return t
}

func (t *connTracker) set(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch st {
	case http.StateNew, http.StateActive, http.StateIdle:
		t.open[c] = struct{}{}
	default: // closed, or hijacked: no longer the server's
		if _, ok := t.open[c]; ok {
			delete(t.open, c)
			close(t.changed)
			t.changed = make(chan struct{})
		}
	}
}

// waitClosed waits until every connection has closed, or ctx ends.
//
// Not only the idle ones: a connection busy when the drain began may be
// finishing a response written before it, without Connection: close, and
// turn idle a moment later; closing it then (as http.Server.Shutdown
// does) races with the proxy's next request on it. During the drain every
// response carries Connection: close, so a busy connection closes after
// its response, and an idle one once the proxy uses it or lets it go.
func (t *connTracker) waitClosed(ctx context.Context) error {
	for {
		t.mu.Lock()
		n, changed := len(t.open), t.changed
		t.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("server: shutdown: %d connections still open: %w", n, ctx.Err())
		}
	}
}
