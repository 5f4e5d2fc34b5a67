// Package rpcwire is Baton's JSON-RPC 2.0 framing: the message shapes read
// from and written to a transport, the mapping from error codes to HTTP
// statuses, and the limits pre-scan that bounds what a peer sends before
// anything parses it.
package rpcwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// Version is the value of the "jsonrpc" member of every message.
const Version = "2.0"

// Message is any incoming JSON-RPC message: a request (method and id), a
// notification (method, no id) or a response (result or error, and id).
type Message struct {
	// JSONRPC is the protocol version ("jsonrpc"); Decode requires "2.0".
	JSONRPC string `json:"jsonrpc"`
	// ID is the message's id ("id"), the zero ID when absent (a
	// notification).
	ID mcp.ID `json:"id,omitzero"`
	// Method is the method of a request or notification ("method"), ""
	// for a response.
	Method string `json:"method,omitempty"`
	// Params are the params of a request or notification as sent
	// ("params"), nil when absent.
	Params json.RawMessage `json:"params,omitempty"`
	// Result is the result of a success response as sent ("result"), nil
	// otherwise.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the error of an error response ("error"), nil otherwise.
	Error *mcp.Error `json:"error,omitempty"`
}

// IsRequest reports whether m is a request that expects a response.
func (m *Message) IsRequest() bool { return m.Method != "" && !m.ID.IsZero() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID.IsZero() }

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// Limits bound what Decode accepts. They are checked by one pass over the
// raw message (CheckLimits) before anything parses it, so every parser
// after it (the message, params, arguments, answers, their digest and their
// validation) works on bounded pieces: a hostile body costs about what a
// benign body of its size costs. Zero fields take the defaults.
type Limits struct {
	// MaxDepth is the deepest nesting of arrays and objects allowed. Zero
	// means DefaultMaxDepth.
	MaxDepth int
	// MaxMembers bounds the members of any one object. Zero means
	// DefaultMaxMembers.
	MaxMembers int
	// MaxNumberLength bounds a number literal, in bytes (sign, digits,
	// point and exponent). Zero means DefaultMaxNumberLength.
	MaxNumberLength int
	// MaxNumberExponent bounds the absolute value of the exponent a number
	// literal writes after e or E. Zero means DefaultMaxNumberExponent.
	MaxNumberExponent int
}

// The default limits. Each is far above what MCP traffic needs and far
// below what makes work superlinear.
const (
	// DefaultMaxDepth: tool arguments and answers rarely nest more than a
	// few levels; the MCP envelope adds four.
	DefaultMaxDepth = 64
	// DefaultMaxMembers: objects in requests have a handful of members (an
	// inputResponses object has one per question asked); maps passed as
	// arguments have hundreds. Baton's own work on an object is linear
	// (duplicate keys are found with a map) or n log n (sorting the keys
	// for the canonical form), so the limit caps what a handler or a
	// schema validator is handed, and answers a too-large object early.
	DefaultMaxMembers = 10000
	// DefaultMaxNumberLength: an int64 needs 20 bytes, the shortest form of
	// a float64 at most 24, a decimal128 about 45. A validator that checks a
	// number exactly (JSON Schema's integer, minimum, multipleOf, const)
	// converts the literal to a big rational, whose cost grows faster than
	// its length.
	DefaultMaxNumberLength = 100
	// DefaultMaxNumberExponent: a float64 spans 1e-324 to 1e308. Exact
	// conversion costs time in proportion to the exponent (1e999999 takes
	// 70 ms); at 400 it takes under 2 µs.
	DefaultMaxNumberExponent = 400
)

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits { return l.withDefaults() }

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxMembers <= 0 {
		l.MaxMembers = DefaultMaxMembers
	}
	if l.MaxNumberLength <= 0 {
		l.MaxNumberLength = DefaultMaxNumberLength
	}
	if l.MaxNumberExponent <= 0 {
		l.MaxNumberExponent = DefaultMaxNumberExponent
	}
	return l
}

