package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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

// HTTPStatus returns the HTTP status that carries a JSON-RPC error with the
// given code on the Streamable HTTP transport: 404 for an unknown method,
// 400 for malformed requests, header mismatches, missing capabilities and
// unsupported versions, and 200 for everything else (the error body is then
// an ordinary JSON-RPC response).
func HTTPStatus(code int) int {
	switch code {
	case MethodNotFound:
		return http.StatusNotFound
	case ParseError, InvalidRequest, InvalidParams,
		HeaderMismatch, MissingRequiredClientCapability, UnsupportedProtocolVersion:
		return http.StatusBadRequest
	default:
		return http.StatusOK
	}
}

// Response is an outgoing JSON-RPC response: exactly one of Result and
// Error is set.
type Response struct {
	// JSONRPC is the protocol version, always "2.0" ("jsonrpc").
	JSONRPC string `json:"jsonrpc"`
	// ID is the id of the request answered ("id"); null when the request
	// could not be read.
	ID ID `json:"id"`
	// Result is the encoded result of a success ("result"); omitted when
	// nil.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the error of a failure ("error"); omitted when nil.
	Error *Error `json:"error,omitempty"`
}

// Notification is an outgoing JSON-RPC notification: a message without an
// id, which gets no answer.
type Notification struct {
	// JSONRPC is the protocol version, always "2.0" ("jsonrpc").
	JSONRPC string `json:"jsonrpc"`
	// Method is the notification's method, such as
	// "notifications/progress" ("method").
	Method string `json:"method"`
	// Params are the notification's params, encoded with encoding/json
	// ("params"); omitted when nil.
	Params any `json:"params,omitempty"`
}

// Request is an outgoing JSON-RPC request (used only by the legacy era,
// where a server may send requests to its client).
type Request struct {
	// JSONRPC is the protocol version, always "2.0" ("jsonrpc").
	JSONRPC string `json:"jsonrpc"`
	// ID identifies the request; the answer carries it back ("id").
	ID ID `json:"id"`
	// Method is the request's method, such as "elicitation/create"
	// ("method").
	Method string `json:"method"`
	// Params are the request's params, encoded with encoding/json
	// ("params"); omitted when nil.
	Params any `json:"params,omitempty"`
}

// AppendResult appends the encoding of a successful response with the
// already-encoded result to dst.
func AppendResult(dst []byte, id ID, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// ResultPrefix appends `{"jsonrpc":"2.0","id":<id>,"result":` to dst: a
// result message is this prefix, the result, and "}".
func ResultPrefix(dst []byte, id ID) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	return append(dst, `,"result":`...)
}

// AppendError appends the encoding of an error response to dst.
func AppendError(dst []byte, id ID, e *Error) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		// The data could not be encoded; keep code and message.
		body, _ = json.Marshal(&Error{Code: e.Code, Message: e.Message})
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":`...)
	dst = append(dst, body...)
	return append(dst, '}'), err
}

// EncodeNotification returns the encoding of a notification.
func EncodeNotification(method string, params any) ([]byte, error) {
	b, err := json.Marshal(Notification{JSONRPC: Version, Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("encode %s notification: %w", method, err)
	}
	return b, nil
}

func appendID(dst []byte, id ID) []byte {
	if id.IsZero() {
		return append(dst, "null"...)
	}
	return append(dst, id.raw...)
}
