package legacy

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/sse"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// Waiting is data.
//
// A call of an HTTP session whose question is not answered within
// Options.HoldFor does not keep its handler waiting. The call parks: what
// another run of its handler needs (the request, the answers so far by
// question position, the open question's keys, the progress sent) is
// written to the session store as the call's record, with no runner; the
// question is already on the call's stream in the event store; the
// blocking call returns an error wrapping mrtr.ErrInputRequired and the
// handler returns (what it returns then is dropped). A 2025-11-25
// client's stream is ended with a retry field (SSE polling), so no
// connection is held either; it resumes with GET and Last-Event-ID, on
// any instance.
//
// The answer, POSTed to any instance, is kept in the store (acknowledged
// means kept), and the instance that finds every open question of the
// record answered claims it (a compare-and-set of its runner) and runs the
// handler again from the top, with the recorded answers: each question
// asked again at the same position with the same requests gets its
// answer, and the next question or the response goes to the call's
// stream in the event store, where the client reads it. While a run holds
// the call (resident or running), the record names its instance; a
// client whose resumed stream finds that instance dead (no heartbeat)
// takes the call over on its own instance and runs it again. A handler
// that must not run twice says so (server.RunsOnce) and waits in place.
// With a shared store the record is written when the question is asked,
// so a crash loses nothing; with the memory store (one process) only when
// the call parks.

// defaultHoldFor is Options.HoldFor's default.
const defaultHoldFor = 2 * time.Second

// maxCallRuns bounds the runs of a call that were begun after the run
// before was lost with its instance.
const maxCallRuns = 4

// maxWaitRecord bounds a call's record: a call whose record would be
// larger (big arguments, big answers) waits in place.
const maxWaitRecord = 256 << 10

// callStore is what a Store offers, besides the Store interface, to keep
// the calls that wait for their clients as records. Both of Baton's
// stores have it; with a Store that has not, calls wait in place.
type callStore interface {
	// SaveCall stores call as the record of the waiting call key of
	// session sid, run by runner ("" for none), for ttl.
	SaveCall(ctx context.Context, sid, key string, call []byte, runner string, ttl time.Duration) error
	// LoadCall returns the record and its runner, or ErrNotFound.
	LoadCall(ctx context.Context, sid, key string) (call []byte, runner string, err error)
	// ClaimCall sets the runner to to if it is from, atomically; else (or
	// with no record) it returns ErrNotWaiting.
	ClaimCall(ctx context.Context, sid, key, from, to string) error
	// DropCall deletes the record.
	DropCall(ctx context.Context, sid, key string) error
}

// waitRecord is a call's record in the store.
type waitRecord struct {
	ID       json.RawMessage    `json:"id"`
	Method   string             `json:"method"`
	Params   json.RawMessage    `json:"params,omitempty"`
	Stream   string             `json:"stream"`
	Asked    []recordedBatch    `json:"asked,omitempty"` // by question position
	Open     *openBatch         `json:"open,omitempty"`  // the questions waiting for answers
	Progress map[string]float64 `json:"progress,omitempty"`
	Deadline time.Time          `json:"deadline"` // when the open questions time out
	Timeout  time.Duration      `json:"timeout"`
	Runs     int                `json:"runs"` // runs lost with their instance
}

// recordedBatch is one answered blocking call: the digest of its requests
// and the answers. A zero one (a call that failed) replays nothing.
type recordedBatch struct {
	Sum     []byte            `json:"sum,omitempty"`
	Answers []json.RawMessage `json:"answers,omitempty"`
}

// openBatch is the blocking call a parked call waits on.
type openBatch struct {
	Pos     int                        `json:"pos"`
	Sum     []byte                     `json:"sum"`
	Keys    []string                   `json:"keys"`
	Methods []string                   `json:"methods"`
	Answers map[string]json.RawMessage `json:"answers,omitempty"` // keptAnswer, by key: those that came before the park
}

