package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// Answers between instances.
//
// A client's answer to a server request is POSTed to any instance. It is
// acknowledged (202) only once it is sure to reach the call waiting for
// it, or to be kept until that call is gone:
//
//   - On the instance holding the call, it is handed to the call.
//   - Elsewhere (a shared store), the store keeps it under the request's
//     key (Store.Answer), which the holding instance wrote when the call
//     parked (Store.Park); then a wake-up with no answer in it is published
//     to the holder. The holder reads the kept answers of its waiting calls
//     (Store.Answers, or a store's TakeAnswers, which lets go of their
//     parks in the same step) on every wake-up and once per answerPoll, so an
//     answer whose wake-up was lost (a dropped subscriber, a reconnect)
//     still arrives, at most answerPoll later.
//
// An answer that names no request waiting for that session (forged,
// duplicated, or late) is refused with 400 and costs one small read; the
// size of an answer (Options.MaxAnswerBytes) and the rate of one
// session's answers on one instance (Options.MaxAnswersPerSecond) are
// bounded, so a flood from one session costs the others nothing.

// answerPoll is how often an instance reads the kept answers of the calls
// waiting on it.
const answerPoll = time.Second

// answerState is the adapter's part of answers between instances.
type answerState struct {
	wake chan struct{} // a kept answer may be waiting (capacity 1)

	mu      sync.Mutex
	buckets map[string]*answerBucket // by session id

	timers timerPool // the timers of the calls waiting for answers (peer.exchange)
}

// timerPool holds the stopped timers of the exchanges that ended, for the
// next ones: a blocking round trip then costs a timer's Reset instead of
// its allocations (three of the round trip's, and 1,300 instructions;
// BenchmarkLegacyElicitInProcess, callgrind, issue 23). A stopped timer's
// channel holds no stale value (Go 1.23), and put drains one that an
// asynchronous timer (GODEBUG=asynctimerchan=1) may have left, so a timer
// from the pool is as good as new. The zero value is ready to use.
type timerPool struct{ p sync.Pool }

// get returns a timer that fires after d.
func (tp *timerPool) get(d time.Duration) *time.Timer {
	if t, _ := tp.p.Get().(*time.Timer); t != nil {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

// put stops t and keeps it for reuse.
func (tp *timerPool) put(t *time.Timer) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	tp.p.Put(t)
}

// answerBucket is one session's token bucket of answers.
type answerBucket struct {
	tokens float64
	last   time.Time
}

// keptAnswer is an answer as the store keeps it.
type keptAnswer struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *mcp.Error      `json:"error,omitempty"`
}

