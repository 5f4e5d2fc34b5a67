// Package round is one request's view of a multi round-trip exchange on
// the stateless protocol: the client's capabilities, the answers the
// request carries, the verified state it resumes, and the questions the
// handler asks. Package server drives it; handlers reach it only through
// the methods of server.Call.
//
// A handler runs again from the top on every round and asks its questions
// in sequence. Each question has a key: the handler's own (server.WithKey,
// mrtr.InputRequest.Keyed) or one the server makes from the question's
// position, "baton:0", "baton:1", …. Ask hands a question the answer the
// previous rounds recorded for its key, or the answer this request carries
// for a question the verified state issued under that key, and otherwise
// records it for the next input_required result. Every answer handed over
// is sealed (encrypted) into the next state, so later rounds replay it.
package round

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// AutoKeyPrefix begins the keys the server gives questions asked without
// one; user keys may not begin with it.
const AutoKeyPrefix = "baton:"

// AutoKey returns the key of the question asked at pos without a key of
// its own.
func AutoKey(pos int) string { return AutoKeyPrefix + strconv.Itoa(pos) }

// autoPos returns the position an AutoKey names.
func autoPos(key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, AutoKeyPrefix)
	if !ok || len(rest) == 0 || len(rest) > 7 {
		return 0, false
	}
	p, err := strconv.Atoi(rest)
	if err != nil || AutoKey(p) != key {
		return 0, false
	}
	return p, true
}

// isAutoKey reports whether key is AutoKey(pos).
func isAutoKey(key string, pos int) bool {
	_, ok := autoPos(key)
	return ok && key == AutoKey(pos)
}

// inputRequiredError names the question that was not answered yet.
type inputRequiredError struct{ key string }

func (e *inputRequiredError) Error() string {
	return "input required: " + clip.Quote(e.key)
}

func (e *inputRequiredError) Is(target error) bool { return target == mrtr.ErrInputRequired }

// InvalidResponseError reports an answer that is malformed or does not fit
// the question (for example form content that fails the schema). The server
// answers it with -32602.
type InvalidResponseError struct {
	// Key is the inputResponses key of the answer.
	Key string
	// Err says what is wrong with it.
	Err error
}

// Error names the key and the problem.
func (e *InvalidResponseError) Error() string {
	return fmt.Sprintf("input response %s: %v", clip.Quote(e.Key), e.Err)
}

// Unwrap returns the underlying problem.
func (e *InvalidResponseError) Unwrap() error { return e.Err }

// RPCError converts the error to its wire form.
func (e *InvalidResponseError) RPCError() *mcp.Error {
	return &mcp.Error{Code: mcp.InvalidParams, Message: e.Error()}
}

// ParseResponses reads the inputResponses member of a retry. Absent means
// none; anything but a JSON object (null included) is an error.
func ParseResponses(raw json.RawMessage) (Responses, error) {
	return parseResponses(raw, false)
}

// ParseValidResponses is ParseResponses for raw already known to be one
// valid JSON value (a request's envelope walk checked it with
// jsonscan.SkipValueWithin, whose verdict on validity is json.Valid's):
// it does not check it again. json.Valid was about 2,300 of
// ParseResponses's 4,000 instructions per two-round flow under valgrind
// (BenchmarkMRTRTwoRounds, 2026-12-04). Its results and errors are
// ParseResponses's on such input (TestParseValidResponses).
func ParseValidResponses(raw json.RawMessage) (Responses, error) {
	return parseResponses(raw, true)
}

func parseResponses(raw json.RawMessage, valid bool) (Responses, error) {
	if raw == nil {
		return Responses{}, nil
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return Responses{}, errors.New("inputResponses must be a JSON object")
	}
	var members []jsonscan.Member
	var err error
	if valid {
		members, err = jsonscan.SplitValidObject(t, "inputResponses")
	} else {
		members, err = jsonscan.SplitObject(t, "inputResponses")
	}
	if err != nil {
		return Responses{}, err
	}
	if len(members) == 0 {
		return Responses{}, nil
	}
	set := &responseSet{members: members}
	if len(members) > responsesScanMax {
		set.index = make(map[string]int, len(members))
		for i, mb := range members {
			set.index[mb.Key] = i
		}
	}
	return Responses{set}, nil
}

