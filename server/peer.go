package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/jsonrpc"
	"github.com/baton-mcp/baton/mrtr"
)

// ErrTimeout is wrapped by the error of a blocking client call that got no
// answer in time.
var ErrTimeout = errors.New("timed out waiting for the client")

// ErrNoPeer is returned by the blocking client calls of a request that has
// neither a legacy session to send requests on nor a Round to replay
// through (for example completion/complete).
var ErrNoPeer = errors.New("this request cannot ask its client for input")

// CallOption tunes one blocking client call.
type CallOption func(*callOptions)

type callOptions struct {
	timeout time.Duration
}

// WithTimeout bounds how long a blocking client call waits, overriding the
// server-wide default.
func WithTimeout(d time.Duration) CallOption { return func(o *callOptions) { o.timeout = d } }

func collect(opts []CallOption) callOptions {
	var o callOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// ClientError is an error response the client sent to a server-to-client
// request.
type ClientError struct {
	Method string
	Err    *jsonrpc.Error
}

// Error names the request and the client's error.
func (e *ClientError) Error() string {
	return fmt.Sprintf("the client answered %s with error %d: %s", e.Method, e.Err.Code, e.Err.Message)
}

// Blocking client calls.
//
// A handler may ask its client for input in the blocking style:
//
//	res, err := req.CreateFormElicitation(ctx, "Your name?", schema)
//	if err != nil {
//		return nil, err
//	}
//
// For a 2025-11-25 session the call is a real round trip: a request on the
// stream of the client request being served (SEP-2260), checked against
// the session's capabilities, waiting at most the server-wide timeout (600
// s by default) or WithTimeout.
//
// For a 2026-07-28 request, where no server may wait for its client, the
// call replays: when its answer is not known yet it returns an error
// wrapping mrtr.ErrInputRequired, which the handler passes up like any
// error; the server answers input_required with the question and seals
// (encrypts) every answer given so far into the requestState. On the retry
// the handler runs again from the top and each call returns its recorded
// answer, in order, until it reaches the new one. Answers are keyed by the
// call's position and the digest of its question, so a handler whose
// questions changed between rounds is asked again rather than handed the
// wrong answer. The contract: code before a question runs again on every
// round, so it must be safe to repeat (read, compute, ask; act only at the
// end, and make the action single-use with mrtr.Round.Redeem where it
// matters), and questions are asked in one fixed order (see Call about
// calls from several goroutines).

// Elicit asks the client to elicit req from the user and returns the
// answer, validated against the schema that was sent. Decline and cancel
// are results, not errors. It fails with a *client.MissingCapabilityError
// (and asks nothing) when the client did not declare the mode; see the
// blocking client calls above for the rest.
func (c *Call) Elicit(ctx context.Context, req *elicit.Request, opts ...CallOption) (*elicit.Result, error) {
	res, err := c.ElicitAll(ctx, []*elicit.Request{req}, opts...)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// ElicitAll asks several questions at once (in one round, or concurrently
// on a legacy session) and returns the answers in order.
func (c *Call) ElicitAll(ctx context.Context, reqs []*elicit.Request, opts ...CallOption) ([]*elicit.Result, error) {
	irs := make([]mrtr.InputRequest, len(reqs))
	for i, req := range reqs {
		if req == nil {
			return nil, errors.New("elicit: nil request")
		}
		if err := req.Validate(); err != nil {
			return nil, fmt.Errorf("elicit: %w", err)
		}
		mode := req.Mode
		if mode == "" {
			mode = elicit.ModeForm
		}
		if err := c.Meta.ClientCapabilities.RequireElicitation("elicitation/create ("+mode+" mode)", mode); err != nil {
			return nil, err
		}
		if c.peer != nil {
			if mode == elicit.ModeURL && req.ElicitationID == "" {
				return nil, errors.New("elicit: a URL elicitation to a 2025-11-25 client needs an elicitationId")
			}
			irs[i] = mrtr.ElicitRequest(req)
		} else {
			modern := *req
			modern.ElicitationID = "" // not part of 2026-07-28
			irs[i] = mrtr.ElicitRequest(&modern)
		}
	}
	out := make([]*elicit.Result, len(reqs))
	err := c.ask(ctx, irs, opts, func(i int, raw json.RawMessage) error {
		res, err := reqs[i].CheckResult(raw)
		out[i] = res
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// asker is a backend of the blocking client calls that waits for the real
// answers: a 2025-11-25 session's Peer (a round trip per call), or a
// running task (questions published on tasks/get, answers delivered by
// tasks/update). The third backend, replay through the Round, is not an
// asker: it never waits.
type asker interface {
	// ask puts the questions to the client at once and returns their raw
	// answers in order. A timeout of zero means the backend's default.
	ask(ctx context.Context, irs []mrtr.InputRequest, timeout time.Duration) ([]json.RawMessage, error)
}

// peerAsker asks over a legacy session's Peer.
type peerAsker struct{ p era.Peer }

func (a peerAsker) ask(ctx context.Context, irs []mrtr.InputRequest, timeout time.Duration) ([]json.RawMessage, error) {
	preqs := make([]era.PeerRequest, len(irs))
	for i, ir := range irs {
		preqs[i] = era.PeerRequest{Method: ir.Method(), Params: ir.Params()}
	}
	return a.p.Request(ctx, preqs, timeout)
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

// ask runs blocking questions: over a waiting backend (legacy peer, or a
// task), or by replay through the Round. check validates the i-th raw
// answer.
func (c *Call) ask(ctx context.Context, irs []mrtr.InputRequest, opts []CallOption, check func(i int, raw json.RawMessage) error) error {
	if w := c.waiter(); w != nil {
		raws, err := w.ask(ctx, irs, collect(opts).timeout)
		if err != nil {
			return err
		}
		for i, raw := range raws {
			if err := check(i, raw); err != nil {
				return fmt.Errorf("%s: the client's answer is invalid: %w", irs[i].Method(), err)
			}
		}
		return nil
	}
	if c.Round == nil {
		return ErrNoPeer
	}
	// One ask at a time, so positions follow the order in which asks
	// reach the Round and a batch takes consecutive positions.
	c.mu.Lock()
	defer c.mu.Unlock()
	first := c.pos
	c.pos += len(irs)
	var errs []error
	for i, ir := range irs {
		_, err := c.Round.Replay(first+i, ir, func(raw json.RawMessage) error { return check(i, raw) })
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// CreateFormElicitation asks the user to fill a form; see Elicit.
func (c *Call) CreateFormElicitation(ctx context.Context, message string, schema *elicit.Schema, opts ...CallOption) (*elicit.Result, error) {
	return c.Elicit(ctx, &elicit.Request{Mode: elicit.ModeForm, Message: message, RequestedSchema: schema}, opts...)
}

// CreateURLElicitation asks the user to open url; see Elicit. Accept means
// only that the user agreed to open it. elicitationID names the
// interaction for a 2025-11-25 client, so that NotifyElicitationComplete
// can close it later; 2026-07-28 clients never see it.
func (c *Call) CreateURLElicitation(ctx context.Context, elicitationID, message, url string, opts ...CallOption) (*elicit.Result, error) {
	return c.Elicit(ctx, &elicit.Request{Mode: elicit.ModeURL, Message: message, URL: url, ElicitationID: elicitationID}, opts...)
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

// CreateMessage asks the client to sample its model; see Elicit for the
// failures.
func (c *Call) CreateMessage(ctx context.Context, p *client.CreateMessageParams, opts ...CallOption) (*client.CreateMessageResult, error) {
	if p == nil {
		return nil, errors.New("create message: nil params")
	}
	ir := mrtr.SampleRequest(p)
	if err := ir.Validate(); err != nil {
		return nil, err
	}
	if err := ir.CheckCapabilities(c.Meta.ClientCapabilities); err != nil {
		return nil, err
	}
	var res *client.CreateMessageResult
	err := c.ask(ctx, []mrtr.InputRequest{ir}, opts, func(_ int, raw json.RawMessage) error {
		var err error
		res, err = client.ParseCreateMessageResult(raw)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ListRoots asks the client for its roots; see Elicit for the failures.
func (c *Call) ListRoots(ctx context.Context, opts ...CallOption) (*client.ListRootsResult, error) {
	if err := c.Meta.ClientCapabilities.RequireRoots("roots/list"); err != nil {
		return nil, err
	}
	var res *client.ListRootsResult
	err := c.ask(ctx, []mrtr.InputRequest{mrtr.RootsRequest()}, opts, func(_ int, raw json.RawMessage) error {
		var err error
		res, err = client.ParseListRootsResult(raw)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// URLElicitationRequiredError is returned by a handler that cannot go on
// until the user completes URL elicitations (a sign-in, a payment). A
// 2025-11-25 client receives error -32042 with data.elicitations; a
// 2026-07-28 client, which must never see -32042, receives an
// input_required result with the URL-mode requests (without their
// elicitationId), and retries once the user has been there.
type URLElicitationRequiredError struct {
	// Message explains what is needed.
	Message string
	// Elicitations are URL-mode requests. ElicitationID is required (it is
	// the correlation id for legacy clients and the input request key for
	// modern ones).
	Elicitations []*elicit.Request
}

// Error returns the message.
func (e *URLElicitationRequiredError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return "URL elicitation required"
}

func (e *URLElicitationRequiredError) check() error {
	if len(e.Elicitations) == 0 {
		return errors.New("URL elicitation required without elicitations")
	}
	for i, r := range e.Elicitations {
		if r == nil || r.Mode != elicit.ModeURL {
			return fmt.Errorf("URL elicitation required: elicitation %d is not a URL-mode request", i)
		}
		if r.ElicitationID == "" {
			return fmt.Errorf("URL elicitation required: elicitation %d has no elicitationId", i)
		}
		if err := r.Validate(); err != nil {
			return fmt.Errorf("URL elicitation required: elicitation %d: %w", i, err)
		}
	}
	return nil
}

// urlRequired turns a URLElicitationRequiredError into the era's answer:
// -32042 for legacy requests, input_required for modern ones.
func (s *Server) urlRequired(r *request, mc *mrtrCall, e *URLElicitationRequiredError) (json.RawMessage, *jsonrpc.Error) {
	if err := e.check(); err != nil {
		s.log.Error("handler returned a malformed URLElicitationRequiredError", "err", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.InternalError, Message: "Internal error: " + err.Error()}
	}
	if err := r.meta.ClientCapabilities.RequireElicitation("URL elicitation", elicit.ModeURL); err != nil {
		re, _ := asRPCError(err) // a *client.MissingCapabilityError: -32021
		return nil, re
	}
	if r.legacy {
		return nil, &jsonrpc.Error{Code: jsonrpc.URLElicitationRequired, Message: e.Error(), Data: map[string]any{"elicitations": e.Elicitations}}
	}
	for _, req := range e.Elicitations {
		modern := *req
		modern.ElicitationID = ""
		if err := mc.round.Require(req.ElicitationID, mrtr.ElicitRequest(&modern)); err != nil && !errors.Is(err, mrtr.ErrInputRequired) {
			if re, ok := asRPCError(err); ok {
				return nil, re
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.InternalError, Message: "Internal error: " + err.Error()}
		}
	}
	return s.suspend(r, mc)
}
