package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// Sessions across instances.
//
// A session's record is in the Store; any instance serves any of its
// requests. A call runs on the instance that took its request until it
// asks and its answer is slow to come; then it parks, as its record, and
// runs on wherever its answer arrives (waiting.go). The instances reach
// one another through the store's messages:
//
//   - A question of a call over HTTP has a string id,
//     "<call>:<instance>.<n>": its call's record, the instance that asked,
//     and a random number. The client's answer, POSTed to any instance, is
//     kept in the store, and the instance that asked is woken (kindReply):
//     it hands it to the call waiting there, or resumes the parked call.
//     A call of a RunsOnce tool, whose question waits in place, has the
//     id "<instance>.<n>" with a shared store, an integer without one.
//   - notifications/cancelled for a client request is acted on where it
//     arrives if the request runs there, and otherwise sent to every
//     instance (kindCancel): client request ids do not say where they run.
//   - The GET stream is held by one instance, named in the record. A
//     session message with nowhere else to go (a notification sent after
//     its call's stream closed) goes where the record says, forwarded if
//     that is another instance (kindNotify). A GET
//     opened on another instance takes the stream over: the record names
//     the new holder and the old one is told to end its stream
//     (kindStream), so a client that reconnects through a balancer gets
//     its stream back on whichever instance it reaches.
//   - DELETE ends the session everywhere (kindClosed): calls of it still
//     running on other instances are cancelled. A change of the log level
//     or the subscriptions is sent to every instance (kindChanged), so the
//     holder of the GET stream filters resource updates by the current
//     subscriptions.
//
// Messages are best effort: one lost while an instance's subscription
// reconnects is lost (a cancellation is not acted on). A client's answer
// is not a message: it is kept in the store and only a wake-up is sent
// (see answers.go), so a lost message delays it by at most answerPoll. The keeper rereads every session in use
// on its instance each keep period, so a lost kindClosed, kindChanged or
// kindStream is made good then.

// The kinds of fleet messages.
const (
	kindReply   = "reply"
	kindCancel  = "cancel"
	kindNotify  = "notify"
	kindStream  = "stream"
	kindClosed  = "closed"
	kindChanged = "changed"
)

// fleetMessage is one message between the instances.
type fleetMessage struct {
	Kind    string `json:"kind"`
	From    string `json:"from"`
	Session string `json:"session"`
	// ID is the server request id (kindReply: the key its answer is awaited
	// under) or the client request id, as JSON text (kindCancel).
	ID     string          `json:"id,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *mcp.Error      `json:"error,omitempty"`
	// Body is a JSON-RPC notification for the GET stream (kindNotify).
	Body   json.RawMessage `json:"body,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Record *Record         `json:"record,omitempty"`
	// Rev is the record revision of a takeover (kindStream).
	Rev int64 `json:"rev,omitempty"`
}

// instanceIDLen is the length of an instance name: 12 random bytes in
// base64url (randomID).
const instanceIDLen = 16

// newRequestID returns the wire id of a server-to-client request of s and
// the key its answer is awaited under.
func (h *adapter) newRequestID(s *session) (mcp.ID, string) {
	n := h.nextID.Add(1)
	if !h.shared || !s.http {
		id := mcp.IntID(n)
		return id, id.String()
	}
	key := h.instance + "." + strconv.FormatInt(n, 10)
	return mcp.StringID(key), key
}

// replyTarget reads the id of a client's answer: the key it is awaited
// under and the instance holding the call. ok is false for an id that no
// instance of a shared store made.
func (h *adapter) replyTarget(id mcp.ID) (key, instance string, ok bool) {
	if !h.shared {
		return id.String(), h.instance, true
	}
	raw := id.Raw()
	if len(raw) == 0 || raw[0] != '"' || len(raw) > 64 {
		return "", "", false
	}
	// A variable of its own: the named result, escaping to Unmarshal, was
	// allocated on every call, the unshared store's too (issue 23).
	var k string
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", "", false
	}
	key = k
	inst, n, found := strings.Cut(key, ".")
	if !found || len(inst) != instanceIDLen || !base64URL(inst) {
		return "", "", false
	}
	if _, err := strconv.ParseUint(n, 10, 63); err != nil {
		return "", "", false
	}
	return key, inst, true
}

// clientNotification handles a client notification POSTed to session sid.
func (h *adapter) clientNotification(sid string, msg *rpcwire.Message) {
	id, reason, ok := parseCancel(msg)
	if !ok {
		return
	}
	if s := h.liveSession(sid); s != nil && s.cancelRequest(id, reason) {
		return
	}
	h.broadcast(&fleetMessage{Kind: kindCancel, Session: sid, ID: id, Reason: reason})
	var rid mcp.ID
	if rid.UnmarshalJSON([]byte(id)) == nil {
		h.cancelParked(sid, rid) // a call that waits as its record, run by no instance
	}
}

