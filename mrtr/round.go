package mrtr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/jsonrpc"
)

// ErrInputRequired is wrapped by the error a Round returns when the handler
// asked a question whose answer is not known yet. A handler passes it up;
// the server turns it into an input_required result.
var ErrInputRequired = errors.New("input required")

// inputRequiredError names the question that was not answered yet.
type inputRequiredError struct{ key string }

func (e *inputRequiredError) Error() string { return fmt.Sprintf("input required: %q", e.key) }
func (e *inputRequiredError) Is(target error) bool {
	return target == ErrInputRequired
}

// InvalidResponseError reports an answer that is malformed or does not fit
// the question (for example form content that fails the schema). The server
// answers it with -32602.
type InvalidResponseError struct {
	Key string
	Err error
}

// Error names the key and the problem.
func (e *InvalidResponseError) Error() string {
	return fmt.Sprintf("input response %s: %v", clip.Quote(e.Key), e.Err)
}

// Unwrap returns the underlying problem.
func (e *InvalidResponseError) Unwrap() error { return e.Err }

// RPCError converts the error to its wire form.
func (e *InvalidResponseError) RPCError() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.InvalidParams, Message: e.Error()}
}

// ParseResponses reads the inputResponses member of a retry. Absent means
// none; anything but a JSON object (null included) is an error.
func ParseResponses(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if raw == nil {
		return nil, nil
	}
	if err := requireObject(raw); err != nil {
		return nil, fmt.Errorf("inputResponses: %w", err)
	}
	members, err := jsonscan.SplitObject(bytes.TrimSpace(raw), "inputResponses")
	if err != nil {
		return nil, err
	}
	m := make(map[string]json.RawMessage, len(members))
	for _, mb := range members {
		m[mb.Key] = mb.Value
	}
	return m, nil
}

// RoundOptions configure a Round.
type RoundOptions struct {
	// AnswersWithoutState lets answers count when the retry carries no
	// requestState at all: an answer is then matched to a question by key
	// alone. By default such answers are ignored and the question is asked
	// again, so only answers to questions a verified state issued reach the
	// handler. Enable it only where an answer grants nothing a client could
	// not get by answering the question when asked.
	AnswersWithoutState bool
}

// Round is one request's view of a multi round-trip exchange: the client's
// capabilities, the answers the request carries, the verified state it
// resumes, and the questions the handler asks next.
//
// A Round is safe for concurrent use: several goroutines of one handler
// may ask, save state and read it at once. Keyed questions (Ask, Elicit,
// Sample, ListRoots, Require) mean the same whatever order they are asked
// in. Blocking-style questions (Replay) are matched by position, so their
// order is part of their meaning; see Replay.
type Round struct {
	caps      client.Capabilities
	responses map[string]json.RawMessage
	state     *State
	opts      RoundOptions

	mu      sync.Mutex // guards everything below
	next    json.RawMessage
	pending InputRequests
	digests map[string]Digest
	suspend bool

	// Blocking-style replay: answers handed over in this run, and whether
	// the run has left the script the recorded answers belong to.
	replayed []Recorded
	diverged bool
	asked    int // highest replay position asked so far, plus one

	// Order of blocking-style questions: the positions of the recorded run
	// (answers and questions issued at replay keys), which of them this run
	// has met, the highest met, and the failure once the run reached two of
	// them in the opposite order.
	script   map[int]Digest
	met      map[int]bool
	lastMet  int
	orderErr error
}

// NewRound returns a Round for a request with capabilities caps, answers
// responses (from ParseResponses) and state (from Sealer.Open, or nil when
// the request carried none).
func NewRound(caps client.Capabilities, responses map[string]json.RawMessage, state *State, opts RoundOptions) *Round {
	return &Round{caps: caps, responses: responses, state: state, opts: opts}
}

// Capabilities returns the client capabilities declared on this request.
func (r *Round) Capabilities() client.Capabilities { return r.caps }

// Resumed reports whether the request carried a verified requestState.
func (r *Round) Resumed() bool { return r.state != nil }

