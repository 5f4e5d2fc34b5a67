package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Empty is a capability flag: present (non-nil) means declared. It encodes
// as {}.
type Empty struct{}

// ClientCapabilities are the capabilities a client declares on one request
// (in _meta "io.modelcontextprotocol/clientCapabilities"). They are never
// carried over from an earlier request. A nil member is omitted, and means
// not declared; {} declares nothing at all.
type ClientCapabilities struct {
	// Elicitation declares that the client can ask its user
	// ("elicitation"), in the modes it lists.
	Elicitation *ElicitationCapability `json:"elicitation,omitempty"`
	// Sampling declares that the client can sample its model
	// ("sampling"; deprecated in 2026-07-28, still valid).
	Sampling *SamplingCapability `json:"sampling,omitempty"`
	// Roots declares that the client can list its roots ("roots";
	// deprecated in 2026-07-28, still valid).
	Roots *RootsCapability `json:"roots,omitempty"`
	// Experimental holds non-standard capabilities by name
	// ("experimental"), each as sent.
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Extensions holds the protocol extensions the client supports, by
	// identifier ("extensions"), each with its settings as sent: for
	// example "io.modelcontextprotocol/tasks": {}.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ElicitationCapability declares elicitation modes. Declaring neither mode
// ({}) means form mode only.
type ElicitationCapability struct {
	// Form declares form mode, a schema the client renders ("form").
	Form *Empty `json:"form,omitempty"`
	// URL declares URL mode, a page the client opens ("url").
	URL *Empty `json:"url,omitempty"`
}

// SamplingCapability declares sampling and its optional features.
type SamplingCapability struct {
	// Context declares that includeContext values other than "none" are
	// honoured ("context").
	Context *Empty `json:"context,omitempty"`
	// Tools declares that a sampling request may carry tools and
	// toolChoice ("tools").
	Tools *Empty `json:"tools,omitempty"`
}

// RootsCapability declares roots.
type RootsCapability struct {
	// ListChanged says the client notifies changes of its roots
	// ("listChanged"; a 2025-11-25 feature, omitted when false).
	ListChanged bool `json:"listChanged,omitempty"`
}

// CanElicitForm reports whether form-mode elicitation was declared.
func (c ClientCapabilities) CanElicitForm() bool {
	e := c.Elicitation
	return e != nil && (e.Form != nil || e.URL == nil)
}

// CanElicitURL reports whether URL-mode elicitation was declared.
func (c ClientCapabilities) CanElicitURL() bool {
	return c.Elicitation != nil && c.Elicitation.URL != nil
}

// CanSample reports whether sampling was declared.
func (c ClientCapabilities) CanSample() bool { return c.Sampling != nil }

// CanListRoots reports whether roots were declared.
func (c ClientCapabilities) CanListRoots() bool { return c.Roots != nil }

// MissingCapabilityError reports that a request needs a client capability
// the client did not declare. The server answers it with -32021 and
// data.requiredCapabilities.
type MissingCapabilityError struct {
	// Required lists the capabilities that are needed.
	Required ClientCapabilities
	// What says which operation needed them.
	What string
}

// Error names the missing capability.
func (e *MissingCapabilityError) Error() string {
	return fmt.Sprintf("%s needs the client capability %s, which this request did not declare", e.What, e.Required.names())
}

// RPCError converts the error to its wire form.
func (e *MissingCapabilityError) RPCError() *Error {
	return &Error{
		Code:    MissingRequiredClientCapability,
		Message: "Missing required client capability: " + e.Error(),
		Data:    map[string]any{"requiredCapabilities": e.Required},
	}
}

func (c ClientCapabilities) names() string {
	var n []string
	if e := c.Elicitation; e != nil {
		switch {
		case e.URL != nil:
			n = append(n, "elicitation.url")
		case e.Form != nil:
			n = append(n, "elicitation.form")
		default:
			n = append(n, "elicitation")
		}
	}
	if s := c.Sampling; s != nil {
		switch {
		case s.Tools != nil:
			n = append(n, "sampling.tools")
		case s.Context != nil:
			n = append(n, "sampling.context")
		default:
			n = append(n, "sampling")
		}
	}
	if c.Roots != nil {
		n = append(n, "roots")
	}
	for _, ext := range slices.Sorted(maps.Keys(c.Extensions)) {
		n = append(n, "extensions."+ext)
	}
	if len(n) == 0 {
		return "(none)"
	}
	return strings.Join(n, ", ")
}

// RequireSampling returns a *MissingCapabilityError unless sampling was
// declared. what names the operation for the message.
func (c ClientCapabilities) RequireSampling(what string) error {
	if c.CanSample() {
		return nil
	}
	return &MissingCapabilityError{Required: ClientCapabilities{Sampling: &SamplingCapability{}}, What: what}
}

// RequireElicitation returns a *MissingCapabilityError unless elicitation
// in the given mode ("form" or "url") was declared.
func (c ClientCapabilities) RequireElicitation(what, mode string) error {
	if mode == "url" {
		if c.CanElicitURL() {
			return nil
		}
		return &MissingCapabilityError{Required: ClientCapabilities{Elicitation: &ElicitationCapability{URL: &Empty{}}}, What: what}
	}
	if c.CanElicitForm() {
		return nil
	}
	return &MissingCapabilityError{Required: ClientCapabilities{Elicitation: &ElicitationCapability{}}, What: what}
}

// RequireRoots returns a *MissingCapabilityError unless roots were declared.
func (c ClientCapabilities) RequireRoots(what string) error {
	if c.CanListRoots() {
		return nil
	}
	return &MissingCapabilityError{Required: ClientCapabilities{Roots: &RootsCapability{}}, What: what}
}

// HasExtension reports whether the extension id (for example
// "io.modelcontextprotocol/tasks") was declared.
func (c ClientCapabilities) HasExtension(id string) bool {
	_, ok := c.Extensions[id]
	return ok
}

// RequireExtension returns a *MissingCapabilityError unless the extension
// id was declared.
func (c ClientCapabilities) RequireExtension(what, id string) error {
	if c.HasExtension(id) {
		return nil
	}
	return &MissingCapabilityError{Required: ClientCapabilities{Extensions: map[string]json.RawMessage{id: json.RawMessage("{}")}}, What: what}
}

// Missing returns the part of required that c does not declare, and
// whether anything is missing. Elicitation modes, sampling features, roots
// and extensions are compared one by one (an extension's settings are not
// compared: declaring it is enough).
func (c ClientCapabilities) Missing(required ClientCapabilities) (ClientCapabilities, bool) {
	var m ClientCapabilities
	if r := required.Elicitation; r != nil {
		switch {
		case c.Elicitation == nil:
			m.Elicitation = r
		case r.URL != nil && !c.CanElicitURL():
			m.Elicitation = &ElicitationCapability{URL: &Empty{}}
		case (r.Form != nil || r.URL == nil) && !c.CanElicitForm():
			m.Elicitation = &ElicitationCapability{Form: &Empty{}}
		}
	}
	if r := required.Sampling; r != nil {
		switch {
		case c.Sampling == nil:
			m.Sampling = r
		case r.Tools != nil && c.Sampling.Tools == nil:
			m.Sampling = &SamplingCapability{Tools: &Empty{}}
		case r.Context != nil && c.Sampling.Context == nil:
			m.Sampling = &SamplingCapability{Context: &Empty{}}
		}
	}
	if required.Roots != nil && c.Roots == nil {
		m.Roots = required.Roots
	}
	for id, v := range required.Extensions {
		if !c.HasExtension(id) {
			if m.Extensions == nil {
				m.Extensions = make(map[string]json.RawMessage)
			}
			if len(v) == 0 {
				v = json.RawMessage("{}")
			}
			m.Extensions[id] = v
		}
	}
	return m, m.Elicitation != nil || m.Sampling != nil || m.Roots != nil || len(m.Extensions) > 0
}