// Decode parses one JSON-RPC message. The message shares data's memory
// (its params and strings are not copied), so data must not be modified
// while the message is in use. Every failure is a *mcp.Error with a
// message saying what is wrong: CheckLimits's error when data exceeds a
// limit (checked first, so a body over a limit gets that error even if it
// is not valid JSON further on), otherwise mcp.ParseError or
// mcp.InvalidRequest. A JSON array (a batch) is refused: MCP removed
// batching.
func Decode(data []byte, lim Limits) (*Message, *mcp.Error) {
	if err := CheckLimits(data, lim); err != nil {
		return nil, err
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &mcp.Error{Code: mcp.ParseError, Message: "empty body: expected a JSON-RPC message"}
	}
	if trimmed[0] == '[' {
		return nil, &mcp.Error{Code: mcp.InvalidRequest, Message: "batched JSON-RPC messages are not supported"}
	}
	if trimmed[0] != '{' {
		return nil, &mcp.Error{Code: mcp.InvalidRequest, Message: "a JSON-RPC message must be a JSON object"}
	}
	var m Message
	if err := strictjson.UnmarshalNoCopy(data, &m); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, &mcp.Error{Code: mcp.ParseError, Message: fmt.Sprintf("invalid JSON at offset %d: %v", syn.Offset, err)}
		}
		return nil, &mcp.Error{Code: mcp.InvalidRequest, Message: "malformed JSON-RPC message: " + err.Error()}
	}
	if m.JSONRPC != Version {
		return &m, &mcp.Error{Code: mcp.InvalidRequest, Message: `"jsonrpc" must be "2.0"`}
	}
	if m.Method == "" && m.Result == nil && m.Error == nil {
		return &m, &mcp.Error{Code: mcp.InvalidRequest, Message: "message has neither a method nor a result or error"}
	}
	if m.Method != "" && (m.Result != nil || m.Error != nil) {
		return &m, &mcp.Error{Code: mcp.InvalidRequest, Message: "a request cannot carry a result or an error"}
	}
	if len(m.Params) > 0 {
		switch p := bytes.TrimLeft(m.Params, " \t\r\n"); {
		case len(p) > 0 && p[0] == '{':
		case bytes.Equal(p, []byte("null")):
			m.Params = nil
		default:
			return &m, &mcp.Error{Code: mcp.InvalidRequest, Message: `"params" must be a JSON object`}
		}
	}
	return &m, nil
}

// CheckLimits reports the first limit data exceeds: nesting deeper than
// lim.MaxDepth (a mcp.ParseError, like other unreadable input), an object with
// more than lim.MaxMembers members, or a number literal longer than
// lim.MaxNumberLength or with an exponent beyond ±lim.MaxNumberExponent
// (mcp.InvalidParams, naming the limit). It reads data once, looking only at
// brackets, colons and numbers outside strings, and does not otherwise
// validate the JSON; so it is cheap enough to run on every message before
// it is parsed.
func CheckLimits(data []byte, lim Limits) *mcp.Error {
	lim = lim.withDefaults()
	// open holds, for each open array or object, -1 or the object's
	// member count so far (one ':' per member at its own level).
	var buf [32]int
	open := buf[:0]
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			i = closingQuote(data, i+1)
		case '{', '[':
			if len(open) >= lim.MaxDepth {
				return &mcp.Error{Code: mcp.ParseError, Message: fmt.Sprintf("JSON nesting exceeds the limit of %d levels", lim.MaxDepth)}
			}
			n := 0
			if c == '[' {
				n = -1
			}
			open = append(open, n)
		case '}', ']':
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		case ':':
			if top := len(open) - 1; top >= 0 && open[top] >= 0 {
				if open[top]++; open[top] > lim.MaxMembers {
					return mcp.Errorf(mcp.InvalidParams, "Invalid params: a JSON object has more than %d members, the limit per object", lim.MaxMembers)
				}
			}
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			end := i + 1
			for end < len(data) && isNumberByte(data[end]) {
				end++
			}
			if e := checkNumber(data[i:end], lim); e != nil {
				return e
			}
			i = end - 1
		}
	}
	return nil
}