// Responses are the answers a retry carries, by key (ParseResponses). A
// retry carries few (one is the usual round), so they are kept as the
// members SplitObject returns and searched from the front; a map is built
// only past responsesScanMax. A map of one entry cost two allocations and
// about 4,000 instructions per retry under valgrind (a 640-byte table
// grown from a small map; BenchmarkMRTRTwoRounds, 2026-12-04). Responses
// is one pointer, as the map was: a Round is allocated with every
// tools/call, in a 448-byte size class it fills.
type Responses struct {
	set *responseSet // nil: none
}

type responseSet struct {
	members []jsonscan.Member
	index   map[string]int // key to position in members, past responsesScanMax
}

// responsesScanMax is how many answers Responses searches one by one. A
// longer list is indexed, so a retry carrying many answers costs each
// question one map lookup, not a pass over them all.
const responsesScanMax = 8

// Get returns the answer under key.
func (rs Responses) Get(key string) (json.RawMessage, bool) {
	if rs.set == nil {
		return nil, false
	}
	if rs.set.index != nil {
		i, ok := rs.set.index[key]
		if !ok {
			return nil, false
		}
		return rs.set.members[i].Value, true
	}
	for i := range rs.set.members {
		if rs.set.members[i].Key == key {
			return rs.set.members[i].Value, true
		}
	}
	return nil, false
}

// Len is the number of answers.
func (rs Responses) Len() int {
	if rs.set == nil {
		return 0
	}
	return len(rs.set.members)
}

// MaxKeyLength bounds input request keys.
const MaxKeyLength = 128

// CheckKey checks an input request key: 1 to MaxKeyLength bytes, no
// control characters.
func CheckKey(key string) error {
	if key == "" {
		return errors.New("input request key is empty")
	}
	if len(key) > MaxKeyLength {
		return fmt.Errorf("input request key %s is longer than %d bytes", clip.Quote(key), MaxKeyLength)
	}
	// The control characters are ASCII, and no byte of a multi-byte UTF-8
	// sequence is: a byte loop finds what a loop over runes would.
	for i := range len(key) {
		if c := key[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("input request key %s contains control characters", clip.Quote(key))
		}
	}
	return nil
}

// Digest returns a digest of a question's method and params. The same
// question has the same digest in every process, so a retry can prove that
// an answer is for exactly the question that was issued.
func Digest(r mrtr.InputRequest) (seal.Digest, error) { return digestOf(r, nil) }

// digestOf is Digest, elicitations looked up in t (nil: none).
func digestOf(r mrtr.InputRequest, t *Digests) (seal.Digest, error) {
	// Only an elicitation carries an elicit.Request (mrtr.ElicitRequest):
	// tested first, in a function of its own without the others' buffer
	// and encoding (under valgrind, BenchmarkCarried in bench/,
	// 2026-12-04, about 30 instructions per carried answer).
	if e := r.Elicitation(); e != nil {
		return t.elicit(e.Digest()), nil
	}
	return otherDigest(r, t)
}

// otherDigest is digestOf for a request without an elicit.Request.
func otherDigest(r mrtr.InputRequest, t *Digests) (seal.Digest, error) {
	if r.Method() == mrtr.MethodElicit { // a nil *elicit.Request
		return t.elicit(r.Elicitation().Digest()), nil
	}
	// An elicitation's digest is elicitDigest (SHA-256 of the method, a
	// zero byte and the elicit.Request digest); the others hash the
	// method, a zero byte and the params.
	var buf [64]byte
	b := append(buf[:0], r.Method()...)
	b = append(b, 0)
	switch r.Method() {
	case mrtr.MethodSample:
		j, err := json.Marshal(r.Sampling())
		if err != nil {
			return seal.Digest{}, fmt.Errorf("digest sampling request: %w", err)
		}
		b = append(b, j...)
	}
	return sha256.Sum256(b), nil
}