// StateID returns the unique ID of the verified state this request resumes,
// or "" when there is none. Use it to make a confirmation redeemable once.
func (r *Round) StateID() string {
	if r.state == nil {
		return ""
	}
	return r.state.ID
}

// LoadState decodes the payload the previous round stored with SaveState
// into v. It reports false, leaving v alone, when there is none.
func (r *Round) LoadState(v any) (bool, error) {
	if r.state == nil || len(r.state.Payload) == 0 {
		return false, nil
	}
	if err := strictjson.Unmarshal(r.state.Payload, v); err != nil {
		return false, fmt.Errorf("decode requestState payload into %T: %w", v, err)
	}
	return true, nil
}

// SaveState stores v (as JSON) to be sealed into the requestState of the
// input_required result this round ends with. The next round reads it back
// with LoadState. Keep it small: it travels with every retry.
func (r *Round) SaveState(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode requestState payload %T: %w", v, err)
	}
	r.mu.Lock()
	r.next = b
	r.mu.Unlock()
	return nil
}

// Suspend ends the round with an input_required result that carries only a
// requestState (for example to shed load: the client retries at once and
// any instance resumes from the payload). It returns an error wrapping
// ErrInputRequired for the handler to return.
func (r *Round) Suspend() error {
	r.mu.Lock()
	r.suspend = true
	r.mu.Unlock()
	return fmt.Errorf("suspend: %w", ErrInputRequired)
}

// Elicit returns the client's answer to the elicitation req under key, or
// records the question and returns an error wrapping ErrInputRequired. An
// accepted answer has been validated against req's schema. Decline and
// cancel come back as results with that action, not as errors. The error
// is a *client.MissingCapabilityError if the client did not declare the
// elicitation mode req needs, and an *InvalidResponseError if the answer
// is malformed.
func (r *Round) Elicit(key string, req *elicit.Request) (*elicit.Result, error) {
	if req == nil {
		return nil, errors.New("elicit: nil request")
	}
	raw, err := r.ask(key, ElicitRequest(req))
	if err != nil {
		return nil, err
	}
	res, err := req.CheckResult(raw)
	if err != nil {
		return nil, &InvalidResponseError{Key: key, Err: err}
	}
	return res, nil
}

// Sample returns the client's answer to the sampling request p under key,
// or records the question; see Elicit.
func (r *Round) Sample(key string, p *client.CreateMessageParams) (*client.CreateMessageResult, error) {
	if p == nil {
		return nil, errors.New("sample: nil request")
	}
	raw, err := r.ask(key, SampleRequest(p))
	if err != nil {
		return nil, err
	}
	res, err := client.ParseCreateMessageResult(raw)
	if err != nil {
		return nil, &InvalidResponseError{Key: key, Err: err}
	}
	return res, nil
}

// ListRoots returns the client's roots under key, or records the question;
// see Elicit.
func (r *Round) ListRoots(key string) (*client.ListRootsResult, error) {
	raw, err := r.ask(key, RootsRequest())
	if err != nil {
		return nil, err
	}
	res, err := client.ParseListRootsResult(raw)
	if err != nil {
		return nil, &InvalidResponseError{Key: key, Err: err}
	}
	return res, nil
}

// Ask is the general form of Elicit, Sample and ListRoots: it returns the
// raw answer to req under key, unvalidated, or records the question.
func (r *Round) Ask(key string, req InputRequest) (json.RawMessage, error) {
	return r.ask(key, req)
}

// Require records req under key as a question of the next round whatever
// answer this request carries for it: the handler has looked at the answer
// (for a URL elicitation, accept means only consent) and must ask again.
// It returns an error wrapping ErrInputRequired, or the same failures as
// Ask.
func (r *Round) Require(key string, req InputRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := r.record(key, req, false)
	return err
}

func (r *Round) ask(key string, req InputRequest) (json.RawMessage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.record(key, req, true)
}

