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
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id,omitzero"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// IsRequest reports whether m is a request that expects a response.
func (m *Message) IsRequest() bool { return m.Method != "" && !m.ID.IsZero() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID.IsZero() }

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// Limits bound what Decode accepts.
type Limits struct {
	// MaxDepth is the deepest nesting of arrays and objects allowed. Zero
	// means DefaultMaxDepth.
	MaxDepth int
}

// DefaultMaxDepth is the nesting limit used when Limits.MaxDepth is zero.
const DefaultMaxDepth = 64

// Decode parses one JSON-RPC message. The message shares data's memory
// (its params and strings are not copied), so data must not be modified
// while the message is in use. Every failure is a *Error with code
// ParseError or InvalidRequest and a message saying what is wrong. A JSON
// array (a batch) is refused: MCP removed batching.
func Decode(data []byte, lim Limits) (*Message, *Error) {
	maxDepth := lim.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if err := CheckDepth(data, maxDepth); err != nil {
		return nil, &Error{Code: ParseError, Message: err.Error()}
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

// CheckDepth reports an error when data nests arrays and objects deeper than
// max. It only counts brackets outside strings and does not otherwise
// validate the JSON, so it is cheap enough to run before a full parse.
func CheckDepth(data []byte, max int) error {
	depth := 0
	inString := false
	escaped := false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return fmt.Errorf("JSON nesting exceeds the limit of %d levels", max)
			}
		case '}', ']':
			depth--
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
