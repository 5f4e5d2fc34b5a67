package legacy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// peer is a call's way to its client: it sends server-to-client requests
// and notifications on the call's own stream (SEP-2260) and waits for the
// answers, which arrive through the session.
//
// One peer serves every run of the call's handler (the bridge runs an MRTR
// handler again after each answer), so it remembers what went out in the
// earlier runs and sends each notification, and asks each blocking
// question, once per request; see the package documentation.
type peer struct {
	s *session
	w wire

	mu       sync.Mutex         // held while a notification is admitted and sent
	progress map[string]float64 // progress token (JSON text) → last value sent
	sent     map[digest]int     // notification → most copies sent in one run
	seen     map[digest]int     // notification → copies in the current run
	asked    []askedBatch       // by blocking call position: its answers
	pos      int                // next blocking call position in this run
	wc       *waitingCall       // a call of an HTTP session that may park (waiting.go); nil otherwise
}

// digest is a SHA-256 of a notification.
type digest [32]byte

// askedBatch is a blocking call already answered in an earlier run.
type askedBatch struct {
	reqs    []outgoing // its requests, compared with a re-run's (sameRequests)
	answers []json.RawMessage
	set     bool // answered (a position whose call failed has none)
}

// sameRequests reports whether two blocking calls ask the same: the same
// methods with the same params, in the same order. They are compared as
// encoded, not by a digest: a SHA-256 of every call's requests cost 4,800
// instructions of the blocking elicitation round trip's 118,000
// (BenchmarkLegacyElicitInProcess, callgrind, issue 23), for the re-runs
// only, and the encoded requests are made for the wire anyway.
func sameRequests(a, b []outgoing) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].method != b[i].method || !bytes.Equal(a[i].params, b[i].params) {
			return false
		}
	}
	return true
}

// newRun tells the peer that the handler starts again from the top.
func (p *peer) newRun() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.seen)
	p.pos = 0
}

// maxRemembered bounds the memory of one request's peer: the progress
// tokens and the distinct notifications it records. Beyond it a new token
// or notification is sent unrecorded (and would be sent again by a
// re-run).
const maxRemembered = 1024

// admit decides whether a notification goes out, and records it if so:
// progress only when its value is greater than the last one sent for its
// token; anything else only when the current run has sent more copies of
// it than any earlier run did (so a replayed notification is dropped and a
// new one, or a new copy of an old one, goes out). Called with p.mu held.
func (p *peer) admit(method string, msg []byte) bool {
	if method == "notifications/progress" {
		var n struct {
			Params struct {
				Token    json.RawMessage `json:"progressToken"`
				Progress *float64        `json:"progress"`
			} `json:"params"`
		}
		if json.Unmarshal(msg, &n) == nil && len(n.Params.Token) > 0 && n.Params.Progress != nil {
			tok := string(n.Params.Token)
			last, known := p.progress[tok]
			if known && *n.Params.Progress <= last {
				return false
			}
			if !known && len(p.progress) >= maxRemembered {
				return true
			}
			if p.progress == nil {
				p.progress = make(map[string]float64)
			}
			p.progress[tok] = *n.Params.Progress
			return true
		}
	}
	if p.sent == nil {
		p.sent, p.seen = make(map[digest]int), make(map[digest]int)
	}
	d := digest(sha256.Sum256(msg))
	if _, known := p.sent[d]; !known && len(p.sent) >= maxRemembered {
		return true
	}
	p.seen[d]++ // every key of seen is a key of sent
	if p.seen[d] <= p.sent[d] {
		return false
	}
	p.sent[d] = p.seen[d]
	return true
}

// Notify sends a notification for the call, unless an earlier run of the
// call's handler sent it already (see admit); once the call's stream has
// closed it goes to the session stream instead.
func (p *peer) Notify(ctx context.Context, method string, params any) error {
	msg, err := rpcwire.EncodeNotification(method, params)
	if err != nil {
		return err
	}
	// Admitting and sending under one lock keeps the wire in the order of
	// admission: progress sent from two goroutines never goes back.
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wc != nil && p.wc.parked {
		return nil // the run is over: the call's next run sends what follows
	}
	if !p.admit(method, msg) {
		return nil
	}
	if err := p.w.send(msg); err != nil {
		if method == "notifications/progress" || method == "notifications/message" {
			return err // these belong to the call only
		}
		p.s.sendSession(msg)
	}
	return nil
}