// record checks key and req, returns the answer when lookup is set and one
// may be handed over, and otherwise records the question. r.mu is held.
func (r *Round) record(key string, req InputRequest, lookup bool) (json.RawMessage, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("input request %q: %w", key, err)
	}
	if err := req.CheckCapabilities(r.caps); err != nil {
		return nil, err
	}
	d, err := req.Digest()
	if err != nil {
		return nil, err
	}
	if prev, dup := r.digests[key]; dup && prev != d {
		return nil, fmt.Errorf("input request key %q was asked twice with different requests", key)
	}
	if lookup {
		if raw, ok := r.answer(key, d); ok {
			return raw, nil
		}
	}
	if r.digests == nil {
		r.digests = make(map[string]Digest)
	}
	if _, dup := r.digests[key]; !dup {
		r.digests[key] = d
		r.pending = append(r.pending, KeyedRequest{Key: key, Request: req})
	}
	return nil, &inputRequiredError{key: key}
}

// answer returns the raw answer under key if it may be handed over: it
// answers a question the verified state issued with the same digest, or
// there is no state and AnswersWithoutState is set. It reads only what
// never changes after NewRound.
func (r *Round) answer(key string, d Digest) (json.RawMessage, bool) {
	raw, ok := r.responses[key]
	if !ok {
		return nil, false
	}
	if r.state == nil {
		if !r.opts.AnswersWithoutState {
			return nil, false
		}
	} else if issued, ok := r.state.Issued[key]; !ok || issued != d {
		return nil, false
	}
	return bytes.TrimSpace(raw), true
}

// Pending returns the questions asked and not answered in this round, in
// the order they were asked.
func (r *Round) Pending() InputRequests {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.pending)
}

// InputRequiredResult is a suspended call: the questions to ask and the
// sealed state to echo.
type InputRequiredResult struct {
	InputRequests InputRequests
	RequestState  string
}

// Suspended builds the input_required result that ends this round: it
// re-checks every pending request against the client's capabilities, and
// seals a state bound to b that records the issued requests and the payload
// from SaveState. It fails if the handler neither asked anything nor called
// Suspend, and with the *ReplayOrderError if its blocking-style questions
// were asked out of order (whatever the handler did with that error).
func (r *Round) Suspended(s *Sealer, b Binding) (*InputRequiredResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.orderErr != nil {
		return nil, r.orderErr
	}
	if len(r.pending) == 0 && !r.suspend {
		return nil, errors.New("handler returned ErrInputRequired without asking for input")
	}
	for _, kr := range r.pending {
		if err := kr.Request.CheckCapabilities(r.caps); err != nil {
			return nil, err
		}
	}
	st := &State{Binding: b, Payload: r.next, Issued: r.digests, Answers: r.replayed}
	tok, err := s.Seal(st)
	if err != nil {
		return nil, err
	}
	return &InputRequiredResult{InputRequests: slices.Clone(r.pending), RequestState: tok}, nil
}

// ReplayKey returns the input request key under which the pos-th
// blocking-style question is issued: "q0", "q1", … Handlers that mix
// blocking calls with Round.Ask should not use keys of that form.
func ReplayKey(pos int) string { return "q" + strconv.Itoa(pos) }