// Options configure a Round.
type Options struct {
	// AnswersWithoutState lets answers count when the retry carries no
	// requestState at all: an answer is then matched to a question by key
	// alone. By default such answers are ignored and the question is asked
	// again, so only answers to questions a verified state issued reach the
	// handler.
	AnswersWithoutState bool
	// Span is this request's span, if traced: the state this round seals
	// records it as the flow's previous round (and, on the first round,
	// as its first).
	Span seal.SpanRef
	// Digests, if set, remembers the digests of elicitation questions
	// across requests (the server's table).
	Digests *Digests
}

// Round is one request's view of a multi round-trip exchange. It is safe
// for concurrent use.
type Round struct {
	caps      mcp.ClientCapabilities
	responses Responses
	state     *seal.State
	opts      Options

	mu sync.Mutex // guards book
	// book is what the run records, allocated by the first method that
	// needs it (held): most calls never ask a question, and a Round
	// without it is a quarter of the size (less to allocate and collect
	// on every tools/call; issue 23). Its fields are promoted: r.pending
	// is r.book.pending, valid once ensure has run.
	*book
}

// book is a Round's record of its run: what was handed over, asked,
// issued and saved.
type book struct {
	// The state's answers are found by key without building a table when
	// the handler asks them in the order they were recorded (as a handler
	// replaying from the top does): recNext is the one expected next.
	// recIndex, built once lookups miss it often, maps every key.
	// handed[i] is set once state.Answers[i] was handed over in this run.
	// (int32: a smaller book, whose size class is 416 bytes with the
	// buffers at the end; a state's answers are far fewer.)
	recNext   int32
	recMisses int32
	recIndex  map[string]int
	handed    []bool
	next      json.RawMessage
	// pending are the questions issued in this run, in order; their
	// digests are in asked (issued set).
	pending Requests
	asked   askedTable // every question of this run by key
	// issuedIndex maps the keys state.Issued holds, once it holds more
	// than askedScanMax (see stateIssued).
	issuedIndex map[string]seal.Digest
	// answered lists the answers handed over in this run, in order: i >= 0
	// is state.Answers[i], -1-j is fresh[j], an answer this request
	// carried. The list of Recorded to seal is built from it only when the
	// run suspends: a run that completes copies none of them (under
	// valgrind, BenchmarkCarried in bench/, 2026-12-04: a copy of the
	// answer and a block of them zeroed, about 60 instructions per answer
	// the retry carries).
	answered []int
	fresh    []seal.Recorded
	freshBuf [1]seal.Recorded // fresh's first, in the Round's own allocation
	// The first entries of asked and answered, in the book's own
	// allocation: a round of one question made two allocations fewer per
	// flow, for a book of 416 bytes instead of 320 (BenchmarkMRTRTwoRounds,
	// 2026-12-04).
	askedBuf    [1]askedEntry
	answeredBuf [2]int
	// diverged is set once this run asks, under a key, another question
	// than the one recorded or issued under it: the run has left the
	// script the recorded answers belong to, and no more are handed over.
	diverged bool
	suspend  bool // Suspend was called

	// Order of the questions asked without a key (matched by position),
	// built by the first such question of a retry (keepOrder), and the
	// failure once the run reached two of them in the opposite order.
	order    *replayOrder
	orderErr error

	// irErr is the error of the first question AskValid leaves pending,
	// in the book's own allocation: set once (its key is never empty) and
	// not written again, so the handler may keep it. An allocation fewer
	// per suspended round, in the room the order's fields left (the book
	// stays 416 bytes; BenchmarkMRTRTwoRounds, 2026-12-04).
	irErr inputRequiredError
}

// replayOrder is what keepOrder tracks: the position of each question the
// previous run asked without a key, its digest and whether this run has
// met it, and the highest position met.
type replayOrder struct {
	script  map[int]scripted
	lastMet int
}

type scripted struct {
	digest seal.Digest
	met    bool
}