// Request implements server.Peer. A blocking call that an earlier run of
// the call's handler already asked, at the same position and with the same
// questions, returns the answers given then instead of asking again.
func (p *peer) Request(ctx context.Context, reqs []era.PeerRequest, timeout time.Duration, stay bool) ([]json.RawMessage, error) {
	out, answers, first := newExchange(len(reqs))
	for i, r := range reqs {
		out[i] = outgoing{pos: i, method: r.Method}
		if q, ok := r.Params.(*elicit.Request); ok && q != nil {
			out[i].q = q // encoded below or by exchange (see outgoing.q)
		} else if r.Params != nil {
			b, err := json.Marshal(r.Params)
			if err != nil {
				return nil, fmt.Errorf("encode %s params: %w", r.Method, err)
			}
			out[i].params = b
		}
	}
	p.mu.Lock()
	pos := p.pos
	p.pos++
	var prev askedBatch
	if pos < len(p.asked) {
		prev = p.asked[pos]
	}
	p.mu.Unlock()
	if prev.set {
		// A re-run asks at a position asked before: compare what it asks.
		for i := range out {
			out[i].encodeParams()
		}
		if prev.reqs != nil && sameRequests(prev.reqs, out) {
			return slices.Clone(prev.answers), nil
		}
		if wc := p.wc; prev.reqs == nil && wc != nil { // replayed from the call's record
			if sum, ok := wc.sums[pos]; ok && sum == batchSum(out) {
				if err := wc.errs[pos]; err != nil {
					return nil, err
				}
				return slices.Clone(prev.answers), nil
			}
		}
	}
	p.mu.Lock()
	wc := p.waitFor(stay)
	if wc != nil {
		wc.open++
	}
	p.mu.Unlock()
	err := p.exchange(ctx, out, answers, timeout, wc, pos)
	if wc != nil {
		p.mu.Lock()
		wc.open--
		p.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	// The answers kept for a re-run are a copy in the second half of
	// answers (one allocation, not two); the caller's half is cut to its
	// length, so that an append to it cannot reach the copy.
	res, kept := answers[:len(out):len(out)], answers[len(out):]
	copy(kept, res)
	p.mu.Lock()
	if p.asked == nil && pos == 0 && first != nil {
		p.asked = first[:0]
	}
	for len(p.asked) <= pos {
		p.asked = append(p.asked, askedBatch{})
	}
	p.asked[pos] = askedBatch{reqs: out, answers: kept, set: true}
	p.mu.Unlock()
	if wc != nil && wc.saved && p.s.h.shared {
		// The answers go into the record before the run goes on: if this
		// instance dies now, another runs the call again with them.
		p.recordAnswers(wc, pos+1)
	}
	return res, nil
}

// newExchange returns the requests of an exchange of n, the slice of
// twice n its answers go to (exchange, Request) and, for an exchange of
// one, room for the peer's first askedBatch. An exchange of one, the
// usual blocking call, gets the three in one allocation: they were three
// of the blocking elicitation round trip's (BenchmarkLegacyElicitInProcess,
// issue 23). All three live as long as the peer remembers the exchange.
func newExchange(n int) (out []outgoing, answers []json.RawMessage, first *[1]askedBatch) {
	if n != 1 {
		return make([]outgoing, n), make([]json.RawMessage, 2*n), nil
	}
	x := &struct {
		out     [1]outgoing
		answers [2]json.RawMessage
		asked   [1]askedBatch
	}{}
	return x.out[:], x.answers[:], &x.asked
}

// outgoing is one server-to-client request of an exchange.
type outgoing struct {
	pos    int // its place in the exchange (and its answer's)
	method string
	params json.RawMessage
	// q is the question of an elicitation/create whose params are not
	// encoded yet: exchange writes them inside the request's message
	// (appendQuestion) and sets params to them there.
	q    *elicit.Request
	id   mcp.ID // the wire id, set when sent
	wait string // the key its answer is awaited under
	done bool   // answered (or its reply drained): no longer open
}

// encodeParams sets o.params from its question, if not set yet. A
// question encodes itself: AppendJSON writes what json.Marshal would
// (TestElicitParamsEncoding), without its reflection and its compaction
// of the MarshalJSON output, which were 14,000 instructions of the
// blocking elicitation round trip's 118,000
// (BenchmarkLegacyElicitInProcess, callgrind, issue 23).
func (o *outgoing) encodeParams() {
	if o.q != nil && o.params == nil {
		o.params = o.q.AppendJSON(make([]byte, 0, 256))
	}
}

// openRequests are the requests of an exchange not answered yet. They are
// found by a search of the exchange's requests, not in a map: an exchange
// asks one question or a few, and the map was an allocation and 1,700
// instructions of every blocking round trip (BenchmarkLegacyElicitInProcess,
// callgrind, issue 23).
type openRequests struct {
	reqs []outgoing
	n    int // the requests not done
}

// take marks the open request awaited under key done and returns it, or
// nil when none is open under key.
func (o *openRequests) take(key string) *outgoing {
	for i := range o.reqs {
		if r := &o.reqs[i]; !r.done && r.wait == key {
			r.done = true
			o.n--
			return r
		}
	}
	return nil
}

func randomID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// CloseStream ends the call's stream before its response (see
// server.Call.CloseStream): only for a 2025-11-25 session's call over
// HTTP, whose client resumes with Last-Event-ID (SEP-1699).
func (p *peer) CloseStream() bool {
	k, ok := p.w.(*keptStream)
	return ok && p.s.version == "2025-11-25" && k.poll(pollRetry)
}

// exchange sends the requests on the call's stream and waits until every
// one is answered; it puts the answers in answers, in the order of reqs
// (answers is twice as long: the second half stays zero, room for
// Request's copy of them). It gives
// up when the timeout (0: the handler's default) passes, the call's
// context ends, or the session closes; outstanding
// requests are then cancelled with the client. A client error answer ends
// the exchange with a *server.ClientError.
func (p *peer) exchange(ctx context.Context, reqs []outgoing, answers []json.RawMessage, timeout time.Duration, wc *waitingCall, pos int) error {
	s := p.s
	if timeout <= 0 {
		timeout = s.h.opts.CallTimeout
	}
	replies := make(chan reply, len(reqs))
	open := &openRequests{reqs: reqs, n: len(reqs)}
	s.mu.Lock()
	for i := range reqs {
		if wc != nil {
			reqs[i].id, reqs[i].wait = questionID(wc.key, s.h.instance)
		} else {
			reqs[i].id, reqs[i].wait = s.h.newRequestID(s)
		}
		s.pending.set(reqs[i].wait, replies)
	}
	s.mu.Unlock()
	// Whatever happens, no waiter stays registered.
	defer func() {
		s.mu.Lock()
		for i := range reqs {
			s.pending.take(reqs[i].wait)
		}
		s.mu.Unlock()
	}()
	var taken map[string]bool // answers taken from a store that let go of their parks
	if s.h.parked(s) {
		// Parked in the store before the client can see them: an answer
		// POSTed to another instance is kept for this call.
		keys := make([]string, len(reqs))
		for i := range reqs {
			keys[i] = reqs[i].wait
		}
		if err := s.h.park(ctx, s, keys, timeout); err != nil {
			// Forget what was parked before the failure, off the call's
			// time: the store is failing, and the call answers now.
			go s.h.unpark(keys)
			return fmt.Errorf("record the requests for their answers: %w", err)
		}
		defer func() {
			if wc != nil && wc.parked {
				return // the parks stay: the answers are kept for the call's next run
			}
			if keys = slices.DeleteFunc(keys, func(k string) bool { return taken[k] }); len(keys) > 0 {
				s.h.unpark(keys)
			}
		}()
	}
	var one [1][]byte
	msgs := one[:0]
	if len(reqs) > 1 {
		msgs = make([][]byte, 0, len(reqs))
	}
	for i := range reqs {
		r := &reqs[i]
		// A request without params (roots/list) carries "params":{}: never
		// null, which JSON-RPC forbids, and not absent, which some clients
		// (the official go-sdk v1.8.0) fail to decode.
		var (
			msg []byte
			err error
		)
		if r.params == nil && r.q != nil && plainMethod(r.method) {
			msg = r.appendQuestion(make([]byte, 0, 320+len(r.method)+len(r.id.Raw())))
		} else {
			r.encodeParams()
			msg, err = appendRequest(make([]byte, 0, len(r.params)+len(r.method)+len(r.id.Raw())+48), r.id, r.method, r.params)
		}
		if err != nil {
			return fmt.Errorf("encode %s: %w", r.method, err)
		}
		msgs = append(msgs, msg)
	}
	deadline := time.Now().Add(timeout)
	for i, msg := range msgs {
		if err := p.w.send(msg); err != nil {
			p.cancelOutstanding(open, "the request could not be sent")
			return fmt.Errorf("send %s to the client: %w", reqs[i].method, err)
		}
	}
	if wc != nil && s.h.shared {
		// The record once the question is kept on the call's stream (it
		// names the stream): if this instance dies while the person
		// thinks, another has all it needs. (Dying in the one store round
		// trip between the two loses the call, as before this record: a
		// client that resumes is told.)
		rec, err := p.record(wc, pos, reqs, nil, deadline, timeout)
		if err == nil {
			err = s.h.saveCall(ctx, s.id, wc, rec, s.h.instance, timeout+recordTTL)
		}
		if err != nil {
			s.h.d.Logger().Warn("legacy sessions: a call's question could not be recorded; it waits in place", "session", s.id, "err", err)
			wc = nil
		}
	}
	return p.await(ctx, open, replies, answers, timeout, &taken, wc, pos, deadline)
}

// await waits for the answers to the open requests of an exchange (see
// exchange), which arrive on replies, and puts them in answers; taken
// records the ones taken from a store that let go of their parks. It is
// exchange's wait, in a function of its own so that each of the two has
// few enough defers and returns for the compiler to open-code the defers
// (together they took deferprocStack and deferreturn, about 600
// instructions of every blocking round trip; issue 23).
func (p *peer) await(ctx context.Context, open *openRequests, replies chan reply, answers []json.RawMessage, timeout time.Duration, taken *map[string]bool, wc *waitingCall, pos int, deadline time.Time) error {
	s := p.s
	// One timer serves the keep-alives, the end of the resident window
	// (holdAt, for a call that may park) and the timeout: it fires at
	// whichever comes first.
	start := time.Now()
	nextBeat := start.Add(s.h.opts.KeepAlive)
	first := min(timeout, s.h.opts.KeepAlive)
	var (
		holdAt  time.Time
		parkNow <-chan struct{}
	)
	if wc != nil {
		if hold := s.h.holdFor(s); hold >= 0 {
			holdAt = start.Add(hold)
			first = min(first, hold)
		}
		parkNow = s.h.parkNow
	}
	timer := s.h.answers.timers.get(first)
	defer s.h.answers.timers.put(timer)
	for open.n > 0 {
		select {
		case <-parkNow: // the instance drains: the call parks at once
			parkNow, holdAt = nil, time.Time{}
			if parked, done, err := p.park(wc, pos, open, replies, answers, deadline, timeout, true); parked {
				return errParked
			} else if done {
				if err != nil {
					p.cancelOutstanding(open, "another request of the same call failed")
				}
				return err
			}
		case rp := <-replies:
			r := open.take(rp.id)
			if r == nil {
				continue
			}
			if rp.taken {
				if *taken == nil {
					*taken = make(map[string]bool, len(open.reqs))
				}
				(*taken)[rp.id] = true
			}
			if rp.err != nil {
				p.cancelOutstanding(open, "another request of the same call failed")
				return &server.ClientError{Method: r.method, Err: rp.err}
			}
			answers[r.pos] = rp.result
		case now := <-timer.C:
			if !holdAt.IsZero() && !now.Before(holdAt) && now.Before(deadline) {
				holdAt = time.Time{}
				if parked, done, err := p.park(wc, pos, open, replies, answers, deadline, timeout, false); parked {
					return errParked
				} else if done {
					if err != nil {
						p.cancelOutstanding(open, "another request of the same call failed")
					}
					return err
				}
			}
			if now.Before(deadline) {
				if !now.Before(nextBeat) {
					_ = p.w.keepAlive()
					nextBeat = now.Add(s.h.opts.KeepAlive)
				}
				next := min(deadline.Sub(now), nextBeat.Sub(now))
				if !holdAt.IsZero() {
					next = min(next, holdAt.Sub(now))
				}
				timer.Reset(next)
				continue
			}
			drain(replies, open)
			p.cancelOutstanding(open, fmt.Sprintf("timed out after %v", timeout))
			return fmt.Errorf("%s: %w after %v", methods(open), server.ErrTimeout, timeout)
		case <-ctx.Done():
			// The call's context also ends when the session does (DELETE,
			// expiry, end of input); its cause says which.
			drain(replies, open)
			p.cancelOutstanding(open, "the request that caused it was cancelled")
			return fmt.Errorf("%s: the call was cancelled: %w", methods(open), context.Cause(ctx))
		}
	}
	return nil
}

// appendQuestion appends r's JSON-RPC request to dst, its params written
// by its question inside it, and sets r.params to them (a part of the
// message, cut to its length, which nothing modifies): one buffer, where
// the params were encoded into one and copied into the message's (an
// allocation and about 230 bytes of every blocking round trip, issue 23).
// r.method is plain (plainMethod). The bytes are appendRequest's
// (TestAppendQuestion).
func (r *outgoing) appendQuestion(dst []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, r.id.Raw()...)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, r.method...)
	dst = append(dst, `","params":`...)
	start := len(dst)
	dst = r.q.AppendJSON(dst)
	r.params = dst[start:len(dst):len(dst)]
	return append(dst, '}')
}

