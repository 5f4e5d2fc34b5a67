package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/jsonrpc"
	"github.com/baton-mcp/baton/mrtr"
)

// Peer sends server-to-client requests for one call. The legacy era
// provides one for requests of a 2025-11-25 session: each request travels
// on the stream of the client request that caused it (SEP-2260). Modern
// (2026-07-28) calls have none: that protocol forbids server-to-client
// requests, and handlers ask through their Round instead.
type Peer interface {
	// Request sends method with params to the client and waits for its
	// answer. A timeout of zero means the peer's default. On expiry the
	// peer cancels the nested request with the client and returns an error
	// wrapping ErrTimeout; when ctx ends first it returns ctx's error.
	Request(ctx context.Context, method string, params any, timeout time.Duration) (json.RawMessage, error)
	// Notify sends a notification that belongs to the call, or to the
	// session once the call's stream has closed.
	Notify(ctx context.Context, method string, params any) error
}

// ErrTimeout is wrapped by the error of a blocking client call that got no
// answer in time.
var ErrTimeout = errors.New("timed out waiting for the client")

// ErrNoPeer is returned by the blocking client calls of a request that
// cannot send requests to its client.
var ErrNoPeer = errors.New("this request cannot send requests to its client: the 2026-07-28 protocol forbids it; ask through the request's Round")

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

// Elicit asks the client to elicit req from the user and waits for the
// answer, validated against the schema that was sent. Decline and cancel
// are results, not errors. It fails with a *mrtr.MissingCapabilityError
// (and sends nothing) when the client did not declare the mode, and with
// an error wrapping ErrTimeout or the context's error when no answer comes.
func (c *Call) Elicit(ctx context.Context, req *elicit.Request, opts ...CallOption) (*elicit.Result, error) {
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
	if c.peer == nil {
		return nil, ErrNoPeer
	}
	if mode == elicit.ModeURL && req.ElicitationID == "" {
		return nil, errors.New("elicit: a URL elicitation to a 2025-11-25 client needs an elicitationId")
	}
	raw, err := c.peer.Request(ctx, mrtr.MethodElicit, req, collect(opts).timeout)
	if err != nil {
		return nil, err
	}
	res, err := req.CheckResult(raw)
	if err != nil {
		return nil, fmt.Errorf("elicitation/create: the client's answer is invalid: %w", err)
	}
	return res, nil
}

// CreateFormElicitation asks the user to fill a form; see Elicit.
func (c *Call) CreateFormElicitation(ctx context.Context, message string, schema *elicit.Schema, opts ...CallOption) (*elicit.Result, error) {
	return c.Elicit(ctx, &elicit.Request{Mode: elicit.ModeForm, Message: message, RequestedSchema: schema}, opts...)
}

// CreateURLElicitation asks the user to open url; see Elicit. Accept means
// only that the user agreed to open it. elicitationID names the
// interaction so that NotifyElicitationComplete can close it later.
func (c *Call) CreateURLElicitation(ctx context.Context, elicitationID, message, url string, opts ...CallOption) (*elicit.Result, error) {
	return c.Elicit(ctx, &elicit.Request{Mode: elicit.ModeURL, Message: message, URL: url, ElicitationID: elicitationID}, opts...)
}

// NotifyElicitationComplete tells a 2025-11-25 client that the URL
// elicitation elicitationID has completed. It is not part of the
// 2026-07-28 protocol and fails with ErrNoPeer there.
func (c *Call) NotifyElicitationComplete(ctx context.Context, elicitationID string) error {
	if elicitationID == "" {
		return errors.New("notify elicitation complete: empty elicitationId")
	}
	if c.peer == nil {
		return ErrNoPeer
	}
	return c.peer.Notify(ctx, "notifications/elicitation/complete", map[string]string{"elicitationId": elicitationID})
}

// CreateMessage asks the client to sample its model and waits for the
// answer; see Elicit for the failures.
func (c *Call) CreateMessage(ctx context.Context, p *mrtr.CreateMessageParams, opts ...CallOption) (*mrtr.CreateMessageResult, error) {
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
	if c.peer == nil {
		return nil, ErrNoPeer
	}
	raw, err := c.peer.Request(ctx, mrtr.MethodSample, p, collect(opts).timeout)
	if err != nil {
		return nil, err
	}
	res, err := mrtr.ParseCreateMessageResult(raw)
	if err != nil {
		return nil, fmt.Errorf("sampling/createMessage: %w", err)
	}
	return res, nil
}

// ListRoots asks the client for its roots and waits for the answer; see
// Elicit for the failures.
func (c *Call) ListRoots(ctx context.Context, opts ...CallOption) (*mrtr.ListRootsResult, error) {
	if err := c.Meta.ClientCapabilities.RequireRoots("roots/list"); err != nil {
		return nil, err
	}
	if c.peer == nil {
		return nil, ErrNoPeer
	}
	raw, err := c.peer.Request(ctx, mrtr.MethodListRoots, nil, collect(opts).timeout)
	if err != nil {
		return nil, err
	}
	res, err := mrtr.ParseListRootsResult(raw)
	if err != nil {
		return nil, fmt.Errorf("roots/list: %w", err)
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
		var mc *mrtr.MissingCapabilityError
		errors.As(err, &mc)
		return nil, mc.RPCError()
	}
	if r.legacy {
		return nil, &jsonrpc.Error{Code: jsonrpc.URLElicitationRequired, Message: e.Error(), Data: map[string]any{"elicitations": e.Elicitations}}
	}
	for _, req := range e.Elicitations {
		modern := *req
		modern.ElicitationID = ""
		if err := mc.round.Require(req.ElicitationID, mrtr.ElicitRequest(&modern)); err != nil {
			if re, ok := asRPCError(err); ok {
				return nil, re
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.InternalError, Message: "Internal error: " + err.Error()}
		}
	}
	return s.suspend(r, mc)
}
