package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/round"
)

// AskOption tunes one question (or one AskAll).
type AskOption func(*askOptions)

type askOptions struct {
	timeout time.Duration
	key     string
}

// WithTimeout bounds how long a question waits for its answer on a
// 2025-11-25 session or in a task, overriding the default (the legacy
// handler's CallTimeout, or the task's life). It does nothing on the
// stateless protocol, where the server never waits.
func WithTimeout(d time.Duration) AskOption { return func(o *askOptions) { o.timeout = d } }

// WithKey names the question key in the input_required result and in the
// client's answers, instead of a name from its position. Keys are 1 to 128
// bytes without control characters, unique within the call, and may not
// start with "baton:". A question with a key of its own keeps its answer
// whatever order it is asked in. It is ignored by AskAll (name those
// questions with mrtr.InputRequest.Keyed). In a task the key must also be
// new for the task's life (a task's keys are unique for its life); a
// question without one is named by its position in the task, baton:0
// first, as in rounds.
func WithKey(key string) AskOption { return func(o *askOptions) { o.key = key } }

func collect(opts []AskOption) askOptions {
	var o askOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Answer is the client's answer to one question of AskAll: the field for
// the question's kind is set.
type Answer struct {
	// Elicit answers an elicitation (validated against the schema that
	// was sent when accepted).
	Elicit *elicit.Result
	// Sample answers a sampling request.
	Sample *mcp.CreateMessageResult
	// Roots answers a roots listing.
	Roots *mcp.ListRootsResult
}

// Elicit asks the client to elicit req from the user and returns the
// answer, validated against the schema that was sent. Decline and cancel
// are results (Action), not errors. It fails with a
// *mcp.MissingCapabilityError (and asks nothing) when the client did
// not declare the mode; see "Asking the client" above for the rest.
func (c *Call) Elicit(ctx context.Context, req *elicit.Request, opts ...AskOption) (*elicit.Result, error) {
	if req == nil {
		return nil, errors.New("elicit: nil request")
	}
	// Stateless: a round and no waiting backend (waiter() is nil without
	// a task or a peer; tested here without its call, once per answer a
	// retry carries).
	if c.round != nil && (c.task == nil && c.peer == nil || c.waiter() == nil) {
		return c.elicitReplay(req, opts)
	}
	b := collectOne(opts)
	ir := mrtr.ElicitRequest(req).Keyed(b.opts.key)
	ans, err := c.askAll(ctx, []mrtr.InputRequest{ir}, b.opts, b)
	if err != nil {
		return nil, err
	}
	return ans[0].Elicit, nil
}

// CreateFormElicitation asks the user to fill a form; see Elicit.
func (c *Call) CreateFormElicitation(ctx context.Context, message string, schema *elicit.Schema, opts ...AskOption) (*elicit.Result, error) {
	return c.Elicit(ctx, &elicit.Request{Mode: elicit.ModeForm, Message: message, RequestedSchema: schema}, opts...)
}

// CreateURLElicitation asks the user to open url; see Elicit. Accept means
// only that the user agreed to open it: decide on a later question, or on
// the retry, whether what the page does has happened. elicitationID names
// the interaction for a 2025-11-25 client, so that
// NotifyElicitationComplete can close it later; 2026-07-28 clients never
// see it.
func (c *Call) CreateURLElicitation(ctx context.Context, elicitationID, message, url string, opts ...AskOption) (*elicit.Result, error) {
	return c.Elicit(ctx, &elicit.Request{Mode: elicit.ModeURL, Message: message, URL: url, ElicitationID: elicitationID}, opts...)
}

// CreateMessage asks the client to sample its model; see Elicit for the
// failures.
func (c *Call) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams, opts ...AskOption) (*mcp.CreateMessageResult, error) {
	if p == nil {
		return nil, errors.New("create message: nil params")
	}
	b := collectOne(opts)
	ans, err := c.askAll(ctx, []mrtr.InputRequest{mrtr.SampleRequest(p).Keyed(b.opts.key)}, b.opts, b)
	if err != nil {
		return nil, err
	}
	return ans[0].Sample, nil
}