// closingQuote returns the index of the quote that ends the string whose
// body starts at data[i] (len(data) if it does not end). Each byte is read
// at most twice: by IndexByte, and when counting the backslashes before a
// quote.
func closingQuote(data []byte, i int) int {
	for {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return len(data)
		}
		q += i
		bs := 0
		for j := q - 1; j >= i && data[j] == '\\'; j-- {
			bs++
		}
		if bs%2 == 0 {
			return q
		}
		i = q + 1
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// checkNumber checks a number literal's length and exponent.
func checkNumber(lit []byte, lim Limits) *mcp.Error {
	if len(lit) > lim.MaxNumberLength {
		return mcp.Errorf(mcp.InvalidParams, "Invalid params: a JSON number is %d bytes long, over the limit of %d", len(lit), lim.MaxNumberLength)
	}
	e := bytes.IndexAny(lit, "eE")
	if e < 0 {
		return nil
	}
	exp := 0
	for _, c := range lit[e+1:] {
		if c >= '0' && c <= '9' {
			// lit is at most MaxNumberLength bytes, but MaxNumberLength may
			// be large: stop counting once over the limit.
			if exp = exp*10 + int(c-'0'); exp > lim.MaxNumberExponent {
				return mcp.Errorf(mcp.InvalidParams, "Invalid params: a JSON number's exponent is beyond ±%d, the limit", lim.MaxNumberExponent)
			}
		}
	}
	return nil
}

// HTTPStatus returns the HTTP status that carries a JSON-RPC error with the
// given code on the Streamable HTTP transport: 404 for an unknown method,
// 400 for malformed requests, header mismatches, missing capabilities and
// unsupported versions, and 200 for everything else (the error body is then
// an ordinary JSON-RPC response).
func HTTPStatus(code int) int {
	switch code {
	case mcp.MethodNotFound:
		return http.StatusNotFound
	case mcp.ParseError, mcp.InvalidRequest, mcp.InvalidParams,
		mcp.HeaderMismatch, mcp.MissingRequiredClientCapability, mcp.UnsupportedProtocolVersion:
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
	ID mcp.ID `json:"id"`
	// Result is the encoded result of a success ("result"); omitted when
	// nil.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the error of a failure ("error"); omitted when nil.
	Error *mcp.Error `json:"error,omitempty"`
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
	ID mcp.ID `json:"id"`
	// Method is the request's method, such as "elicitation/create"
	// ("method").
	Method string `json:"method"`
	// Params are the request's params, encoded with encoding/json
	// ("params"); omitted when nil.
	Params any `json:"params,omitempty"`
}

// AppendResult appends the encoding of a successful response with the
// already-encoded result to dst.
func AppendResult(dst []byte, id mcp.ID, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// ResultPrefix appends `{"jsonrpc":"2.0","id":<id>,"result":` to dst: a
// result message is this prefix, the result, and "}".
func ResultPrefix(dst []byte, id mcp.ID) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	return append(dst, `,"result":`...)
}

// ResultPrefixLen is the length of what ResultPrefix appends for id.
func ResultPrefixLen(id mcp.ID) int {
	n := len(`{"jsonrpc":"2.0","id":`) + len(`,"result":`)
	if id.IsZero() {
		return n + len("null")
	}
	return n + len(id.Raw())
}

// AppendError appends the encoding of an error response to dst.
func AppendError(dst []byte, id mcp.ID, e *mcp.Error) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		// The data could not be encoded; keep code and message.
		body, _ = json.Marshal(&mcp.Error{Code: e.Code, Message: e.Message})
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

func appendID(dst []byte, id mcp.ID) []byte {
	if id.IsZero() {
		return append(dst, "null"...)
	}
	return append(dst, id.Raw()...)
}
