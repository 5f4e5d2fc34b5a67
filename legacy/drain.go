package legacy

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/sse"
	"github.com/baton-mcp/baton/jsonrpc"
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

// drainState is the Handler's part of a graceful shutdown.
type drainState struct {
	once  sync.Once
	ch    chan struct{} // closed detachGrace after Shutdown began
	start sync.Once
}

// detach returns a channel closed once the streams are to be ended.
func (d *drainState) detach() chan struct{} {
	d.once.Do(func() { d.ch = make(chan struct{}) })
	return d.ch
}

// begin starts the countdown to detaching the streams (once).
func (d *drainState) begin() {
	d.start.Do(func() {
		ch := d.detach()
		time.AfterFunc(detachGrace, func() { close(ch) })
	})
}

// serveCall runs a POSTed request of session s: the call runs in its own
// goroutine so that, once the drain ends the streams, the HTTP request
// can end while the call goes on (its events are kept for the client
// that resumes).
func (h *Handler) serveCall(w http.ResponseWriter, r *http.Request, rec *Record, use bool, msg *rpcwire.Message) {
	h.calls.Add(1)
	s := h.acquire(rec, use)
	// The call's events are kept for a client that resumes, and a cut
	// stream does not cancel the call: the transport says a disconnection
	// is not a cancellation.
	k := h.newKeptStream(rec.ID, sse.New(w, r), msg.ID)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer h.calls.Add(-1)
		defer h.release(s, use)
		s.serveRequest(context.WithoutCancel(r.Context()), msg, k, k.finish, func() { k.cancelled(msg.ID) })
	}()
	select {
	case <-done:
		return
	case <-h.drain.detach():
	}
	// Draining: end the stream as soon as the client can resume it (it
	// has an event id), unless the call ends first.
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for !k.detach(detachRetry) {
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// refuseDraining answers a GET on an instance that shuts down: 503, to be
// retried at once, on another instance.
func (h *Handler) refuseDraining(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	writeJSONError(w, http.StatusServiceUnavailable, jsonrpc.ID{}, jsonrpc.Errorf(jsonrpc.InternalError,
		"this server instance is shutting down and opens no new stream; try again (another instance will serve it)"))
}

// detach ends the client's stream of a call that goes on, if the client
// can resume it: the stream is open and an event with an id went out.
// From then on the call's messages are only kept. It reports whether the
// stream is detached.
func (k *keptStream) detach(retry time.Duration) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.detached {
		return true
	}
	if k.key == "" || k.failed || !k.st.Streaming() || k.st.Done() {
		return false
	}
	k.st.EndRetry(retry)
	k.detached = true
	return true
}