// ListRoots asks the client for its roots; see Elicit for the failures.
func (c *Call) ListRoots(ctx context.Context, opts ...AskOption) (*mcp.ListRootsResult, error) {
	b := collectOne(opts)
	ans, err := c.askAll(ctx, []mrtr.InputRequest{mrtr.RootsRequest().Keyed(b.opts.key)}, b.opts, b)
	if err != nil {
		return nil, err
	}
	return ans[0].Roots, nil
}

// AskAll asks several questions at once: in one input_required round on
// the stateless protocol, concurrently on a 2025-11-25 session. It returns
// the answers in order, or the first failure (on the stateless protocol,
// an error wrapping mrtr.ErrInputRequired while any is unanswered). Name a
// question with mrtr.InputRequest.Keyed; WithKey is ignored here.
func (c *Call) AskAll(ctx context.Context, reqs []mrtr.InputRequest, opts ...AskOption) ([]Answer, error) {
	o := collect(opts)
	o.key = ""
	return c.askAll(ctx, reqs, o, nil)
}

// CloseStream ends the response stream of a 2025-11-25 request now,
// before its response, so that no connection is held while the handler
// goes on (SSE polling, SEP-1699): the stream gets an event id and a
// retry field, and the client reconnects with GET and Last-Event-ID for
// what follows, its response included. It reports whether the stream was
// ended; it does nothing (false) for a 2026-07-28 request, for a session
// of an older revision (their clients do not poll), over stdio, and for a
// client that did not accept text/event-stream.
func (c *Call) CloseStream() bool {
	p, ok := c.peer.(interface{ CloseStream() bool })
	return ok && p.CloseStream()
}

// ErrLegacyOnly is returned by NotifyElicitationComplete outside a
// 2025-11-25 session: the notification does not exist in 2026-07-28.
var ErrLegacyOnly = errors.New("notifications/elicitation/complete exists only in the 2025-11-25 protocol")

// NotifyElicitationComplete tells a 2025-11-25 client that the URL
// elicitation elicitationID has completed.
func (c *Call) NotifyElicitationComplete(ctx context.Context, elicitationID string) error {
	if elicitationID == "" {
		return errors.New("notify elicitation complete: empty elicitationId")
	}
	if c.peer == nil {
		return ErrLegacyOnly
	}
	return c.peer.Notify(ctx, "notifications/elicitation/complete", map[string]string{"elicitationId": elicitationID})
}

// SaveState stores v (as JSON) to be sealed into the requestState of the
// input_required result this round ends with; the next round reads it
// back with LoadState. Answers need no SaveState (they are recorded
// already): keep it for what is costly to compute again. It travels,
// encrypted, with every retry, so keep it small. On a 2025-11-25 session
// and in a task questions are live and the handler runs once, so LoadState
// reports false, except after Suspend: the legacy adapter then runs the
// handler again with the state it saved.
func (c *Call) SaveState(v any) error {
	if c.round == nil {
		return ErrNoPeer
	}
	return c.round.SaveState(v)
}

// LoadState decodes into v what the previous round stored with SaveState.
// It reports false, leaving v alone, when there is nothing (the first
// round, or a previous round that saved nothing).
func (c *Call) LoadState(v any) (bool, error) {
	if c.round == nil {
		return false, nil
	}
	return c.round.LoadState(v)
}

// Suspend ends the round with an input_required result that carries only
// a requestState: the client retries at once, and any instance resumes
// (load shedding). It returns an error wrapping mrtr.ErrInputRequired for
// the handler to return.
func (c *Call) Suspend() error {
	if c.round == nil {
		return ErrNoPeer
	}
	return c.round.Suspend()
}

// Redeem makes this retry single-use: it marks the verified requestState
// the request resumes as used in l, so that replaying the same retry (the
// same state and answers) fails with ErrAlreadyRedeemed, on this
// instance or any other sharing the ledger. Call it once the confirmation
// is known and before acting on it. A failure of the ledger itself fails
// closed, marked internal (the client sees a generic message). It fails
// when a stateless request resumes no state (a first round). On a
// 2025-11-25 session and in a task, where the answers come from a live
// exchange and the handler runs once, there is no retry to replay, and
// Redeem succeeds without a ledger entry. The ledger's call is bounded by
// Options.StoreTimeout.
func (c *Call) Redeem(ctx context.Context, l Ledger) error {
	if c.waiter() != nil {
		return nil // answers from a live exchange: no retry to replay
	}
	if c.round == nil {
		return errors.New("redeem: the request carries no requestState")
	}
	if c.storeTimeout > 0 { // Options.StoreTimeout bounds the ledger's call
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.storeTimeout)
		defer cancel()
	}
	return c.round.Redeem(ctx, l, ErrAlreadyRedeemed)
}