// Replay serves the pos-th question (counting from 0) of a handler written
// in the blocking style, which runs again from the top on every round:
//
//   - if an earlier round recorded an answer at pos for a question with the
//     same digest, and no earlier position of this run diverged from the
//     recording, that answer is returned again;
//   - otherwise, if this request answers the question issued at pos (key
//     ReplayKey(pos), same digest), that answer is checked with check,
//     recorded and returned;
//   - otherwise the question is recorded for the next round and an error
//     wrapping ErrInputRequired is returned.
//
// A question that differs from the one recorded or issued at its position
// is asked again rather than handed an answer meant for another question,
// and recordings after it are dropped. Every answer handed over is sealed
// (encrypted) into the next state, so later rounds replay it. Positions
// must be asked in increasing order.
//
// The order of the questions is part of the recording. A run that reaches
// two questions of the previous run (answered or issued) in the opposite
// order, as two goroutines asking at once may, fails with an error
// wrapping ErrReplayOrder: the answers would otherwise be handed to
// whichever goroutine came first, or the questions asked again on every
// round. The failure sticks: later calls of Replay and Suspended return it
// too. Questions that are only added or dropped are not a reordering: they
// are asked again, or forgotten.
func (r *Round) Replay(pos int, req InputRequest, check func(json.RawMessage) error) (json.RawMessage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.orderErr != nil {
		return nil, r.orderErr
	}
	if pos < r.asked {
		return nil, fmt.Errorf("replay position %d asked after position %d; blocking calls must be asked in order", pos, r.asked-1)
	}
	r.asked = pos + 1
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("question %d: %w", pos, err)
	}
	if err := req.CheckCapabilities(r.caps); err != nil {
		return nil, err
	}
	d, err := req.Digest()
	if err != nil {
		return nil, err
	}
	if err := r.keepOrder(pos, d); err != nil {
		return nil, err
	}
	if !r.diverged && r.state != nil {
		for _, rec := range r.state.Answers {
			if rec.Pos != pos {
				continue
			}
			if rec.Digest == d {
				if err := check(rec.Answer); err != nil {
					return nil, &InvalidResponseError{Key: ReplayKey(pos), Err: err}
				}
				r.replayed = append(r.replayed, rec)
				return rec.Answer, nil
			}
			r.diverged = true // the handler asks something else now
		}
	}
	if r.state != nil {
		if issued, ok := r.state.Issued[ReplayKey(pos)]; ok && issued != d {
			r.diverged = true // the question issued at pos was another one
		}
	}
	raw, err := r.record(ReplayKey(pos), req, true)
	if err != nil {
		return nil, err
	}
	if err := check(raw); err != nil {
		return nil, &InvalidResponseError{Key: ReplayKey(pos), Err: err}
	}
	r.replayed = append(r.replayed, Recorded{Pos: pos, Digest: d, Answer: raw})
	return raw, nil
}

// ErrReplayOrder is wrapped by the error of a blocking-style question asked
// in another order than in the previous round (see Round.Replay). It is a
// fault of the handler; the server answers it with -32603.
var ErrReplayOrder = errors.New("blocking calls asked in a different order than in the previous round")

// replayOrderError names the two questions met in the opposite order.
type replayOrderError struct {
	pos, was, after int
}

func (e *replayOrderError) Error() string {
	return fmt.Sprintf("blocking call %d asks what call %d of the previous round asked, but this run already reached that round's call %d: "+
		"the handler asks in a different order than before (blocking calls from several goroutines at once, or an order "+
		"that depends on map iteration or changing data); on the 2026-07-28 protocol they are replayed by position, "+
		"so ask them in one fixed order, or several at once in one call (ElicitAll)", e.pos, e.was, e.after)
}

func (e *replayOrderError) Is(target error) bool { return target == ErrReplayOrder }

// RPCError converts the error to its wire form.
func (e *replayOrderError) RPCError() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.InternalError, Message: "Internal error: " + e.Error()}
}

// keepOrder matches the question at pos (digest d) with a position of the
// previous run holding the same question: the first not met yet after the
// last one met. When the only such positions come before the last one met,
// this run reaches two questions in the opposite order, and the failure is
// kept. Added and dropped questions never cause it. r.mu is held.
func (r *Round) keepOrder(pos int, d Digest) error {
	if r.state == nil {
		return nil
	}
	if r.script == nil {
		r.script = make(map[int]Digest, len(r.state.Answers)+len(r.state.Issued))
		for _, rec := range r.state.Answers {
			r.script[rec.Pos] = rec.Digest
		}
		for key, dg := range r.state.Issued {
			if p, ok := replayPos(key); ok {
				r.script[p] = dg
			}
		}
		r.met = make(map[int]bool, len(r.script))
		r.lastMet = -1
	}
	next, before := -1, -1
	for p, dg := range r.script {
		switch {
		case dg != d || r.met[p]:
		case p > r.lastMet:
			if next < 0 || p < next {
				next = p
			}
		default:
			before = max(before, p)
		}
	}
	switch {
	case next >= 0:
		r.met[next] = true
		r.lastMet = next
	case before >= 0:
		r.orderErr = &replayOrderError{pos: pos, was: before, after: r.lastMet}
		return r.orderErr
	}
	return nil
}

