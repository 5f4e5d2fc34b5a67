package legacy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/sse"
	"github.com/baton-mcp/baton/mcp"
)

// eventTimeout bounds one write of the event store made while a call
// sends: a slow store delays the call's messages by at most this, and
// then they go out without an id.
const eventTimeout = 2 * time.Second

// resumeWait is how long a resumed stream waits for the next event of a
// call before it checks that the instance holding the call is alive.
const resumeWait = 2 * time.Second

// beatEvery and beatTTL are the heartbeat of an instance in a shared
// event store: a resumed stream whose call's instance has not beaten for
// beatTTL ends with an error.
const (
	beatEvery = 2 * time.Second
	beatTTL   = 3 * beatEvery
)

// keptStream writes the events of one stream to the event store and then
// to the client, each with its id, in the order kept.
type keptStream struct {
	h    *adapter
	sid  string
	st   *sse.Stream
	meta StreamMeta

	mu        sync.Mutex // held while an event is kept and sent
	key       string     // the stream's key, once opened in the store
	mem       *memStream // the stream, when opened in a memoryEventStore (appendTo)
	failed    bool       // the store refused to open it: events go without ids
	detached  bool       // the drain ended the client's stream: events are only kept
	over      bool       // the call ended: the drain leaves its response alone
	unflushed bool       // the final event is written, not yet flushed (finishSSE)

	// conn is the ResponseWriter of a call served on its request's
	// goroutine, which the drain completes from outside (drain.go); nil
	// for the other streams.
	conn    http.ResponseWriter
	chunked bool // conn's body is chunked (HTTP/1.1)
	// listDetached (the drain ended this one's stream) goes with prev and
	// next, which list the calls of drainState, guarded by its mu. It sits
	// beside chunked so that a call's kept stream, its SSE stream and its
	// peer fit the 320-byte size class together (newCallStream).
	listDetached bool
	prev, next   *keptStream

	// spare is the peer of the call whose stream this is, allocated with
	// it (newCallStream), for session.run to take; nil for the other
	// streams, and once taken.
	spare *peer
}

func (h *adapter) newKeptStream(sid string, st *sse.Stream, request mcp.ID) *keptStream {
	meta := StreamMeta{Instance: h.instance}
	if !request.IsZero() {
		meta.Request = request.Raw()
	}
	return &keptStream{h: h, sid: sid, st: st, meta: meta}
}

// newCallStream returns the kept stream of a POSTed call answering r on w,
// allocated with its SSE stream and its call's peer (keptStream.spare):
// one allocation, not two, of every call in a session (issue 23).
func (h *adapter) newCallStream(w http.ResponseWriter, r *http.Request, sid string, request mcp.ID) *keptStream {
	c := &struct {
		k  keptStream
		st sse.Stream
		p  peer
	}{}
	c.st.Init(w, r)
	c.k = keptStream{h: h, sid: sid, st: &c.st, meta: StreamMeta{Instance: h.instance, Request: request.Raw()}, spare: &c.p}
	return &c.k
}

// storeContext bounds one call of the event store by eventTimeout. The
// memoryEventStore neither waits nor fails on these calls, so it gets no
// deadline (and no timer per event).
func (k *keptStream) storeContext() (context.Context, context.CancelFunc) {
	if _, mem := k.h.events.(*memoryEventStore); mem {
		return context.Background(), func() {}
	}
	return context.WithTimeout(context.Background(), eventTimeout)
}