// pendingError returns the error of a question left pending under key:
// the book's own the first time, a new one after. r.mu is held.
func (r *Round) pendingError(key string) error {
	if r.irErr.key == "" && key != "" {
		r.irErr.key = key
		return &r.irErr
	}
	return &inputRequiredError{key: key}
}

// ensure allocates r.book if it is not yet. r.mu is held.
func (r *Round) ensure() {
	if r.book == nil {
		r.book = new(book)
	}
}

// asked is one question of this run and what became of it.
type asked struct {
	digest seal.Digest
	answer json.RawMessage // nil while pending
	issued bool            // in r.issued
}

// askedTable maps a key to the question asked under it. A run asks few
// questions (one is the usual round), so the table is a slice searched
// from the front; a map is built only once it holds more than
// askedScanMax. A map of one entry costs a 640-byte allocation per round
// (BenchmarkMRTRTwoRounds -memprofile, 2026-12-04: two of them in a
// two-round flow); the slice of one, 96 bytes.
type askedTable struct {
	list  []askedEntry
	index map[string]int // key to position in list, once len(list) > askedScanMax
}

type askedEntry struct {
	key string
	asked
}

// askedScanMax is how many entries the table searches one by one.
const askedScanMax = 8

// started reports whether start has been called.
func (t *askedTable) started() bool { return t.list != nil }

// start makes room for n entries: in buf, the book's own, when n is at
// most two (one question is the usual round; a retry expects the
// question its state issued and room for one more, which append makes if
// the run asks it: an allocation fewer per round either way).
func (t *askedTable) start(n int, buf *[1]askedEntry) {
	if n <= 2 {
		t.list = buf[:0]
		return
	}
	t.list = make([]askedEntry, 0, n)
}

// find returns the position of key in t.list, or -1.
func (t *askedTable) find(key string) int {
	if t.index != nil {
		if i, ok := t.index[key]; ok {
			return i
		}
		return -1
	}
	for i := range t.list {
		if t.list[i].key == key {
			return i
		}
	}
	return -1
}

// get returns the question asked under key.
func (t *askedTable) get(key string) (asked, bool) {
	if i := t.find(key); i >= 0 {
		return t.list[i].asked, true
	}
	return asked{}, false
}

// set records a under key, replacing what was recorded under it.
func (t *askedTable) set(key string, a asked) {
	if i := t.find(key); i >= 0 {
		t.list[i].asked = a
		return
	}
	t.list = append(t.list, askedEntry{key: key, asked: a})
	switch n := len(t.list); {
	case t.index != nil:
		t.index[key] = n - 1
	case n > askedScanMax:
		t.index = make(map[string]int, 2*n)
		for i := range t.list {
			t.index[t.list[i].key] = i
		}
	}
}

// New returns a Round for a request with capabilities caps, answers
// responses (from ParseResponses) and state (from seal.Sealer.Open, or nil
// when the request carried none).
func New(caps mcp.ClientCapabilities, responses Responses, state *seal.State, opts Options) *Round {
	r := new(Round)
	r.Init(caps, responses, state, opts)
	return r
}

// Init makes r, which must be new (a zero Round), what New returns, for a
// caller that allocates the Round with something else.
func (r *Round) Init(caps mcp.ClientCapabilities, responses Responses, state *seal.State, opts Options) {
	r.caps, r.responses, r.state, r.opts = caps, responses, state, opts
}

// Capabilities returns the client capabilities declared on this request.
func (r *Round) Capabilities() mcp.ClientCapabilities { return r.caps }

// Number is the request's round: 1 without a state, and one more than the
// round that issued the state otherwise.
func (r *Round) Number() int {
	if r.state == nil {
		return 1
	}
	return r.state.Round + 1
}

// Resumed reports whether the request carried a verified requestState.
func (r *Round) Resumed() bool { return r.state != nil }

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
// input_required result this round ends with.
func (r *Round) SaveState(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode requestState payload %T: %w", v, err)
	}
	r.mu.Lock()
	r.ensure()
	r.next = b
	r.mu.Unlock()
	return nil
}

