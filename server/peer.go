package server

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
)

// ErrTimeout is wrapped by the error of a blocking client call that got no
// answer in time.
var ErrTimeout = errors.New("timed out waiting for the client")

// ErrNoPeer is returned by the blocking client calls of a request that has
// neither a legacy session to send requests on nor a round to replay
// through (for example completion/complete).
var ErrNoPeer = errors.New("this request cannot ask its client for input")

// ClientError is an error response the client sent to a server-to-client
// request.
type ClientError struct {
	// Method is the request the client refused, such as
	// "elicitation/create".
	Method string
	// Err is the JSON-RPC error object the client answered with.
	Err *mcp.Error
}

// Error names the request and the client's error.
func (e *ClientError) Error() string {
	return fmt.Sprintf("the client answered %s with error %d: %s", e.Method, e.Err.Code, e.Err.Message)
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
func (s *Server) urlRequired(r *request, mc *mrtrCall, e *URLElicitationRequiredError) (json.RawMessage, *mcp.Error) {
	if err := e.check(); err != nil {
		s.log.Error("handler returned a malformed URLElicitationRequiredError", "err", err)
		return nil, &mcp.Error{Code: mcp.InternalError, Message: "Internal error: " + err.Error()}
	}
	if err := r.meta.ClientCapabilities.RequireElicitation("URL elicitation", elicit.ModeURL); err != nil {
		re, _ := asRPCError(err) // a *mcp.MissingCapabilityError: -32021
		return nil, re
	}
	if r.legacy {
		return nil, &mcp.Error{Code: mcp.URLElicitationRequired, Message: e.Error(), Data: map[string]any{"elicitations": e.Elicitations}}
	}
	for _, req := range e.Elicitations {
		modern := *req
		modern.ElicitationID = ""
		if err := mc.round.Require(req.ElicitationID, mrtr.ElicitRequest(&modern)); err != nil && !errors.Is(err, mrtr.ErrInputRequired) {
			if re, ok := asRPCError(err); ok {
				return nil, re
			}
			return nil, &mcp.Error{Code: mcp.InternalError, Message: "Internal error: " + err.Error()}
		}
	}
	return s.suspend(r, mc)
}