// waitingCall is a peer's part of a call that may park.
type waitingCall struct {
	msg    *rpcwire.Message
	params json.RawMessage // of the current run
	key    string          // the record's key (callKey), once computed
	stream *keptStream
	saved  bool // a record is in the store
	parked bool // the current run ended as the call parked
	open   int  // blocking calls in progress
	runs   int  // waitRecord.Runs
	keys   []string
	sums   map[int][32]byte // digests of the batches replayed from a record
	errs   map[int]error    // failures replayed from a record, by position
}

// callKey names the record of call id of session sid: a digest, so that a
// cancellation naming the request finds it, in the form of an instance
// name (16 base64url characters).
func callKey(sid string, id mcp.ID) string {
	h := sha256.New()
	h.Write([]byte(sid))
	h.Write([]byte{0})
	h.Write(id.Raw())
	var sum [32]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:12])
}

// questionID returns a new wire id of a question of the call key asked by
// instance, and the key its answer is kept under:
// "<key>:<instance>.<n>", n random (any instance may ask the call's next
// question). The instance is the one to wake when the answer is kept.
func questionID(key, instance string) (mcp.ID, string) {
	k := key + ":" + instance + "." + strconv.FormatUint(rand.Uint64()>>1, 10)
	return mcp.StringID(k), k
}

// parseQuestionID reads the id of a client's answer to a question of a
// call that may park: the key of the answer, of the call's record, and
// the instance that asked.
func parseQuestionID(id mcp.ID) (key, call, instance string, ok bool) {
	raw := id.Raw()
	if len(raw) < 2*instanceIDLen+5 || len(raw) > 72 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", "", "", false
	}
	key = string(raw[1 : len(raw)-1])
	call, rest, found := strings.Cut(key, ":")
	if !found || len(call) != instanceIDLen || !base64URL(call) {
		return "", "", "", false
	}
	instance, n, found := strings.Cut(rest, ".")
	if !found || len(instance) != instanceIDLen || !base64URL(instance) {
		return "", "", "", false
	}
	if _, err := strconv.ParseUint(n, 10, 63); err != nil {
		return "", "", "", false
	}
	return key, call, instance, true
}