// keep stores msg and returns its position in the stream, its event id
// being k.key "." pos (eventID; the two are written as such by the SSE
// stream, not joined into a string), or false when the store failed.
// A memoryEventStore keeps msg itself, not a copy (appendKept): msg, and
// every message a kept stream sends or finishes with, is never modified
// once handed over. Called with k.mu held.
func (k *keptStream) keep(msg []byte) (pos string, ok bool) {
	if k.failed {
		return "", false
	}
	ctx, cancel := k.storeContext()
	defer cancel()
	if k.key == "" {
		key := k.h.streams.next()
		if oa, ok := k.h.events.(streamOpenAppender); ok {
			var err error
			if m, mem := oa.(*memoryEventStore); mem {
				pos, k.mem = m.openStreamAppendKept(k.sid, key, k.meta, msg)
			} else {
				pos, err = oa.OpenStreamAppend(ctx, k.sid, key, k.meta, msg)
			}
			if err != nil {
				k.failed = true
				k.h.d.Logger().Warn("legacy sessions: could not keep a stream's events; it cannot be resumed", "session", k.sid, "err", err)
				return "", false
			}
			k.key = key
			return pos, true
		}
		if err := k.h.events.OpenStream(ctx, k.sid, key, k.meta); err != nil {
			k.failed = true
			k.h.d.Logger().Warn("legacy sessions: could not keep a stream's events; it cannot be resumed", "session", k.sid, "err", err)
			return "", false
		}
		k.key = key
	}
	var err error
	if m, mem := k.h.events.(*memoryEventStore); mem {
		pos, err = k.appendMem(m, msg, false)
	} else {
		pos, err = k.h.events.Append(ctx, k.sid, k.key, msg)
	}
	if err != nil {
		k.h.d.Logger().Warn("legacy sessions: could not keep an event; it goes out without an id", "session", k.sid, "err", err)
		return "", false
	}
	return pos, true
}

// appendMem is m.appendKept of msg to k's stream, which it finds by
// k.mem when it opened it. Called with k.mu held.
func (k *keptStream) appendMem(m *memoryEventStore, msg []byte, end bool) (string, error) {
	if k.mem != nil {
		return m.appendTo(k.mem, msg, end)
	}
	return m.appendKept(k.sid, k.key, msg, end)
}

// sendKept keeps msg and sends it on st, with its event id when it was
// kept; kept reports whether it was. Called with k.mu held.
func (k *keptStream) sendKept(st *sse.Stream, msg []byte) (kept bool, err error) {
	pos, kept := k.keep(msg)
	if !kept {
		return false, st.SendID("", msg)
	}
	return true, st.SendIDPosFramed(&k.h.frames, k.key, pos, msg)
}

// send keeps msg and sends it. A message that was kept counts as sent
// even when the client's stream is cut: the client gets it when it
// resumes.
func (k *keptStream) send(msg []byte) error {
	if !k.st.CanSend() {
		return fmt.Errorf("cannot reach the client: its request did not accept text/event-stream")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.detached { // the client resumes elsewhere and reads it there
		if _, kept := k.keep(msg); !kept {
			return sse.ErrClosed
		}
		return nil
	}
	if k.st.Done() {
		return sse.ErrClosed // the call has answered: its stream is over
	}
	kept, err := k.sendKept(k.st, msg)
	if err != nil && kept {
		return nil
	}
	return err
}

func (k *keptStream) keepAlive() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.detached {
		return nil
	}
	return k.st.KeepAlive()
}

// finish writes the call's response: as the stream's last event (kept,
// for a client that resumes) once the stream is SSE, else as a JSON body.
func (k *keptStream) finish(res []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.detached {
		k.keep(res)
		k.end()
		return
	}
	if k.key == "" && !k.st.Streaming() {
		k.st.Finish(http.StatusOK, res)
		return
	}
	if ae, ok := k.h.events.(streamAppendEnder); ok && k.key != "" && !k.failed {
		// The response and the stream's end, kept in one step.
		var (
			pos string
			err error
		)
		if m, mem := ae.(*memoryEventStore); mem {
			pos, err = k.appendMem(m, res, true) // see keep
		} else {
			ctx, cancel := k.storeContext()
			pos, err = ae.AppendEndStream(ctx, k.sid, k.key, res)
			cancel()
		}
		if err != nil {
			k.h.d.Logger().Warn("legacy sessions: could not keep an event; it goes out without an id", "session", k.sid, "err", err)
			k.end()
			k.finishSSE(false, "", res)
			return
		}
		k.finishSSE(true, pos, res)
		return
	}
	pos, kept := k.keep(res)
	k.end()
	k.finishSSE(kept, pos, res)
}