// Suspend ends the round with an input_required result that carries only a
// requestState. It returns an error wrapping mrtr.ErrInputRequired.
func (r *Round) Suspend() error {
	r.mu.Lock()
	r.ensure()
	r.suspend = true
	r.mu.Unlock()
	return fmt.Errorf("suspend: %w", mrtr.ErrInputRequired)
}

// Check checks an answer for Ask and hands it to the handler; it is called
// for every answer Ask returns, a question asked twice in a run included. An answer
// the request carries (recorded false) gets every check, and Check
// returns the form in which to record it in the next state (nil: as the
// client sent it). An answer the verified state recorded (recorded true)
// comes back in that form, for a question with the same digest: the state
// is sealed with the server's key, so it proves the answer passed Check
// when it was recorded. A form of Check's own making needs no checking
// again; anything else (an answer recorded as sent) is checked as a new
// one.
type Check func(raw json.RawMessage, recorded bool) (json.RawMessage, error)

// Ask serves the question req asked at position pos under key (for a
// question without a key of its own, key is AutoKey(pos)):
//
//   - if an earlier round recorded an answer under key for the same
//     question, and this run has not left the recording, that answer is
//     handed over again;
//   - otherwise, if this request answers the question the verified state
//     issued under key (the same question), that answer is checked with
//     check, recorded (in the form check returns) and handed over;
//   - otherwise the question is recorded for the next round and an error
//     wrapping mrtr.ErrInputRequired is returned.
//
// A question that differs from the one recorded or issued under its key is
// asked again rather than handed an answer meant for another question, and
// the recordings of the questions after it are dropped (they may depend on
// the changed one). Asking one key twice in a run with different questions
// is an error; asking the same question twice gets the same outcome.
//
// Questions without a key are matched by position, so their order is part
// of their meaning: a run that reaches two of the previous run's positions
// in the opposite order (as two goroutines racing to ask may) fails with an
// error wrapping ErrReplayOrder, and the failure sticks.
func (r *Round) Ask(pos int, key string, req mrtr.InputRequest, check Check) (json.RawMessage, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("input request %s: %w", clip.Quote(key), err)
	}
	if err := req.CheckCapabilities(r.caps); err != nil {
		return nil, err
	}
	return r.AskValid(pos, key, req, check)
}

// AskValid is Ask for a caller that has made Ask's own checks already:
// key passed CheckKey, req passed Validate and CheckCapabilities with
// this round's Capabilities. Package server's askAll makes them (with
// more of its own) before it asks, so a replayed question is not checked
// twice.
func (r *Round) AskValid(pos int, key string, req mrtr.InputRequest, check Check) (json.RawMessage, error) {
	d, err := digestOf(req, r.opts.Digests)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.ensure()
	defer r.mu.Unlock()
	if r.orderErr != nil {
		return nil, r.orderErr
	}
	// r.asked stays nil while the run replays recorded answers: no lookup
	// then (a call into the map code per answer the retry carries).
	var prev asked
	dup := false
	if r.asked.started() {
		prev, dup = r.asked.get(key)
	}
	if dup {
		if prev.digest != d {
			return nil, fmt.Errorf("input request key %s was asked twice with different requests", clip.Quote(key))
		}
		if prev.answer == nil {
			return nil, &inputRequiredError{key: key}
		}
		// Handed over again: check hands it to the handler (checked
		// again, as the client sent it).
		if _, err := check(prev.answer, false); err != nil {
			return nil, &InvalidResponseError{Key: key, Err: err}
		}
		return prev.answer, nil
	}
	ri := r.recordedIndex(key)
	if ri >= 0 && r.handed[ri] { // asked before in this run and handed the recorded answer
		rec := &r.state.Answers[ri]
		if !rec.Digest.Equal(&d) {
			return nil, fmt.Errorf("input request key %s was asked twice with different requests", clip.Quote(key))
		}
		if _, err := check(rec.Answer, true); err != nil {
			return nil, &InvalidResponseError{Key: key, Err: err}
		}
		return rec.Answer, nil
	}
	if strings.HasPrefix(key, AutoKeyPrefix) && isAutoKey(key, pos) {
		if err := r.keepOrder(pos, d); err != nil {
			return nil, err
		}
	}
	if ri >= 0 && !r.diverged {
		r.startAnswered()
		if rec := &r.state.Answers[ri]; rec.Digest.Equal(&d) {
			if _, err := check(rec.Answer, true); err != nil {
				return nil, &InvalidResponseError{Key: key, Err: err}
			}
			r.answered = append(r.answered, ri)
			r.handed[ri] = true
			return rec.Answer, nil
		}
		r.diverged = true // the handler asks something else now
	}
	if !r.asked.started() {
		r.asked.start(r.expected(), &r.askedBuf)
	}
	if r.state != nil {
		if issued, ok := r.stateIssued(key); ok && issued != d {
			r.diverged = true // the question issued under key was another one
		}
	}
	if raw, ok := r.answer(key, d); ok {
		record, err := check(raw, false)
		if err != nil {
			return nil, &InvalidResponseError{Key: key, Err: err}
		}
		if record == nil {
			record = raw
		}
		if r.fresh == nil {
			r.fresh = r.freshBuf[:0]
		}
		r.fresh = append(r.fresh, seal.Recorded{Key: key, Digest: d, Answer: record})
		r.startAnswered()
		r.answered = append(r.answered, -len(r.fresh))
		r.asked.set(key, asked{digest: d, answer: raw})
		return raw, nil
	}
	r.issue(key, req, d)
	return nil, r.pendingError(key)
}