// batchSum is the digest of a blocking call's requests (params encoded).
func batchSum(reqs []outgoing) [32]byte {
	h := sha256.New()
	for i := range reqs {
		h.Write([]byte(reqs[i].method))
		h.Write([]byte{0})
		h.Write(reqs[i].params)
		h.Write([]byte{0})
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// errParked is what a blocking call returns once its call parked.
var errParked = fmt.Errorf("%w; the handler runs again, from the top, once answered: return: %w", era.ErrParked, mrtr.ErrInputRequired)

// waitFor returns the peer's waitingCall for a blocking call that may
// park, or nil: the call waits in place (stdio, RunsOnce, a store
// without records, a stream that is not kept, a concurrent blocking call).
func (p *peer) waitFor(stay bool) *waitingCall {
	wc := p.wc
	if wc == nil || stay || wc.open > 0 {
		return nil
	}
	if wc.key == "" {
		wc.key = callKey(p.s.id, wc.msg.ID)
	}
	return wc
}

// record encodes the call's record: the answered batches before pos, and
// open, the batch at pos, with the answers it has.
func (p *peer) record(wc *waitingCall, pos int, open []outgoing, answers []json.RawMessage, deadline time.Time, timeout time.Duration) ([]byte, error) {
	wc.stream.mu.Lock()
	stream := wc.stream.key
	wc.stream.mu.Unlock()
	if stream == "" {
		return nil, errors.New("the call's stream is not kept, so a client could not resume it")
	}
	rec := waitRecord{ID: wc.msg.ID.Raw(), Method: wc.msg.Method, Params: wc.params, Stream: stream, Deadline: deadline, Timeout: timeout, Runs: wc.runs}
	p.mu.Lock()
	for i := 0; i < pos && i < len(p.asked); i++ {
		b := p.asked[i]
		var rb recordedBatch
		if b.set {
			sum, ok := wc.sums[i]
			if b.reqs != nil {
				sum, ok = batchSum(b.reqs), true
			}
			if ok {
				rb = recordedBatch{Sum: sum[:], Answers: b.answers}
			}
		}
		rec.Asked = append(rec.Asked, rb)
	}
	if len(p.progress) > 0 {
		rec.Progress = make(map[string]float64, len(p.progress))
		for k, v := range p.progress {
			rec.Progress[k] = v
		}
	}
	p.mu.Unlock()
	if open != nil {
		sum := batchSum(open)
		ob := &openBatch{Pos: pos, Sum: sum[:]}
		for i := range open {
			ob.Keys = append(ob.Keys, open[i].wait)
			ob.Methods = append(ob.Methods, open[i].method)
			if open[i].done && answers != nil && answers[open[i].pos] != nil {
				if ob.Answers == nil {
					ob.Answers = make(map[string]json.RawMessage)
				}
				ob.Answers[open[i].wait], _ = json.Marshal(keptAnswer{Result: answers[open[i].pos]})
			}
		}
		rec.Open = ob
	}
	b, err := json.Marshal(&rec)
	if err != nil {
		return nil, fmt.Errorf("encode the call's record: %w", err)
	}
	if len(b) > maxWaitRecord {
		return nil, fmt.Errorf("the call's record is %d bytes, over %d", len(b), maxWaitRecord)
	}
	return b, nil
}

// saveCall writes the call's record, run by runner.
func (h *adapter) saveCall(ctx context.Context, sid string, wc *waitingCall, rec []byte, runner string, ttl time.Duration) error {
	ctx, cancel := h.storeCtx(ctx)
	defer cancel()
	if err := h.callStore.SaveCall(ctx, sid, wc.key, rec, runner, ttl); err != nil {
		return fmt.Errorf("record the waiting call: %w", err)
	}
	wc.saved = true
	return nil
}

// recordTTL is how long a record outlives its open questions' deadline:
// an answer that comes as they time out is still refused cleanly, and a
// client that resumes then learns of the timeout.
const recordTTL = time.Minute

// park ends the wait of the open exchange reqs in place: the call's record
// is written with no runner, the client's stream is ended, and the run
// ends (errParked). done reports instead that every answer was there
// once the waiters were gone, and the claim back succeeded: the run goes
// on with them (or fails with err, a client's error answer among them).
// Neither (a store failure, a stream that cannot be ended) leaves the call
// waiting in place.
func (p *peer) park(wc *waitingCall, pos int, open *openRequests, replies chan reply, answers []json.RawMessage, deadline time.Time, timeout time.Duration, draining bool) (parked, done bool, err error) {
	s, h := p.s, p.s.h
	k := wc.stream
	if !k.canDetach() {
		return false, false, nil
	}
	keys := make([]string, len(open.reqs))
	for i := range open.reqs {
		keys[i] = open.reqs[i].wait
	}
	ctx := context.Background()
	ttl := time.Until(deadline) + recordTTL
	if !h.shared { // a shared store parked them before they were sent
		if err := h.park(ctx, s, keys, time.Until(deadline)); err != nil {
			h.d.Logger().Warn("legacy sessions: a call could not park; it waits in place", "session", s.id, "err", err)
			return false, false, nil
		}
	}
	// The waiters leave; an answer that reached them is kept in the record.
	s.mu.Lock()
	for _, key := range keys {
		s.pending.take(key)
	}
	s.mu.Unlock()
	drainInto(replies, open, answers)
	var rec []byte
	rec, err = p.record(wc, pos, open.reqs, answers, deadline, timeout)
	if err == nil {
		err = h.saveCall(ctx, s.id, wc, rec, "", ttl)
	}
	if err != nil {
		h.d.Logger().Warn("legacy sessions: a call could not park; it waits in place", "session", s.id, "err", err)
		s.mu.Lock()
		for i := range open.reqs {
			if !open.reqs[i].done {
				s.pending.set(open.reqs[i].wait, replies)
			}
		}
		s.mu.Unlock()
		return false, false, nil
	}
	// An answer that came meanwhile went to the store: if they are all
	// there, the run takes the call back and goes on.
	if got, complete := h.openAnswers(ctx, s.id, rec); complete {
		sctx, cancel := h.storeCtx(ctx)
		err := h.callStore.ClaimCall(sctx, s.id, wc.key, "", h.instance)
		cancel()
		if err == nil {
			for i := range open.reqs {
				r := &open.reqs[i]
				if r.done {
					continue
				}
				var a keptAnswer
				if json.Unmarshal(got[r.wait], &a) != nil {
					a.Error = mcp.Errorf(mcp.InternalError, "the kept answer could not be read")
				}
				if a.Error != nil {
					return false, true, &server.ClientError{Method: r.method, Err: a.Error}
				}
				answers[r.pos], r.done = a.Result, true
				open.n--
			}
			if !h.shared { // parked here, above: let go with the call's end
				wc.keys = append(wc.keys, keys...)
			}
			return false, true, nil
		}
	}
	retry := pollRetry
	if draining {
		retry = detachRetry
		k.detach(retry)
	} else {
		k.poll(retry)
	}
	p.mu.Lock()
	wc.parked = true
	p.mu.Unlock()
	return true, false, nil
}

// recordAnswers writes the call's record with the answers of the
// blocking calls before upto, and no open question: the run goes on here.
func (p *peer) recordAnswers(wc *waitingCall, upto int) {
	h := p.s.h
	rec, err := p.record(wc, upto, nil, nil, time.Time{}, 0)
	if err == nil {
		err = h.saveCall(context.Background(), p.s.id, wc, rec, h.instance, h.opts.CallTimeout+recordTTL)
	}
	if err != nil {
		h.d.Logger().Warn("legacy sessions: a call's answers could not be recorded; if this instance dies before the call ends, the call is asked again", "session", p.s.id, "err", err)
	}
}

// drainInto takes the replies that reached an exchange's waiters before
// they left into answers.
func drainInto(replies <-chan reply, open *openRequests, answers []json.RawMessage) {
	for {
		select {
		case rp := <-replies:
			if r := open.take(rp.id); r != nil && rp.err == nil {
				answers[r.pos] = rp.result
			}
		default:
			return
		}
	}
}

// openAnswers returns the answers of a record's open questions, those in
// the record and those kept in the store, and whether every one has its
// answer.
func (h *adapter) openAnswers(ctx context.Context, sid string, rec []byte) (map[string][]byte, bool) {
	var r waitRecord
	if json.Unmarshal(rec, &r) != nil || r.Open == nil {
		return nil, false
	}
	return h.answersOf(ctx, &r)
}

// answersOf is openAnswers for a decoded record.
func (h *adapter) answersOf(ctx context.Context, r *waitRecord) (map[string][]byte, bool) {
	got := make(map[string][]byte, len(r.Open.Keys))
	var missing []string
	for _, k := range r.Open.Keys {
		if a, ok := r.Open.Answers[k]; ok {
			got[k] = a
		} else {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sctx, cancel := h.storeCtx(ctx)
		kept, err := h.store.Answers(sctx, missing)
		cancel()
		if err != nil {
			return got, false
		}
		for k, a := range kept {
			got[k] = a
		}
	}
	return got, len(got) == len(r.Open.Keys)
}

// canDetach reports whether the client's stream of the call can be ended
// for it to resume elsewhere: an event with an id went out on it.
func (k *keptStream) canDetach() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.detached || k.key != "" && !k.failed && k.st.Streaming() && !k.st.Done()
}

// answered is what happens to a call once an answer to one of its
// questions (its record's key call) is kept: the call is resumed here if
// it is parked with all its answers, its runner woken if another instance
// holds it, and taken over if that instance is dead.
func (h *adapter) answered(ctx context.Context, sid, call string) {
	sctx, cancel := h.storeCtx(ctx)
	rec, runner, err := h.callStore.LoadCall(sctx, sid, call)
	cancel()
	switch {
	case err != nil: // ended, or its run holds it here and parks (it reads the answer then)
		return
	case runner == h.instance:
		h.wakeAnswers()
		return
	case runner != "" && h.alive(ctx, runner):
		h.send(runner, &fleetMessage{Kind: kindReply, Session: sid})
		return
	}
	h.takeOver(ctx, sid, call, rec, runner)
}

// waitsHere reports whether a call of session sid waits here for the
// answer kept under key.
func (h *adapter) waitsHere(sid, key string) bool {
	s := h.liveSession(sid)
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending.has(key)
}

// alive reports whether instance beats (a store failure counts as alive:
// the call is not taken from it on a guess).
func (h *adapter) alive(ctx context.Context, instance string) bool {
	actx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	ok, err := h.events.Alive(actx, instance)
	return err != nil || ok
}

// takeOver claims the call from runner ("" for a parked call; else an
// instance that is dead) and runs it here, when it can go on: every open
// question is answered, it has none (its run was lost while running), or
// its questions timed out. It reports whether it did.
func (h *adapter) takeOver(ctx context.Context, sid, call string, recb []byte, runner string) bool {
	var rec waitRecord
	if err := json.Unmarshal(recb, &rec); err != nil {
		h.d.Logger().Warn("legacy sessions: a waiting call's record cannot be read", "session", sid, "err", err)
		return false
	}
	var got map[string][]byte
	if rec.Open != nil && h.now().Before(rec.Deadline) {
		var complete bool
		if got, complete = h.answersOf(ctx, &rec); !complete {
			if runner != "" { // its instance died waiting: the call parks
				sctx, cancel := h.storeCtx(ctx)
				_ = h.callStore.ClaimCall(sctx, sid, call, runner, "")
				cancel()
			}
			return false
		}
	}
	sctx, cancel := h.storeCtx(ctx)
	err := h.callStore.ClaimCall(sctx, sid, call, runner, h.instance)
	cancel()
	if err != nil {
		return false // another instance was first
	}
	if runner != "" && rec.Open == nil {
		rec.Runs++ // a run was lost while it ran
	}
	h.calls.Add(1)
	if h.inline { // serverless: nothing runs after the response
		defer h.calls.Add(-1)
		h.resume(sid, call, &rec, got)
		return true
	}
	go func() {
		defer h.calls.Add(-1)
		h.resume(sid, call, &rec, got)
	}()
	return true
}

// resume runs a call again from its record: its answers replayed, and
// what follows written to its stream in the event store.
func (h *adapter) resume(sid, call string, rec *waitRecord, got map[string][]byte) {
	ctx := context.Background()
	var id mcp.ID
	if err := id.UnmarshalJSON(rec.ID); err != nil {
		h.dropCall(sid, call)
		return
	}
	sctx, cancel := h.storeCtx(ctx)
	srec, err := h.store.Get(sctx, sid)
	cancel()
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			h.dropCall(sid, call)
		}
		return // a store failure: the record stays, claimed by this instance, for a resumed stream to take over
	}
	s := h.acquire(srec, true)
	defer h.release(s, true)
	k := &keptStream{h: h, sid: sid, st: sse.Kept(), meta: StreamMeta{Instance: h.instance, Request: rec.ID}, key: rec.Stream, detached: true}
	msg := &rpcwire.Message{JSONRPC: rpcwire.Version, ID: id, Method: rec.Method, Params: rec.Params}
	p := &peer{s: s, w: k}
	wc := &waitingCall{msg: msg, params: rec.Params, key: call, stream: k, saved: true, runs: rec.Runs}
	p.wc = wc
	p.progress = rec.Progress
	wc.sums = make(map[int][32]byte)
	p.asked = make([]askedBatch, len(rec.Asked))
	for i, b := range rec.Asked {
		if len(b.Sum) == len([32]byte{}) {
			wc.sums[i] = [32]byte(b.Sum)
			p.asked[i] = askedBatch{answers: b.Answers, set: true}
		}
	}
	if o := rec.Open; o != nil && len(o.Sum) == len([32]byte{}) {
		for len(p.asked) <= o.Pos {
			p.asked = append(p.asked, askedBatch{})
		}
		wc.sums[o.Pos] = [32]byte(o.Sum)
		if !h.now().Before(rec.Deadline) && len(got) < len(o.Keys) {
			wc.errs = map[int]error{o.Pos: fmt.Errorf("%s: %w after %v", strings.Join(o.Methods, ", "), server.ErrTimeout, rec.Timeout)}
			p.asked[o.Pos] = askedBatch{set: true}
		} else {
			answers := make([]json.RawMessage, len(o.Keys))
			for i, key := range o.Keys {
				var a keptAnswer
				if json.Unmarshal(got[key], &a) != nil {
					a.Error = mcp.Errorf(mcp.InternalError, "the kept answer could not be read")
				}
				if a.Error != nil {
					wc.errs = map[int]error{o.Pos: &server.ClientError{Method: o.Methods[i], Err: a.Error}}
					break
				}
				answers[i] = a.Result
			}
			p.asked[o.Pos] = askedBatch{answers: answers, set: true}
		}
		wc.keys = append(wc.keys, o.Keys...)
	}
	k.spare = p // session.run takes it as it is (newPeer)
	if rec.Runs >= maxCallRuns {
		finishError(k.finish, id, mcp.Errorf(mcp.InternalError, "%s was not completed: its runs were lost with their server instances %d times; call again", rec.Method, rec.Runs))
		h.endCall(sid, wc)
	} else {
		s.serveRequest(ctx, msg, nil, k, k.finish, func() { k.cancelled(id) }) // drops the record at the end (endCall)
	}
}