// Round is the request's round on the stateless protocol: 1 for a first
// attempt, n for the n-th attempt of a multi round-trip exchange (the
// count travels, sealed, in the requestState). On a 2025-11-25 session it
// is 1, and counts the re-runs after Suspend. It is 0 for requests that
// cannot ask (completion/complete).
func (c *Call) Round() int {
	if c.round == nil {
		return 0
	}
	return c.round.Number()
}

// Principal is the authenticated subject the request was made for
// (PrincipalFromContext), or "" when anonymous.
func (c *Call) Principal() string { return c.principal }

// Capabilities are the client capabilities declared on this request (on a
// 2025-11-25 session, at initialize).
func (c *Call) Capabilities() mcp.ClientCapabilities { return c.Meta.ClientCapabilities }

// asker is a backend of the questions that waits for the real answers: a
// 2025-11-25 session's Peer (a round trip per call), or a running task
// (questions published on tasks/get, answers delivered by tasks/update).
// The third backend, replay through the round, is not an asker: it never
// waits.
type asker interface {
	// ask puts the questions to the client at once and returns their raw
	// answers in order. A timeout of zero means the backend's default.
	ask(ctx context.Context, irs []mrtr.InputRequest, timeout time.Duration) ([]json.RawMessage, error)
}

// peerAsker asks over a legacy session's Peer.
type peerAsker struct{ p era.Peer }

// stayPeer is the Peer of a call of a RunsOnce tool: its questions wait
// in place (a wrapper, not a field of Call, which every call allocates).
type stayPeer struct{ era.Peer }

// Request asks as the Peer does, with stay set.
func (p stayPeer) Request(ctx context.Context, reqs []era.PeerRequest, timeout time.Duration, _ bool) ([]json.RawMessage, error) {
	return p.Peer.Request(ctx, reqs, timeout, true)
}

// CloseStream forwards Call.CloseStream to the peer.
func (p stayPeer) CloseStream() bool {
	c, ok := p.Peer.(interface{ CloseStream() bool })
	return ok && c.CloseStream()
}

func (a peerAsker) ask(ctx context.Context, irs []mrtr.InputRequest, timeout time.Duration) ([]json.RawMessage, error) {
	preqs := make([]era.PeerRequest, len(irs))
	for i, ir := range irs {
		preqs[i] = era.PeerRequest{Method: ir.Method(), Params: ir.Params()}
	}
	return a.p.Request(ctx, preqs, timeout, false)
}

// waiter returns the call's waiting backend, or nil when it replays.
func (c *Call) waiter() asker {
	switch {
	case c.task.running():
		return c.task
	case c.peer != nil:
		return peerAsker{c.peer}
	}
	return nil
}