// answerTokens reports whether sid's bucket of unmatched answers holds a
// token, and takes it when take is set. Only answers that matched no
// waiting request (or were too large) spend tokens: an answer the server
// is waiting for is never refused for rate.
func (h *adapter) answerTokens(sid string, take bool) bool {
	rate := h.opts.MaxAnswersPerSecond
	if rate <= 0 {
		return true
	}
	burst := float64(2 * rate)
	now := h.now()
	a := &h.answers
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.buckets[sid]
	if b == nil {
		if !take {
			return true
		}
		b = &answerBucket{tokens: burst, last: now}
		a.buckets[sid] = b
	}
	if dt := now.Sub(b.last); dt > 0 {
		b.tokens = min(burst, b.tokens+dt.Seconds()*float64(rate))
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	if take {
		b.tokens--
	}
	return true
}

// pruneBuckets forgets the buckets that refilled long ago: their
// sessions have not answered for a while. The keeper calls it.
func (h *adapter) pruneBuckets() {
	now := h.now()
	a := &h.answers
	a.mu.Lock()
	defer a.mu.Unlock()
	for sid, b := range a.buckets {
		if now.Sub(b.last) > time.Minute {
			delete(a.buckets, sid)
		}
	}
}

// acceptAnswer takes a client's answer POSTed to session sid, and
// reports whether it was acknowledged; when it was not, it wrote the
// error. The size is checked first; then the answer is matched to the
// request waiting for it (on this instance a map look-up), and only an
// answer that matches nothing spends a token of the session's
// MaxAnswersPerSecond. An answer for a call held by another instance is
// matched by the store, against the record the holder parked; a session
// that spent its tokens on unmatched answers is refused before that
// store operation, so a flood of forged answers costs the store nothing.
func (h *adapter) acceptAnswer(w http.ResponseWriter, r *http.Request, sid string, body []byte, msg *rpcwire.Message) bool {
	if len(body) > h.opts.MaxAnswerBytes {
		h.answerTokens(sid, true)
		writeJSONError(w, http.StatusRequestEntityTooLarge, mcp.ID{}, mcp.Errorf(mcp.InvalidParams,
			"the answer is %d bytes; an answer to a server request may have at most %d (MaxAnswerBytes)", len(body), h.opts.MaxAnswerBytes))
		return false
	}
	if h.callStore != nil {
		if key, call, inst, ok := parseQuestionID(msg.ID); ok {
			return h.acceptCallAnswer(w, r, sid, msg, key, call, inst)
		}
	}
	if !h.shared {
		// Every request was made here (replyTarget): its key is the id's
		// JSON text, looked up as it came, without a string of it.
		if s := h.liveSession(sid); s != nil && s.deliverRaw(msg.ID.Raw(), msg.Result, msg.Error) {
			return true
		}
		return h.unmatchedAnswer(w, r, sid, msg)
	}
	key, inst, ok := h.replyTarget(msg.ID)
	if !ok {
		return h.unmatchedAnswer(w, r, sid, msg)
	}
	if inst == h.instance {
		if s := h.liveSession(sid); s != nil && s.deliverReply(key, msg.Result, msg.Error) {
			return true
		}
		return h.unmatchedAnswer(w, r, sid, msg)
	}
	if !h.answerTokens(sid, false) {
		h.refuseAnswers(w, r)
		return false
	}
	woken, ok := h.keepAnswer(w, r, sid, key, msg, inst)
	if !ok {
		return false
	}
	// Kept: the holder reads it on this wake-up or its next poll.
	if !woken {
		h.send(inst, &fleetMessage{Kind: kindReply, Session: sid, ID: key})
	}
	return true
}

// keepAnswer keeps the client's answer msg under key of session sid, and
// reports whether it did; when it did not, it wrote the error. With wake
// (an instance) and a store that can, the instance is woken in the same
// step of the store (woken); otherwise the caller wakes it if need be.
func (h *adapter) keepAnswer(w http.ResponseWriter, r *http.Request, sid, key string, msg *rpcwire.Message, wake string) (woken, ok bool) {
	kept, err := json.Marshal(keptAnswer{Result: msg.Result, Error: msg.Error})
	var b []byte
	aw, oneStep := h.store.(answerWaker)
	woken = oneStep && h.shared && wake != ""
	if err == nil && woken {
		b, err = json.Marshal(&fleetMessage{Kind: kindReply, Session: sid, ID: key, From: h.instance})
	}
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, mcp.ID{}, mcp.Errorf(mcp.InvalidParams, "the answer cannot be encoded: %v", err))
		return false, false
	}
	ctx, cancel := h.storeCtx(r.Context())
	defer cancel()
	if woken {
		err = aw.AnswerWake(ctx, sid, key, kept, wake, b)
	} else {
		err = h.store.Answer(ctx, sid, key, kept)
	}
	switch {
	case errors.Is(err, ErrNotWaiting):
		h.unmatchedAnswer(w, r, sid, msg)
		return false, false
	case err != nil:
		h.storeFailed(w, mcp.ID{}, "keep an answer", err)
		return false, false
	}
	h.d.Measure(context.Background(), era.MeasureReplySent, 1)
	return woken, true
}

// acceptCallAnswer is acceptAnswer for a question of a call that may
// park (key, of the call whose record is call, asked by instance inst). A
// call waiting for it here takes it at once; otherwise (and always with a
// shared store, so that an acknowledged answer outlives this instance) it
// is kept in the store first, and the call it answers goes on: the
// instance that asked is woken in the same step of the store (it hands
// the answer to the call waiting there, or resumes the call if it has
// parked), or, when that is this one, the call is resumed here. If the
// instance that asked is gone, the client's resumed stream takes the
// call over (checkParked).
func (h *adapter) acceptCallAnswer(w http.ResponseWriter, r *http.Request, sid string, msg *rpcwire.Message, key, call, inst string) bool {
	s := h.liveSession(sid)
	if !h.shared && s != nil && s.deliverReply(key, msg.Result, msg.Error) {
		return true // one process: the waiting call is as durable as the store
	}
	local := false
	if s != nil {
		s.mu.Lock()
		local = s.pending.has(key)
		s.mu.Unlock()
	}
	if !local && !h.answerTokens(sid, false) {
		h.refuseAnswers(w, r)
		return false
	}
	remote := h.shared && inst != h.instance && !local && !h.inline
	wake := ""
	if remote {
		wake = inst
	}
	woken, ok := h.keepAnswer(w, r, sid, key, msg, wake)
	if !ok {
		return false
	}
	switch {
	case remote && !woken:
		h.send(inst, &fleetMessage{Kind: kindReply, Session: sid, ID: key})
	case remote:
	case s != nil && s.deliverReply(key, msg.Result, msg.Error):
	default:
		h.answered(context.WithoutCancel(r.Context()), sid, call)
	}
	return true
}