// dropCall deletes a call's record, once its response is kept.
func (h *adapter) dropCall(sid, call string) {
	ctx, cancel := context.WithTimeout(context.Background(), unparkTimeout)
	defer cancel()
	if err := h.callStore.DropCall(ctx, sid, call); err != nil && h.life.Err() == nil {
		h.d.Logger().Warn("legacy sessions: could not delete a finished call's record; it expires by itself", "session", sid, "err", err)
	}
}

// endCall is the end of a call that may have parked: its record goes
// once its response is kept (not when it parked: the record is the call),
// and so do the parks of the answers it took from its record.
func (h *adapter) endCall(sid string, wc *waitingCall) {
	if wc == nil || wc.parked {
		return
	}
	if wc.saved {
		h.dropCall(sid, wc.key)
	}
	if len(wc.keys) > 0 {
		h.unpark(wc.keys)
	}
}

// checkParked is a resumed stream's look at the call it waits for, at a
// quiet moment: the call's record, if it has one, says who holds it. It
// takes over a call whose answers are all in but no instance runs it, or
// whose runner is dead, and reports whether the call has a record (the
// stream goes on waiting for its events).
func (h *adapter) checkParked(ctx context.Context, sid string, meta *StreamMeta) bool {
	if h.callStore == nil {
		return false
	}
	var id mcp.ID
	if id.UnmarshalJSON(meta.Request) != nil {
		return false
	}
	call := callKey(sid, id)
	sctx, cancel := h.storeCtx(ctx)
	rec, runner, err := h.callStore.LoadCall(sctx, sid, call)
	cancel()
	if err != nil {
		return false
	}
	if runner == "" || runner != h.instance && !h.alive(ctx, runner) {
		h.takeOver(ctx, sid, call, rec, runner)
	}
	return true
}

// cancelParked cancels the call id of session sid that has a record and
// no run here: its record goes and its stream ends without a response.
func (h *adapter) cancelParked(sid string, id mcp.ID) {
	if h.callStore == nil {
		return
	}
	call := callKey(sid, id)
	ctx, cancel := h.storeCtx(context.Background())
	defer cancel()
	recb, _, err := h.callStore.LoadCall(ctx, sid, call)
	if err != nil {
		return
	}
	var rec waitRecord
	if json.Unmarshal(recb, &rec) != nil {
		return
	}
	if err := h.callStore.DropCall(ctx, sid, call); err != nil {
		return
	}
	if rec.Open != nil {
		_ = h.store.Unpark(ctx, rec.Open.Keys...)
	}
	_ = h.events.EndStream(ctx, sid, rec.Stream)
}

// holdFor is how long a call of s waits in place for an answer before it
// parks: Options.HoldFor for a 2025-11-25 session (whose client polls), and
// until a drain for the older ones, whose clients keep their streams.
func (h *adapter) holdFor(s *session) time.Duration {
	if s.version != "2025-11-25" {
		return -1 // until the drain
	}
	return h.opts.HoldFor
}
