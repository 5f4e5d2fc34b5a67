package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

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
		// A string without an escape is valid JSON when nothing in it is a
		// quote or a control character (encoding/json takes any bytes
		// above those, replacing invalid UTF-8): the usual id, checked
		// without encoding/json's decoder, which was most of an answer's
		// decoding (issue 23). FuzzIDUnmarshal holds it to encoding/json.
		if !plainString(b) {
			var s string
			if err := json.Unmarshal(b, &s); err != nil {
				return fmt.Errorf("id: %w", err)
			}
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// Up to 18 digits and nothing else always fit an int64: the usual
		// id, taken without ParseInt and the string made for it (about
		// 200 instructions of every request of a session; issue 23).
		// FuzzIDUnmarshal holds it to ParseInt.
		if shortDigits(b) {
			break
		}
		if _, err := strconv.ParseInt(string(b), 10, 64); err != nil {
			return fmt.Errorf("id must be a string or an integer, got %s", b)
		}
	default:
		return fmt.Errorf("id must be a string or an integer, got %s", truncate(b, 32))
	}
	if cap(id.raw) < len(b) {
		// A new id's copy made at its length: append's growth of an
		// empty slice (growslice) took twice the instructions of every
		// request's id (issue 23).
		id.raw = make(json.RawMessage, len(b))
		copy(id.raw, b)
		return nil
	}
	id.raw = append(id.raw[:0], b...)
	return nil
}

// shortDigits reports whether b is 1 to 18 decimal digits.
func shortDigits(b []byte) bool {
	if len(b) == 0 || len(b) > 18 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plainString reports whether b is a JSON string with no escape, quote or
// control character between its quotes.
func plainString(b []byte) bool {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return false
	}
	for _, c := range b[1 : len(b)-1] {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