// unmatchedAnswer refuses an answer that no request of session sid waits
// for (never sent, already answered, or its call ended): with 400 while
// the session has tokens of MaxAnswersPerSecond left, spending one, and
// with 429 once it spent them all.
func (h *adapter) unmatchedAnswer(w http.ResponseWriter, r *http.Request, sid string, msg *rpcwire.Message) bool {
	if !h.answerTokens(sid, true) {
		h.refuseAnswers(w, r)
		return false
	}
	writeJSONError(w, http.StatusBadRequest, mcp.ID{}, mcp.Errorf(mcp.InvalidParams,
		"no request of this session waits for an answer with id %s: never sent, already answered, or its call ended", clip.String(msg.ID.String())))
	return false
}

// refuseAnswers refuses an answer of a session that spent its
// MaxAnswersPerSecond on unmatched answers.
func (h *adapter) refuseAnswers(w http.ResponseWriter, r *http.Request) {
	h.refuse(r.Context(), w, http.StatusTooManyRequests, mcp.ID{}, mcp.Errorf(mcp.InvalidRequest,
		"too many unmatched answers from this session: at most %d a second (MaxAnswersPerSecond)", h.opts.MaxAnswersPerSecond), "legacy.Options.MaxAnswersPerSecond", time.Second)
}

// wakeAnswers has the poller read the kept answers now.
func (h *adapter) wakeAnswers() {
	select {
	case h.answers.wake <- struct{}{}:
	default:
	}
}

// parked reports whether s's server requests are parked in the store.
func (h *adapter) parked(s *session) bool { return h.shared && s.http }

// park records s's requests under keys in the store, so that an answer
// POSTed to another instance is kept for them.
func (h *adapter) park(ctx context.Context, s *session, keys []string, timeout time.Duration) error {
	ctx, cancel := h.storeCtx(ctx)
	defer cancel()
	for _, k := range keys {
		// The record outlives the wait by a margin: an answer that
		// arrives as the call times out is still refused cleanly.
		if err := h.store.Park(ctx, s.id, k, timeout+time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// unpark forgets keys in the store: the call that waited for them has
// ended, so their answers are refused from now on. It waits at most
// unparkTimeout; the records expire by themselves if it fails.
func (h *adapter) unpark(keys []string) {
	ctx, cancel := context.WithTimeout(context.Background(), unparkTimeout)
	defer cancel()
	if err := h.store.Unpark(ctx, keys...); err != nil && h.life.Err() == nil {
		h.d.Logger().Warn("legacy sessions: could not forget parked requests; they expire by themselves", "err", err)
	}
}

// unparkTimeout bounds the wait of a call's end for the store.
const unparkTimeout = 2 * time.Second

// answerPoller delivers the answers kept for the calls waiting here, on a
// wake-up and every answerPoll, until Close.
func (h *adapter) answerPoller() {
	defer h.wg.Done()
	t := time.NewTicker(answerPoll)
	defer t.Stop()
	for {
		select {
		case <-h.life.Done():
			return
		case <-h.answers.wake:
		case <-t.C:
		}
		h.pollAnswers()
	}
}

// pollAnswers reads the kept answers of every call waiting here, in one
// store call, and hands each to its call.
func (h *adapter) pollAnswers() {
	waiting := make(map[string]*session)
	h.mu.Lock()
	live := make([]*session, 0, len(h.live))
	for _, s := range h.live {
		live = append(live, s)
	}
	h.mu.Unlock()
	var ks []string
	for _, s := range live {
		s.mu.Lock()
		ks = s.pending.keys(ks[:0])
		s.mu.Unlock()
		for _, k := range ks {
			waiting[k] = s
		}
	}
	if len(waiting) == 0 {
		return
	}
	keys := make([]string, 0, len(waiting))
	for k := range waiting {
		keys = append(keys, k)
	}
	ctx, cancel := context.WithTimeout(h.life, storeTimeout)
	defer cancel()
	var got map[string][]byte
	var err error
	at, take := h.store.(answerTaker)
	if take {
		got, err = at.TakeAnswers(ctx, keys)
	} else {
		got, err = h.store.Answers(ctx, keys)
	}
	if err != nil {
		if h.life.Err() == nil {
			h.d.Logger().Warn("legacy sessions: could not read the answers kept for the calls waiting here; retrying", "calls", len(keys), "err", err)
		}
		return
	}
	for k, b := range got {
		var a keptAnswer
		if err := json.Unmarshal(b, &a); err != nil {
			a = keptAnswer{Error: mcp.Errorf(mcp.InternalError, "the kept answer could not be read")}
		}
		if waiting[k].deliverTo(reply{id: k, result: a.Result, err: a.Error, taken: take}) {
			h.d.Measure(context.Background(), era.MeasureReplyReceived, 1)
		}
	}
}