// replayPos returns the position a ReplayKey names.
func replayPos(key string) (int, bool) {
	if len(key) < 2 || len(key) > 10 || key[0] != 'q' {
		return 0, false
	}
	p, err := strconv.Atoi(key[1:])
	if err != nil || ReplayKey(p) != key {
		return 0, false
	}
	return p, true
}

// ErrAlreadyRedeemed is returned by Redeem for a state whose confirmation
// was redeemed before.
var ErrAlreadyRedeemed = errors.New("this confirmation was already redeemed")

// Ledger remembers single-use redemptions. The specification leaves
// single use to the server ("not single use; where that matters the server
// MUST enforce it"); a Ledger shared by every instance (such as the Redis
// one in package redisledger) makes a confirmation redeemable once across
// a fleet.
type Ledger interface {
	// Redeem marks id as redeemed until expires (after which it cannot be
	// presented anyway). It returns ErrAlreadyRedeemed if id was redeemed
	// before. Round.Redeem passes the state's expiry plus the sealer's
	// leeway, so that an instance whose clock is behind by up to the
	// leeway, and still accepts the state, still finds the entry.
	Redeem(ctx context.Context, id string, expires time.Time) error
}

// Redeem marks the verified state this request resumes as used, so that
// replaying the same retry (the same requestState and answers) fails with
// ErrAlreadyRedeemed, on this instance or any other sharing the ledger.
// Call it after the user's confirmation is known and before acting on it.
// A failure of the ledger itself (not a replay) fails closed: it is
// returned wrapped in an error whose Internal method reports true, so a
// handler that returns it gives the client a generic message and the
// server log the detail (see server.Internal).
func (r *Round) Redeem(ctx context.Context, l Ledger) error {
	if r.state == nil {
		return errors.New("redeem: the request carries no verified requestState")
	}
	// Expiry is exact on each instance's own clock, so an instance behind
	// this one accepts the state after this clock has passed its exp; the
	// entry outlives exp by the leeway (the skew the fleet tolerates).
	err := l.Redeem(ctx, "baton:state:"+r.state.ID, r.state.ExpiresAt.Add(r.state.leeway))
	if err != nil && !errors.Is(err, ErrAlreadyRedeemed) {
		return &ledgerError{err}
	}
	return err
}

// ledgerError is a failure of the ledger itself, not a replay: the
// deployment's trouble (Redis down), whose text names hosts and addresses.
// Its Internal method tells package server to show the client a generic
// message and keep the detail in its log.
type ledgerError struct{ err error }

func (e *ledgerError) Error() string  { return "redeem: " + e.err.Error() }
func (e *ledgerError) Unwrap() error  { return e.err }
func (e *ledgerError) Internal() bool { return true }

// MemoryLedger is a Ledger for one process. It is safe for concurrent use
// and forgets entries once they expire.
type MemoryLedger struct {
	mu        sync.Mutex
	used      map[string]time.Time
	now       func() time.Time
	lastSweep time.Time
}

// NewMemoryLedger returns an empty MemoryLedger on the wall clock.
func NewMemoryLedger() *MemoryLedger { return NewMemoryLedgerWithClock(nil) }

// NewMemoryLedgerWithClock returns an empty MemoryLedger that tells expired
// entries by now (nil means the wall clock). Give it the clock of the
// Sealer whose states it redeems.
func NewMemoryLedgerWithClock(now func() time.Time) *MemoryLedger {
	return &MemoryLedger{used: make(map[string]time.Time), now: wallClock(now)}
}

// Redeem implements Ledger.
func (m *MemoryLedger) Redeem(ctx context.Context, id string, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.lastSweep) > time.Minute {
		for k, exp := range m.used {
			if now.After(exp) {
				delete(m.used, k)
			}
		}
		m.lastSweep = now
	}
	if exp, ok := m.used[id]; ok && !now.After(exp) {
		return ErrAlreadyRedeemed
	}
	m.used[id] = expires
	return nil
}