// finishSSE writes the final event of the stream, with the event id of
// its position pos when it was kept. It is not flushed: the handler
// returns next and net/http sends it with the end of the response, in
// one write; flushFinal sends it before anything that may wait. Called
// with k.mu held.
func (k *keptStream) finishSSE(kept bool, pos string, res []byte) {
	if kept {
		k.st.FinishIDPosUnflushedFramed(&k.h.frames, http.StatusOK, k.key, pos, res)
	} else {
		k.st.FinishIDUnflushed(http.StatusOK, "", res)
	}
	k.unflushed = true
}

// flushFinal sends the final event now if it was written unflushed:
// before the request's goroutine does something that may wait (a store
// call) ahead of its return.
func (k *keptStream) flushFinal() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.unflushed && !k.detached {
		k.unflushed = false
		_ = k.st.Flush()
	}
}

// cancelled ends the stream of a request the client cancelled, with no
// response.
func (k *keptStream) cancelled(id mcp.ID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.detached {
		endCancelled(k.st, id)
	}
	k.end()
}

// end marks the kept stream ended. Called with k.mu held.
func (k *keptStream) end() {
	if k.key == "" || k.failed {
		return
	}
	ctx, cancel := k.storeContext()
	defer cancel()
	if err := k.h.events.EndStream(ctx, k.sid, k.key); err != nil {
		k.h.d.Logger().Warn("legacy sessions: could not mark a stream ended; a resumed stream ends when its events expire", "session", k.sid, "err", err)
	}
}

// resumeCall serves a GET with Last-Event-ID naming the stream of a call:
// the events after pos, and those that follow, until the call's response
// (or its end without one). If the instance holding the call goes away
// first, an error response for the call's request ends the stream.
func (h *adapter) resumeCall(w http.ResponseWriter, r *http.Request, s *session, stream, pos string, meta *StreamMeta) {
	if !sse.AcceptsSSE(r.Header.Get("Accept")) {
		writeJSONError(w, http.StatusNotAcceptable, mcp.ID{}, mcp.Errorf(mcp.InvalidRequest, "resuming a stream needs Accept: text/event-stream"))
		return
	}
	st := sse.New(w, r)
	st.Open()
	// The client's own last id first, as a priming event: a client that
	// remembers the last id of each stream it reads (the Go SDK v1.8.0
	// does), not of the call, can resume again if this stream too is cut
	// (a drain, a crash) before its next event.
	if st.SendID(eventID(stream, pos), nil) != nil {
		return
	}
	// A drain ends the stream at once, with a retry field: the client
	// resumes it on another instance (its call does not run here: it is
	// parked, or runs where its answer arrived).
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-h.parkNow:
			cancel()
		case <-ctx.Done():
		}
	}()
	// The holder is checked at the first quiet moment, then once per
	// beatTTL of quiet: a client that resumes a call whose instance is
	// long gone learns it at once.
	var lastAlive time.Time
	poll := resumePollMin
	for {
		evs, ended, err := h.readResumed(ctx, s.id, stream, pos, &poll)
		if ctx.Err() != nil || s.closedCause() != nil {
			if r.Context().Err() == nil && h.draining.Load() {
				st.EndRetry(detachRetry)
			}
			return
		}
		if err != nil {
			h.d.Logger().Warn("legacy sessions: reading a resumed stream failed", "session", s.id, "err", err)
			h.endResumed(st, meta, "its events could not be read (they expired, or the session store failed)")
			return
		}
		for _, e := range evs {
			if st.SendID(eventID(stream, e.Pos), e.Msg) != nil {
				return
			}
			pos = e.Pos
		}
		if ended {
			return
		}
		if len(evs) > 0 {
			lastAlive = time.Now()
			continue
		}
		if st.KeepAlive() != nil {
			return
		}
		if time.Since(lastAlive) < beatTTL {
			continue
		}
		if h.checkParked(ctx, s.id, meta) {
			// The call waits as its record, or runs on a live instance
			// (taken over here if its instance died): its events come.
			lastAlive = time.Now()
			continue
		}
		actx, cancel := context.WithTimeout(ctx, eventTimeout)
		alive, err := h.events.Alive(actx, meta.Instance)
		cancel()
		switch {
		case err != nil:
			h.d.Logger().Warn("legacy sessions: could not tell whether the instance of a resumed call is alive", "err", err)
		case !alive:
			h.endResumed(st, meta, "the server instance running it went away, and its work with it; call again")
			return
		default:
			lastAlive = time.Now()
		}
	}
}