// askAll checks the questions, asks them through the call's backend and
// returns the checked answers.
func (c *Call) askAll(ctx context.Context, irs []mrtr.InputRequest, o askOptions, one *askOne) ([]Answer, error) {
	w := c.waiter()
	var keys map[string]bool // duplicate keys: only a batch can have them
	if len(irs) > 1 {
		keys = make(map[string]bool, len(irs))
	}
	var prepared []mrtr.InputRequest
	var out []Answer
	if one != nil && len(irs) == 1 {
		prepared, out = one.prepared[:], one.out[:]
	} else {
		prepared, out = make([]mrtr.InputRequest, len(irs)), make([]Answer, len(irs))
	}
	_, isPeer := w.(peerAsker)
	for i, ir := range irs {
		if k := ir.Key(); k != "" {
			if keys[k] {
				return nil, fmt.Errorf("question key %s is used twice in one AskAll", clip.Quote(k))
			}
			if keys != nil {
				keys[k] = true
			}
		}
		var err error
		if prepared[i], err = c.prepare(ir, isPeer); err != nil {
			return nil, err
		}
	}
	// check checks the answer to question i and returns the form in which
	// to record it (round.Check): an elicitation answer the sealed state
	// recorded in the checked form is handed over as it is; every other
	// answer gets every check.
	check := func(i int, raw json.RawMessage, recorded bool) (json.RawMessage, error) {
		var err error
		switch ir := prepared[i]; ir.Method() {
		case mrtr.MethodElicit:
			var record json.RawMessage
			out[i].Elicit, record, err = c.checkElicit(ir.Elicitation(), raw, recorded)
			return record, err
		case mrtr.MethodSample:
			out[i].Sample, err = mcp.ParseCreateMessageResult(raw)
		case mrtr.MethodListRoots:
			out[i].Roots, err = mcp.ParseListRootsResult(raw)
		}
		return nil, err
	}
	if w != nil {
		raws, err := w.ask(ctx, prepared, o.timeout)
		if err != nil {
			return nil, err
		}
		for i, raw := range raws {
			if _, err := check(i, raw, false); err != nil {
				return nil, fmt.Errorf("%s: the client's answer is invalid: %w", prepared[i].Method(), err)
			}
		}
		return out, nil
	}
	if c.round == nil {
		return nil, ErrNoPeer
	}
	// One question at a time, so positions follow the order in which
	// questions reach the round, and a batch takes consecutive positions.
	c.mu.Lock()
	defer c.mu.Unlock()
	first := c.pos
	c.pos += len(prepared)
	var fail error   // the first failure
	var errs []error // every failure, once there are two
	for i, ir := range prepared {
		key := ir.Key()
		if key == "" {
			key = round.AutoKey(first + i)
		}
		_, err := c.round.AskValid(first+i, key, ir, func(raw json.RawMessage, recorded bool) (json.RawMessage, error) {
			return check(i, raw, recorded)
		})
		switch {
		case err == nil:
		case fail == nil:
			fail = err
		case errs == nil:
			errs = []error{fail, err}
		default:
			errs = append(errs, err)
		}
	}
	if errs != nil {
		return nil, errors.Join(errs...)
	}
	if fail != nil {
		return nil, fail // one failure as it is: a round asks its first question on every request
	}
	return out, nil
}

// prepare makes the checks of one question before it is asked: its key
// (if any) is valid and not the server's own, the request is valid and
// the client declared what it needs; a 2026-07-28 elicitation loses its
// elicitationId, and a 2025-11-25 URL elicitation must have one. It
// returns the request to ask.
func (c *Call) prepare(ir mrtr.InputRequest, isPeer bool) (mrtr.InputRequest, error) {
	if k := ir.Key(); k != "" {
		if err := checkUserKey(k); err != nil {
			return ir, err
		}
	}
	prepared := ir
	if ir.Method() != mrtr.MethodElicit {
		if err := ir.Validate(); err != nil {
			return ir, err
		}
	} else if e := ir.Elicitation(); e == nil {
		return ir, errors.New("elicit: nil request")
	} else {
		if err := e.Validate(); err != nil {
			return ir, fmt.Errorf("elicit: %w", err)
		}
		if isPeer {
			if e.Mode == elicit.ModeURL && e.ElicitationID == "" {
				return ir, errors.New("elicit: a URL elicitation to a 2025-11-25 client needs an elicitationId")
			}
		} else if e.ElicitationID != "" {
			modern := *e
			modern.ElicitationID = "" // not part of 2026-07-28
			prepared = mrtr.ElicitRequest(&modern).Keyed(ir.Key())
		}
	}
	if err := prepared.CheckCapabilities(c.Meta.ClientCapabilities); err != nil {
		return ir, err
	}
	return prepared, nil
}

// checkUserKey checks a question key the handler gave (WithKey,
// mrtr.InputRequest.Keyed): valid, and not in the server's namespace.
func checkUserKey(k string) error {
	if strings.HasPrefix(k, round.AutoKeyPrefix) {
		return fmt.Errorf("question key %s: keys beginning %q are the server's own", clip.Quote(k), round.AutoKeyPrefix)
	}
	return round.CheckKey(k)
}

// askOne holds what asking one question (Elicit, CreateMessage,
// ListRoots) needs: its options, the prepared request and the answer, in
// one allocation.
type askOne struct {
	opts     askOptions
	prepared [1]mrtr.InputRequest
	out      [1]Answer
}

// collectOne applies opts to a new askOne.
func collectOne(opts []AskOption) *askOne {
	b := new(askOne)
	for _, f := range opts {
		f(&b.opts)
	}
	return b
}