// sendToStream sends a session message of s on its GET stream: here if
// this instance holds it, else on the instance the record names.
func (h *adapter) sendToStream(s *session, msg []byte) {
	ctx, cancel := context.WithTimeout(h.life, storeTimeout)
	defer cancel()
	rec, err := h.store.Get(ctx, s.id)
	switch {
	case err != nil || rec.Stream == "":
		return // no stream: dropped, as the specification allows
	case rec.Stream == h.instance:
		s.sendLocal(msg)
	default:
		h.send(rec.Stream, &fleetMessage{Kind: kindNotify, Session: s.id, Body: msg})
	}
}

// claimStream names this instance in s's record as the holder of its GET
// stream, tells the previous holder to let it go, and returns the
// revision of the record that names this instance.
func (h *adapter) claimStream(ctx context.Context, s *session) (int64, error) {
	var prev string
	rec, err := h.store.Update(ctx, s.id, func(r *Record) error {
		prev = r.Stream
		if prev == h.instance {
			return ErrNoUpdate
		}
		r.Stream = h.instance
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.refresh(rec, false)
	if prev != "" && prev != h.instance {
		h.send(prev, &fleetMessage{Kind: kindStream, Session: s.id, Rev: rec.Rev})
	}
	return rec.Rev, nil
}

// releaseStream clears the holder of s's GET stream if it is still this
// instance.
func (h *adapter) releaseStream(s *session) {
	// Not h.life: an adapter that closes still tells the others its
	// streams are gone.
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	_, _ = h.store.Update(ctx, s.id, func(r *Record) error {
		if r.Stream != h.instance {
			return ErrNoUpdate
		}
		r.Stream = ""
		return nil
	})
}

// send sends m to instance, or handles it here when that is this one.
func (h *adapter) send(instance string, m *fleetMessage) {
	if instance == h.instance || !h.shared {
		h.handle(m)
		return
	}
	h.publish(instance, m)
}

// broadcast handles m here and, with a shared store, sends it to every
// other instance.
func (h *adapter) broadcast(m *fleetMessage) {
	h.handle(m)
	if h.shared {
		h.publish("", m)
	}
}

func (h *adapter) publish(instance string, m *fleetMessage) {
	m.From = h.instance
	b, err := json.Marshal(m)
	if err != nil {
		h.d.Logger().Error("legacy sessions: encode a message for another instance", "kind", m.Kind, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(h.life, storeTimeout)
	defer cancel()
	if err := h.store.Publish(ctx, instance, b); err != nil {
		h.d.Logger().Warn("legacy sessions: a message to another instance was not sent", "kind", m.Kind, "err", err)
	}
}

// receiver delivers the other instances' messages until Close, receiving
// again after a pause when the store's transport fails.
func (h *adapter) receiver() {
	defer h.wg.Done()
	for h.life.Err() == nil {
		err := h.store.Receive(h.life, h.instance, h.received)
		if h.life.Err() != nil {
			return
		}
		h.d.Logger().Warn("legacy sessions: receiving from the other instances failed; retrying in a second", "err", err)
		select {
		case <-h.life.Done():
		case <-time.After(time.Second):
		}
	}
}

// maxFleetMessage bounds a message read from the store; a client's answer
// is bounded by the server's request size (4 MiB by default).
const maxFleetMessage = 64 << 20

// received decodes a message from the store and handles it, unless this
// instance sent it.
func (h *adapter) received(b []byte) {
	if len(b) > maxFleetMessage {
		return
	}
	var m fleetMessage
	if err := json.Unmarshal(b, &m); err != nil {
		h.d.Logger().Warn("legacy sessions: an unreadable message from another instance", "err", err)
		return
	}
	if m.From == h.instance {
		return
	}
	h.handle(&m)
}

// handle acts on a message for a session in use here; it never blocks.
func (h *adapter) handle(m *fleetMessage) {
	if m.Kind == kindClosed {
		h.ended(m.Session, errDeleted)
		return
	}
	if m.Kind == kindReply && h.callStore != nil {
		if key, call, _, ok := parseQuestionID(mcp.StringID(m.ID)); ok && !h.waitsHere(m.Session, key) {
			// An answer to a call that asked here and has parked since:
			// it goes on here, if it can.
			h.calls.Add(1)
			go func() {
				defer h.calls.Add(-1)
				h.answered(h.life, m.Session, call)
			}()
			return
		}
	}
	s := h.liveSession(m.Session)
	if s == nil {
		return
	}
	switch m.Kind {
	case kindReply:
		if len(m.Result) > 0 || m.Error != nil {
			s.deliverReply(m.ID, m.Result, m.Error) // from an instance of an earlier release
		} else {
			h.wakeAnswers() // the answer is kept in the store
		}
	case kindCancel:
		s.cancelRequest(m.ID, m.Reason)
	case kindNotify:
		if len(m.Body) > 0 {
			s.sendLocal(m.Body)
		}
	case kindStream:
		s.stopGET(m.Rev, m.From)
	case kindChanged:
		if m.Record != nil && m.Record.ID == s.id {
			s.refresh(m.Record, false)
		}
	}
}

// liveSession returns the session sid if it is in use here.
func (h *adapter) liveSession(sid string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.live[sid]
}

// acquire returns the live part of rec's session, made if this instance
// holds none, and counts it in use until release. use says whether the
// acquisition is a use of the session (not a ping): while one lasts, the
// keeper touches the session.
func (h *adapter) acquire(rec *Record, use bool) *session {
	h.mu.Lock()
	s := h.live[rec.ID]
	added := s == nil
	if added {
		s = sessionFromRecord(h, rec)
		h.live[rec.ID] = s
	}
	s.refs++
	if use {
		s.uses++
	}
	h.mu.Unlock()
	if added {
		h.d.Measure(context.Background(), era.MeasureSessions, 1)
	}
	s.refresh(rec, use)
	return s
}

// release ends an acquisition. When the last use ends after the session
// was last touched here long enough ago, it is touched again, so that its
// idle time starts when the use ended; when the last acquisition ends,
// this instance forgets the session (its record stays in the store).
func (h *adapter) release(s *session, use bool) {
	h.releaseBefore(s, use, nil)
}

// releaseBefore is release that calls beforeTouch (if not nil) before it
// touches the session in the store.
func (h *adapter) releaseBefore(s *session, use bool, beforeTouch func()) {
	h.mu.Lock()
	s.refs--
	if use {
		s.uses--
	}
	lastUse, gone := use && s.uses == 0, s.refs == 0
	dropped := gone && h.live[s.id] == s
	if dropped {
		delete(h.live, s.id)
	}
	h.mu.Unlock()
	if dropped {
		h.d.Measure(context.Background(), era.MeasureSessions, -1)
	}
	if lastUse {
		s.mu.Lock()
		stale := h.now().Sub(s.touched) >= h.keep/2
		s.mu.Unlock()
		if stale {
			if beforeTouch != nil {
				beforeTouch()
			}
			h.touch(s)
		}
	}
	if gone {
		s.mu.Lock()
		s.shut(nil)
		s.mu.Unlock()
	}
}

// ended closes session sid here, if it is in use here: its calls are
// cancelled with cause and its GET stream ends.
func (h *adapter) ended(sid string, cause error) {
	h.mu.Lock()
	s := h.live[sid]
	if s != nil {
		delete(h.live, sid) // a later acquisition starts afresh
	}
	h.mu.Unlock()
	if s != nil {
		h.d.Measure(context.Background(), era.MeasureSessions, -1)
		s.close(cause)
	}
}

// touch records a use of s, refreshes it from its record, and closes it
// when the store no longer has it.
func (h *adapter) touch(s *session) {
	ctx, cancel := context.WithTimeout(h.life, storeTimeout)
	defer cancel()
	rec, err := h.store.Touch(ctx, s.id, h.opts.SessionIdle)
	switch {
	case errors.Is(err, ErrNotFound):
		h.ended(s.id, errExpired)
	case err != nil:
		if h.life.Err() == nil {
			h.d.Logger().Warn("legacy sessions: could not record the use of a session", "session", s.id, "err", err)
		}
	default:
		s.refresh(rec, true)
		s.stopGET(rec.Rev, rec.Stream) // if another instance claimed the stream since
	}
}

// keeper touches every session in use here once per keep period, until
// Close: a session never goes idle while a call of it runs or its GET
// stream is open, and the store's own expiry needs no sweeper.
func (h *adapter) keeper() {
	defer h.wg.Done()
	t := time.NewTicker(h.keep)
	defer t.Stop()
	for {
		select {
		case <-h.life.Done():
			return
		case <-t.C:
		}
		h.pruneBuckets()
		h.mu.Lock()
		var inUse []*session
		for _, s := range h.live {
			if s.uses > 0 {
				inUse = append(inUse, s)
			}
		}
		h.mu.Unlock()
		for _, s := range inUse {
			if h.life.Err() != nil {
				return
			}
			h.touch(s)
		}
	}
}
