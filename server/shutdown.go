package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// Shutdown stops the server gracefully, for a rolling restart. Serve calls
// it (in two parts) and is what most programs want: it also stops the
// http.Server without cutting a request a proxy has just sent. A program
// with its own serving loop calls Shutdown on SIGTERM, and
// http.Server.Shutdown only after it (whose wait for active connections
// would otherwise wait on streams that never end by themselves) and after
// the proxy's idle connections are gone (see Serve).
//
// From the start every response carries Connection: close, so a proxy
// drops its pooled connections to this instance after their next response.
//
// At once, the server stops taking new tasks and new subscriptions/listen
// streams (HTTP 503 with Retry-After: 1, so that a load balancer or the
// client retries on another instance), and with a legacy handler new
// 2025-11-25 sessions likewise; it closes every listen stream as the
// specification asks (notifications/cancelled naming the listen request,
// then the request's completion result). Requests that create nothing go
// on being served. A second in, the 2025-11-25 streams still open (the
// POST streams of calls in progress, once they have sent an event with an
// id, and the GET streams) end with an SSE retry field: their clients
// resume them with Last-Event-ID on another instance while the calls go on
// here. Then it waits until the tasks running on this instance
// and the legacy calls in progress (parked on a client's answer) have
// finished, or ctx ends. Last it closes the server (Close): whatever still
// runs is failed at once, each task with an error that says the instance
// shut down. It returns an error wrapping ctx's when ctx ended first.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.drain(ctx)
	return errors.Join(err, s.Close())
}

// drain is Shutdown without the final Close: it may be called again, to
// wait for work that began meanwhile (Serve does).
func (s *Server) drain(ctx context.Context) error {
	s.beginDrain()
	legacyDone := make(chan error, 1)
	if s.legacy != nil {
		go func() { legacyDone <- s.legacy.Shutdown(ctx) }()
	} else {
		legacyDone <- nil
	}
	terr := s.tasks.drain(ctx)
	lerr := <-legacyDone
	if lerr != nil {
		lerr = fmt.Errorf("server: shutdown: legacy calls still in progress: %w", lerr)
	}
	return errors.Join(terr, lerr)
}

// beginDrain marks the server draining: from now on no new tasks, sessions
// or listen streams, and every response carries Connection: close.
func (s *Server) beginDrain() {
	s.drainOnce.Do(func() {
		close(s.draining)
		s.log.Info("shutting down: no new tasks, sessions or listen streams; waiting for the work in progress")
	})
}

// isDraining reports whether Shutdown has begun.
func (s *Server) isDraining() bool {
	select {
	case <-s.draining:
		return true
	default:
		return false
	}
}

// shutdownReason is the reason of the notifications/cancelled that closes
// a listen stream at shutdown.
const shutdownReason = "the server instance is shutting down; listen again (another instance will serve the stream)"

// closeListen ends a listen stream the server closes on its own: the
// notification that cancels the listen request, then its completion
// result (see docs/deployment.md on graceful shutdown).
func (s *Server) closeListen(id mcp.ID, send func([]byte) error) {
	n, err := rpcwire.EncodeNotification("notifications/cancelled", map[string]any{"requestId": id, "reason": shutdownReason})
	if err != nil || send(n) != nil {
		return
	}
	_ = send(rpcwire.AppendResult(nil, id, s.ack()))
}
