package mrtr

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/jsonw"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// The methods an input request may carry.
const (
	MethodElicit    = "elicitation/create"
	MethodSample    = "sampling/createMessage"
	MethodListRoots = "roots/list"
)

// InputRequest is one request a server embeds in an input_required result:
// an elicitation, a sampling request or a roots listing. Build one with
// ElicitRequest, SampleRequest or RootsRequest.
type InputRequest struct {
	method string
	elicit *elicit.Request
	sample *mcp.CreateMessageParams
	key    string
}

// Keyed returns r to be asked under key: the name of the question in the
// input_required result's inputRequests and in the client's
// inputResponses. Without a key the server names the question itself, in
// a namespace of its own ("baton:" and a number), so user keys may not
// start with "baton:". Keys are at most 128 bytes, without control
// characters, and unique within a call.
func (r InputRequest) Keyed(key string) InputRequest {
	r.key = key
	return r
}

// Key returns the key given with Keyed, or "".
func (r InputRequest) Key() string { return r.key }

// ElicitRequest wraps an elicitation request.
func ElicitRequest(r *elicit.Request) InputRequest {
	return InputRequest{method: MethodElicit, elicit: r}
}

// SampleRequest wraps a sampling request.
func SampleRequest(p *mcp.CreateMessageParams) InputRequest {
	return InputRequest{method: MethodSample, sample: p}
}

// RootsRequest returns a roots/list request.
func RootsRequest() InputRequest { return InputRequest{method: MethodListRoots} }

// Method returns the JSON-RPC method of the request.
func (r InputRequest) Method() string { return r.method }

// Elicitation returns the elicitation request, or nil.
func (r InputRequest) Elicitation() *elicit.Request { return r.elicit }

// Sampling returns the sampling request, or nil.
func (r InputRequest) Sampling() *mcp.CreateMessageParams { return r.sample }

// Params returns the request's params, ready to marshal (nil for roots).
func (r InputRequest) Params() any {
	switch r.method {
	case MethodElicit:
		return r.elicit
	case MethodSample:
		return r.sample
	}
	return nil
}

// Validate checks that the request is well formed.
func (r InputRequest) Validate() error {
	switch r.method {
	case MethodElicit:
		if r.elicit == nil {
			return errors.New("elicitation request without params")
		}
		if err := r.elicit.Validate(); err != nil {
			return fmt.Errorf("elicitation request: %w", err)
		}
		if r.elicit.ElicitationID != "" {
			return errors.New("elicitation request: elicitationId belongs to the 2025-11-25 protocol; a modern URL elicitation is exactly mode, message and url")
		}
	case MethodSample:
		if r.sample == nil {
			return errors.New("sampling request without params")
		}
		if err := r.sample.Validate(); err != nil {
			return fmt.Errorf("sampling request: %w", err)
		}
	case MethodListRoots:
	case "":
		return errors.New("empty input request")
	default:
		return fmt.Errorf("method %q cannot be an input request", r.method)
	}
	return nil
}

// elicitWhat names an elicitation of mode in a refusal. The two modes have
// constant names: this runs for every question of every round, and a
// message built by concatenation would allocate even when nothing is
// refused.
func elicitWhat(mode string) string {
	switch mode {
	case elicit.ModeForm:
		return "an elicitation/create input request in form mode"
	case elicit.ModeURL:
		return "an elicitation/create input request in url mode"
	}
	return "an elicitation/create input request in " + mode + " mode"
}

// CheckCapabilities returns a *mcp.MissingCapabilityError when caps do not
// declare what the request needs.
func (r InputRequest) CheckCapabilities(caps mcp.ClientCapabilities) error {
	switch r.method {
	case MethodElicit:
		// The declared case first, without building the description an
		// error would need: a handler replaying from the top asks every
		// earlier question again, so this runs once per answer a retry
		// carries.
		switch mode := r.elicit.Mode; {
		case (mode == "" || mode == elicit.ModeForm) && caps.CanElicitForm():
			return nil
		case mode == elicit.ModeURL && caps.CanElicitURL():
			return nil
		}
		mode := r.elicit.Mode
		if mode == "" {
			mode = elicit.ModeForm
		}
		return caps.RequireElicitation(elicitWhat(mode), mode)
	case MethodSample:
		if err := caps.RequireSampling("a sampling/createMessage input request"); err != nil {
			return err
		}
		if (len(r.sample.Tools) > 0 || r.sample.ToolChoice != nil) && caps.Sampling.Tools == nil {
			return &mcp.MissingCapabilityError{
				Required: mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{Tools: &mcp.Empty{}}},
				What:     "a sampling request with tools",
			}
		}
		if ic := r.sample.IncludeContext; ic != "" && ic != "none" && caps.Sampling.Context == nil {
			return &mcp.MissingCapabilityError{
				Required: mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{Context: &mcp.Empty{}}},
				What:     "a sampling request with includeContext " + ic,
			}
		}
		return nil
	case MethodListRoots:
		return caps.RequireRoots("a roots/list input request")
	}
	return fmt.Errorf("method %q cannot be an input request", r.method)
}

type inputRequestWire struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// MarshalJSON writes the bare {method, params} form (see AppendJSON).
func (r InputRequest) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// UnmarshalJSON reads the bare {method, params} form and validates it. The
// params of roots/list, absent or not, are ignored.
func (r *InputRequest) UnmarshalJSON(data []byte) error {
	var w inputRequestWire
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("input request: %w", err)
	}
	out := InputRequest{method: w.Method}
	switch w.Method {
	case MethodElicit:
		out.elicit = new(elicit.Request)
		if err := strictjson.Unmarshal(w.Params, out.elicit); err != nil {
			return fmt.Errorf("elicitation request params: %w", err)
		}
	case MethodSample:
		out.sample = new(mcp.CreateMessageParams)
		if err := strictjson.Unmarshal(w.Params, out.sample); err != nil {
			return fmt.Errorf("sampling request params: %w", err)
		}
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*r = out
	return nil
}

// AppendJSON appends the bare {method, params} form to dst; roots/list
// carries "params":{}.
func (r InputRequest) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"method":`...)
	dst = jsonw.String(dst, r.method)
	switch r.method {
	case MethodElicit:
		dst = append(dst, `,"params":`...)
		dst = r.elicit.AppendJSON(dst)
	case MethodSample:
		b, err := json.Marshal(r.sample)
		if err != nil {
			return nil, fmt.Errorf("encode %s params: %w", r.method, err)
		}
		dst = append(dst, `,"params":`...)
		dst = append(dst, b...)
	case MethodListRoots:
		// The specification allows params to be absent, but some clients
		// (the official go-sdk v1.8.0) fail to decode a request without
		// them; an empty object suits every client.
		dst = append(dst, `,"params":{}`...)
	}
	return append(dst, '}'), nil
}

// maxKeyLength bounds input request keys.
const maxKeyLength = 128