// startAnswered makes room in r.answered for the answers this run is
// likely to hand over (expected), in the book's own buffer when they fit.
// r.mu is held.
func (r *Round) startAnswered() {
	if r.answered != nil {
		return
	}
	if n := r.expected(); n <= len(r.answeredBuf) {
		r.answered = r.answeredBuf[:0]
	} else {
		r.answered = make([]int, 0, n)
	}
}

// expected is how many questions this run is likely to ask: those the
// state recorded or issued, and one more. It sizes the run's tables once.
func (r *Round) expected() int {
	if r.state == nil {
		return 1
	}
	return len(r.state.Answers) + len(r.state.Issued) + 1
}

// Require records req under key as a question of the next round whatever
// answer this request carries for it: the handler has looked at the answer
// (for a URL elicitation, accept means only consent) and must ask again.
// It returns an error wrapping mrtr.ErrInputRequired, or the failures of
// Ask.
func (r *Round) Require(key string, req mrtr.InputRequest) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return fmt.Errorf("input request %s: %w", clip.Quote(key), err)
	}
	if err := req.CheckCapabilities(r.caps); err != nil {
		return err
	}
	d, err := digestOf(req, r.opts.Digests)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.ensure()
	defer r.mu.Unlock()
	prev, dup := r.asked.get(key)
	if !dup {
		if ri := r.recordedIndex(key); ri >= 0 && r.handed[ri] {
			prev, dup = asked{digest: r.state.Answers[ri].Digest}, true
		}
	}
	if dup && prev.digest != d {
		return fmt.Errorf("input request key %s was asked twice with different requests", clip.Quote(key))
	}
	if !r.asked.started() {
		r.asked.start(1, &r.askedBuf)
	}
	if a, _ := r.asked.get(key); !a.issued {
		r.issue(key, req, d)
	}
	return &inputRequiredError{key: key}
}

// issue records a pending question. r.mu is held.
func (r *Round) issue(key string, req mrtr.InputRequest, d seal.Digest) {
	r.asked.set(key, asked{digest: d, issued: true})
	r.pending = append(r.pending, Keyed{Key: key, Request: req})
}

// stateIssued returns the digest the verified state issued under key.
// A state issues few questions, searched one by one; past askedScanMax
// they are looked up in a map built once. r.mu is held, r.state is not
// nil.
func (r *Round) stateIssued(key string) (seal.Digest, bool) {
	is := r.state.Issued
	if len(is) <= askedScanMax {
		return is.Lookup(key)
	}
	if r.issuedIndex == nil {
		r.issuedIndex = make(map[string]seal.Digest, len(is))
		for _, q := range is { // the last under a key counts, as in Lookup
			r.issuedIndex[q.Key] = q.Digest
		}
	}
	d, ok := r.issuedIndex[key]
	return d, ok
}

