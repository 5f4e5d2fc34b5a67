// Package jsonrpc holds Baton's JSON-RPC 2.0 framing: the message shapes
// read from and written to a transport, the error type with its MCP codes,
// the mapping from codes to HTTP statuses, and a guard against deeply nested
// input.
//
// It is the bottom of the import graph: every other Baton package may use it
// and it uses none of them.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/baton-mcp/baton/internal/strictjson"
)

// Version is the value of the "jsonrpc" member of every message.
const Version = "2.0"

// ID is a JSON-RPC request id kept in its wire form: a JSON string or
// integer. The zero ID is absent (a notification).
type ID struct {
	raw json.RawMessage
}

// StringID returns an ID holding the string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s) // a string always marshals
	return ID{raw: b}
}

// IntID returns an ID holding the integer n.
func IntID(n int64) ID { return ID{raw: strconv.AppendInt(nil, n, 10)} }

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return len(id.raw) == 0 }

// Raw returns the id's JSON text; it is empty for an absent id.
func (id ID) Raw() json.RawMessage { return id.raw }

// String returns the id's JSON text, or "null" when absent.
func (id ID) String() string {
	if id.IsZero() {
		return "null"
	}
	return string(id.raw)
}

// Equal reports whether two ids have the same JSON text.
func (id ID) Equal(o ID) bool { return bytes.Equal(id.raw, o.raw) }

// MarshalJSON writes the id, or null when it is absent (error responses to
// unreadable requests carry a null id).
func (id ID) MarshalJSON() ([]byte, error) {
	if id.IsZero() {
		return []byte("null"), nil
	}
	return id.raw, nil
}

// UnmarshalJSON accepts a JSON string or integer. Null, fractions, booleans,
// arrays and objects are refused.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errors.New("empty id")
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("id: %w", err)
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if _, err := strconv.ParseInt(string(b), 10, 64); err != nil {
			return fmt.Errorf("id must be a string or an integer, got %s", b)
		}
	default:
		return fmt.Errorf("id must be a string or an integer, got %s", truncate(b, 32))
	}
	id.raw = append(id.raw[:0], b...)
	return nil
}

// Message is any incoming JSON-RPC message: a request (method and id), a
// notification (method, no id) or a response (result or error, and id).
type Message struct {
	// JSONRPC is the protocol version ("jsonrpc"); Decode requires "2.0".
	JSONRPC string `json:"jsonrpc"`
	// ID is the message's id ("id"), the zero ID when absent (a
	// notification).
	ID ID `json:"id,omitzero"`
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
	Error *Error `json:"error,omitempty"`
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
// while the message is in use. Every failure is a *Error with code
// ParseError or InvalidRequest and a message saying what is wrong. A JSON
// array (a batch) is refused: MCP removed batching.
func Decode(data []byte, lim Limits) (*Message, *Error) {
	if err := CheckLimits(data, lim); err != nil {
		return nil, err
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &Error{Code: ParseError, Message: "empty body: expected a JSON-RPC message"}
	}
	if trimmed[0] == '[' {
		return nil, &Error{Code: InvalidRequest, Message: "batched JSON-RPC messages are not supported"}
	}
	if trimmed[0] != '{' {
		return nil, &Error{Code: InvalidRequest, Message: "a JSON-RPC message must be a JSON object"}
	}
	var m Message
	if err := strictjson.UnmarshalNoCopy(data, &m); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, &Error{Code: ParseError, Message: fmt.Sprintf("invalid JSON at offset %d: %v", syn.Offset, err)}
		}
		return nil, &Error{Code: InvalidRequest, Message: "malformed JSON-RPC message: " + err.Error()}
	}
	if m.JSONRPC != Version {
		return &m, &Error{Code: InvalidRequest, Message: `"jsonrpc" must be "2.0"`}
	}
	if m.Method == "" && m.Result == nil && m.Error == nil {
		return &m, &Error{Code: InvalidRequest, Message: "message has neither a method nor a result or error"}
	}
	if m.Method != "" && (m.Result != nil || m.Error != nil) {
		return &m, &Error{Code: InvalidRequest, Message: "a request cannot carry a result or an error"}
	}
	if len(m.Params) > 0 {
		switch p := bytes.TrimLeft(m.Params, " \t\r\n"); {
		case len(p) > 0 && p[0] == '{':
		case bytes.Equal(p, []byte("null")):
			m.Params = nil
		default:
			return &m, &Error{Code: InvalidRequest, Message: `"params" must be a JSON object`}
		}
	}
	return &m, nil
}

// CheckLimits reports the first limit data exceeds: nesting deeper than
// lim.MaxDepth (a ParseError, like other unreadable input), an object with
// more than lim.MaxMembers members, or a number literal longer than
// lim.MaxNumberLength or with an exponent beyond ±lim.MaxNumberExponent
// (InvalidParams, naming the limit). It reads data once, looking only at
// brackets, colons and numbers outside strings, and does not otherwise
// validate the JSON; so it is cheap enough to run on every message before
// it is parsed.
func CheckLimits(data []byte, lim Limits) *Error {
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
				return &Error{Code: ParseError, Message: fmt.Sprintf("JSON nesting exceeds the limit of %d levels", lim.MaxDepth)}
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
					return Errorf(InvalidParams, "Invalid params: a JSON object has more than %d members, the limit per object", lim.MaxMembers)
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
func checkNumber(lit []byte, lim Limits) *Error {
	if len(lit) > lim.MaxNumberLength {
		return Errorf(InvalidParams, "Invalid params: a JSON number is %d bytes long, over the limit of %d", len(lit), lim.MaxNumberLength)
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
				return Errorf(InvalidParams, "Invalid params: a JSON number's exponent is beyond ±%d, the limit", lim.MaxNumberExponent)
			}
		}
	}
	return nil
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