// The poll of a resumed stream on a shared event store: from resumePollMin
// after an event, doubling while the stream is quiet, to resumePollMax.
const (
	resumePollMin = 50 * time.Millisecond
	resumePollMax = time.Second
)

// readResumed reads the events of a resumed call's stream after pos,
// waiting up to resumeWait for one. The memory event store waits on the
// stream itself; a shared one is polled (poll, which it adjusts), not
// waited on: a blocking read holds one of the store client's pooled
// connections for the whole wait, and every call parked for its user has
// a client's resumed stream waiting, so blocking reads would take the
// pool from everything else (issue 32: 100 parked calls starved a fleet
// instance's 20 Redis connections). A quiet resumed stream costs the
// store about one read a second.
func (h *adapter) readResumed(ctx context.Context, sid, stream, pos string, poll *time.Duration) ([]Event, bool, error) {
	if _, mem := h.events.(*memoryEventStore); mem {
		return h.events.Read(ctx, sid, stream, pos, resumeWait)
	}
	deadline := time.Now().Add(resumeWait)
	t := time.NewTimer(*poll)
	defer t.Stop()
	for {
		evs, ended, err := h.events.Read(ctx, sid, stream, pos, 0)
		if err != nil || len(evs) > 0 || ended || !time.Now().Before(deadline) {
			if len(evs) > 0 {
				*poll = resumePollMin
			}
			return evs, ended, err
		}
		t.Reset(*poll)
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-t.C:
		}
		*poll = min(2**poll, resumePollMax)
	}
}

// endResumed ends a resumed call's stream with an error response saying
// why the call's response will not come.
func (h *adapter) endResumed(st *sse.Stream, meta *StreamMeta, why string) {
	var id mcp.ID
	if err := id.UnmarshalJSON(meta.Request); err != nil {
		st.Abandon()
		return
	}
	b, _ := rpcwire.AppendError(nil, id, mcp.Errorf(mcp.InternalError, "the request's response is lost: %s", why))
	st.Finish(http.StatusOK, b)
}

// lastEventStream reads a GET's Last-Event-ID: the stream it names, if
// that is a stream of session s, its position and meta. err is the event
// store's failure: the client is told to try again rather than given the
// session's GET stream in place of its call's.
func (h *adapter) lastEventStream(ctx context.Context, r *http.Request, s *session) (stream, pos string, meta *StreamMeta, err error) {
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		return "", "", nil, nil
	}
	stream, pos, ok := parseEventID(last)
	if !ok {
		return "", "", nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	meta, err = h.events.StreamMeta(ctx, s.id, stream)
	switch {
	case errors.Is(err, ErrNotFound):
		return "", "", nil, nil
	case err != nil:
		return "", "", nil, err
	}
	return stream, pos, meta, nil
}

// replayGET sends the events of a GET stream after pos on st: what a
// client whose GET stream was cut had not received.
func (h *adapter) replayGET(ctx context.Context, st *sse.Stream, s *session, stream, pos string) {
	ctx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	evs, _, err := h.events.Read(ctx, s.id, stream, pos, 0)
	if err != nil {
		return
	}
	for _, e := range evs {
		if st.SendID(eventID(stream, e.Pos), e.Msg) != nil {
			return
		}
	}
}

// beater records that this instance is alive, in a shared event store,
// until Close.
func (h *adapter) beater() {
	defer h.wg.Done()
	t := time.NewTicker(beatEvery)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(h.life, eventTimeout)
		err := h.events.Beat(ctx, h.instance, beatTTL)
		cancel()
		if err != nil && h.life.Err() == nil {
			h.d.Logger().Warn("legacy sessions: could not record this instance alive", "err", err)
		}
		select {
		case <-h.life.Done():
			return
		case <-t.C:
		}
	}
}