// answer returns the raw answer under key if it may be handed over: it
// answers a question the verified state issued with the same digest, or
// there is no state and AnswersWithoutState is set.
func (r *Round) answer(key string, d seal.Digest) (json.RawMessage, bool) {
	raw, ok := r.responses.Get(key)
	if !ok {
		return nil, false
	}
	if r.state == nil {
		if !r.opts.AnswersWithoutState {
			return nil, false
		}
	} else if issued, ok := r.stateIssued(key); !ok || issued != d {
		return nil, false
	}
	return bytes.TrimSpace(raw), true
}

// Pending returns the questions asked and not answered in this round, in
// the order they were asked.
func (r *Round) Pending() Requests {
	r.mu.Lock()
	r.ensure()
	defer r.mu.Unlock()
	return slices.Clone(r.pending)
}

// Suspension is a suspended call: the questions to ask and the sealed
// state to echo.
type Suspension struct {
	// Questions are the input requests to send, in the order asked.
	Questions Requests
	// RequestState is the sealed state to send with them.
	RequestState string
	// Flow is the id of the flow the state belongs to.
	Flow seal.FlowID
}

// Suspended builds the input_required result that ends this round: it
// seals a state bound to b that records the issued questions, every answer
// handed over in this run, the round's number and the payload from
// SaveState. It fails if the handler neither asked anything nor called
// Suspend, and with the ordering error if its questions without keys were
// asked out of order (whatever the handler did with that error).
//
// The Suspension is returned by value: the caller keeps it on its stack
// while it writes the result (an allocation fewer per suspended round).
func (r *Round) Suspended(s *seal.Sealer, b seal.Binding) (Suspension, error) {
	r.mu.Lock()
	r.ensure()
	defer r.mu.Unlock()
	if r.orderErr != nil {
		return Suspension{}, r.orderErr
	}
	if len(r.pending) == 0 && !r.suspend {
		return Suspension{}, errors.New("handler returned ErrInputRequired without asking for input")
	}
	// The issued and answered lists are built on this frame when they
	// are short: Seal only reads them (it leaks none of st's contents),
	// so a suspended round of a few questions allocates neither (one
	// allocation fewer per two-round flow; BenchmarkMRTRTwoRounds,
	// 2026-12-04).
	var ib [suspendBuf]seal.IssuedRequest
	var ab [suspendBuf]seal.Recorded
	st := &seal.State{Binding: b, Payload: r.next, Issued: r.issued(ib[:0]), Answers: r.answers(ab[:0]), Round: r.Number(), Flow: r.nextFlow()}
	tok, err := s.Seal(st)
	if err != nil {
		return Suspension{}, err
	}
	// The questions are r.pending itself, capped: issue only appends to
	// it, so what the Suspension holds is never written again (an
	// allocation and a copy fewer per suspended round than a clone).
	return Suspension{Questions: r.pending[:len(r.pending):len(r.pending)], RequestState: tok, Flow: st.Flow.ID}, nil
}

// suspendBuf is how many issued questions and handed answers Suspended
// lists on its own frame before it allocates.
const suspendBuf = 2

// issued returns the questions issued in this run, in order, to be
// sealed, in buf when they fit. r.mu is held.
func (r *Round) issued(buf seal.Issued) seal.Issued {
	if len(r.pending) == 0 {
		return nil
	}
	out := buf[:0]
	if cap(out) < len(r.pending) {
		out = make(seal.Issued, 0, len(r.pending))
	}
	for _, kr := range r.pending {
		a, _ := r.asked.get(kr.Key)
		out = append(out, seal.IssuedRequest{Key: kr.Key, Digest: a.digest})
	}
	return out
}

