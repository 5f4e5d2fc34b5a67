package mcp

import (
	"errors"
	"fmt"
)

// JSON-RPC and MCP error codes.
const (
	// ParseError: the body is not valid JSON (or nests too deeply).
	ParseError = -32700
	// InvalidRequest: the JSON is not a valid JSON-RPC request.
	InvalidRequest = -32600
	// MethodNotFound: the method does not exist or its capability is not
	// advertised. On HTTP it is answered with 404.
	MethodNotFound = -32601
	// InvalidParams: missing _meta keys, unknown tools or prompts, bad
	// arguments, unknown resources, refused requestState.
	InvalidParams = -32602
	// InternalError: the server failed.
	InternalError = -32603
	// HeaderMismatch: an MCP HTTP header is missing, malformed or differs
	// from the body (2026-07-28).
	HeaderMismatch = -32020
	// MissingRequiredClientCapability: the request needs a client capability
	// it did not declare; data.requiredCapabilities names it (2026-07-28).
	MissingRequiredClientCapability = -32021
	// UnsupportedProtocolVersion: the requested protocol version is not
	// served; data lists the supported ones (2026-07-28).
	UnsupportedProtocolVersion = -32022
	// URLElicitationRequired is the 2025-11-25 error that asks the client to
	// complete URL elicitations. Modern (2026-07-28) servers must not send it.
	URLElicitationRequired = -32042
	// RequestCancelled is used by the legacy era when a request was
	// cancelled before it completed.
	RequestCancelled = -32800
)

// Error is a JSON-RPC error object, the "error" member of an error
// response. It implements error, so handlers may return one to choose the
// code the client sees.
type Error struct {
	// Code is the error code ("code"): one of the constants above, or an
	// application code outside -32768..-32000.
	Code int `json:"code"`
	// Message is a short description for people ("message").
	Message string `json:"message"`
	// Data is extra information for the client, such as
	// {"requiredCapabilities": ...} for -32021 ("data"); encoded with
	// encoding/json, omitted when nil.
	Data any `json:"data,omitempty"`
}

// Error returns the message with its code.
func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithData returns a copy of e carrying data.
func (e *Error) WithData(data any) *Error {
	c := *e
	c.Data = data
	return &c
}

// AsError finds a *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}