// plainMethod reports whether method is written in JSON as it is, with no
// escape.
func plainMethod(method string) bool {
	if method == "elicitation/create" { // the usual one, known plain
		return true
	}
	for i := 0; i < len(method); i++ {
		if c := method[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendRequest appends the JSON-RPC request id, method, params to dst.
// params were encoded by encoding/json (Request), so they are appended as
// they are rather than checked and compacted again; none is "{}".
func appendRequest(dst []byte, id mcp.ID, method string, params json.RawMessage) ([]byte, error) {
	if !plainMethod(method) {
		req := rpcwire.Request{JSONRPC: rpcwire.Version, ID: id, Method: method, Params: json.RawMessage("{}")}
		if len(params) > 0 {
			req.Params = params
		}
		return json.Marshal(req) // a method name that needs escaping: never one of Baton's
	}
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.Raw()...)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, method...)
	dst = append(dst, `","params":`...)
	dst = append(dst, params...)
	return append(dst, '}'), nil
}

// drain takes out of open the requests whose replies have arrived but not
// been read: a client that answered (and was told 202) is not then told
// its request was cancelled.
func drain(replies <-chan reply, open *openRequests) {
	for {
		select {
		case rp := <-replies:
			open.take(rp.id)
		default:
			return
		}
	}
}

// cancelOutstanding tells the client to stop working on the requests not
// answered yet.
func (p *peer) cancelOutstanding(open *openRequests, reason string) {
	for i := range open.reqs {
		r := &open.reqs[i]
		if r.done {
			continue
		}
		msg, err := rpcwire.EncodeNotification("notifications/cancelled", map[string]any{"requestId": r.id, "reason": reason})
		if err == nil && p.w.send(msg) != nil {
			p.s.sendSession(msg)
		}
	}
}

func methods(open *openRequests) string {
	seen := map[string]bool{}
	var out []string
	for i := range open.reqs {
		if r := &open.reqs[i]; !r.done && !seen[r.method] {
			seen[r.method] = true
			out = append(out, r.method)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

var (
	_ era.Peer     = (*peer)(nil)
	_ era.Notifier = (*peer)(nil)
)