// answers returns the answers handed over in this run, in order, to be
// sealed, in buf when they fit. r.mu is held.
func (r *Round) answers(buf []seal.Recorded) []seal.Recorded {
	if len(r.answered) == 0 {
		return nil
	}
	out := buf[:0]
	if cap(out) < len(r.answered) {
		out = make([]seal.Recorded, 0, len(r.answered))
	}
	for _, i := range r.answered {
		if i >= 0 {
			out = append(out, r.state.Answers[i])
		} else {
			out = append(out, r.fresh[-1-i])
		}
	}
	return out
}

// ErrReplayOrder is wrapped by the error of a question without a key asked
// in another order than in the previous round. It is a fault of the
// handler; the server answers it with -32603.
var ErrReplayOrder = errors.New("questions asked in a different order than in the previous round")

// replayOrderError names the two questions met in the opposite order.
type replayOrderError struct {
	pos, was, after int
}

func (e *replayOrderError) Error() string {
	return fmt.Sprintf("question %d asks what question %d of the previous round asked, but this run already reached that round's question %d: "+
		"the handler asks in a different order than before (from several goroutines at once, or in an order that depends on "+
		"map iteration or changing data); on the 2026-07-28 protocol questions without a key are matched by position, so ask "+
		"them in one fixed order, give each its own key (server.WithKey), or ask them together (Call.AskAll)", e.pos, e.was, e.after)
}

func (e *replayOrderError) Is(target error) bool { return target == ErrReplayOrder }

// RPCError converts the error to its wire form.
func (e *replayOrderError) RPCError() *mcp.Error {
	return &mcp.Error{Code: mcp.InternalError, Message: "Internal error: " + e.Error()}
}

// keepOrder matches the question at pos (digest d) with a position of the
// previous run holding the same question: the first not met yet after the
// last one met. When the only such positions come before the last one met,
// this run reaches two questions in the opposite order, and the failure is
// kept. Added and dropped questions never cause it. r.mu is held.
func (r *Round) keepOrder(pos int, d seal.Digest) error {
	if r.state == nil {
		return nil
	}
	o := r.order
	if o == nil {
		o = &replayOrder{script: make(map[int]scripted, len(r.state.Answers)+len(r.state.Issued)), lastMet: -1}
		for _, rec := range r.state.Answers {
			if p, ok := autoPos(rec.Key); ok {
				o.script[p] = scripted{digest: rec.Digest}
			}
		}
		for _, is := range r.state.Issued {
			if p, ok := autoPos(is.Key); ok {
				o.script[p] = scripted{digest: is.Digest}
			}
		}
		r.order = o
	}
	next, before := -1, -1
	for p, sc := range o.script {
		switch {
		case sc.digest != d || sc.met:
		case p > o.lastMet:
			if next < 0 || p < next {
				next = p
			}
		default:
			before = max(before, p)
		}
	}
	switch {
	case next >= 0:
		sc := o.script[next]
		sc.met = true
		o.script[next] = sc
		o.lastMet = next
	case before >= 0:
		r.orderErr = &replayOrderError{pos: pos, was: before, after: o.lastMet}
		return r.orderErr
	}
	return nil
}

// Ledger is the method set of server.Ledger, which sits above this
// package.
type Ledger interface {
	Redeem(ctx context.Context, id string, expires time.Time) error
}

// Redeem marks the verified state this request resumes as used, so that
// replaying the same retry fails with the ledger's error replayed
// (server.ErrAlreadyRedeemed), on this instance or any other sharing the
// ledger. A failure of the ledger itself (any other error) fails closed:
// it is returned wrapped in an error whose Internal method reports true,
// so the client gets a generic message and the server log the detail.
func (r *Round) Redeem(ctx context.Context, l Ledger, replayed error) error {
	if r.state == nil {
		return errors.New("redeem: the request carries no verified requestState")
	}
	// Expiry is exact on each instance's own clock, so an instance behind
	// this one accepts the state after this clock has passed its exp; the
	// entry outlives exp by the leeway (the skew the fleet tolerates).
	err := l.Redeem(ctx, "baton:state:"+r.state.ID, r.state.ExpiresAt.Add(r.state.Leeway))
	if err != nil && !errors.Is(err, replayed) {
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
