// Package jsonscan splits JSON objects into their members without a
// token stream or reflection: the input is checked once with json.Valid
// (which does not allocate) and then walked, slicing raw member values.
// Baton uses it for small peer objects decoded on every request
// (inputResponses, elicitation answers), where generic decoders cost more
// than the data, and for the canonical form of numbers (AppendNumber).
// Every function is linear in its input.
package jsonscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/baton-mcp/baton/internal/clip"
)

// Member is one member of an object: its unescaped key and raw value.
type Member struct {
	// Key is the member's name, unescaped.
	Key string
	// Value is the member's value as it appears in the object.
	Value json.RawMessage
}

// SplitObject splits a JSON object into its members, in order, without
// building a token stream: it checks the whole input with json.Valid (no
// allocation), then walks the top level, slicing raw values. Keys are
// unescaped; duplicates are an error.
func SplitObject(data []byte, what string) ([]Member, error) {
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s: invalid JSON", what)
	}
	return splitValidObject(data, what)
}

// SplitValidObject is SplitObject for input already known to be valid
// JSON (for example a member value SplitObject returned).
func SplitValidObject(data []byte, what string) ([]Member, error) {
	return splitValidObject(data, what)
}

// mapAfter is the member count from which duplicates are found with a map:
// below it comparing with every earlier key is cheaper than hashing.
const mapAfter = 8

func splitValidObject(data []byte, what string) ([]Member, error) {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, fmt.Errorf("%s must be a JSON object", what)
	}
	i = SkipSpace(data, i+1)
	var out []Member
	if i < len(data) && data[i] == '}' {
		return out, nil
	}
	// Valid JSON has the shape from here on; the checks of the bytes
	// between the members only keep input that is not (outside the
	// contract) from indexing past its end: an error, never a panic
	// (FuzzParseValidResponses in server/internal/round).
	var seen map[string]struct{}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, fmt.Errorf("%s: invalid JSON", what)
		}
		end := StringEnd(data, i)
		key, err := Unquote(data[i:end])
		if err != nil {
			return nil, fmt.Errorf("%s: malformed object key", what)
		}
		if dup := duplicate(out, &seen, key); dup {
			return nil, fmt.Errorf("%s: duplicate key %s", what, clip.Quote(key))
		}
		i = SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, fmt.Errorf("%s: invalid JSON", what)
		}
		i = SkipSpace(data, i+1)
		if i >= len(data) {
			return nil, fmt.Errorf("%s: invalid JSON", what)
		}
		vend := valueEnd(data, i)
		out = append(out, Member{Key: key, Value: json.RawMessage(data[i:vend])})
		i = SkipSpace(data, vend)
		if i < len(data) && data[i] == '}' {
			return out, nil
		}
		if i >= len(data) || data[i] != ',' {
			return nil, fmt.Errorf("%s: invalid JSON", what)
		}
		i = SkipSpace(data, i+1)
	}
}

// duplicate reports whether key is among the keys of out, and records it
// in *seen once out is long enough to need a map. Each call costs O(1)
// (amortised), so checking n keys is linear.
func duplicate(out []Member, seen *map[string]struct{}, key string) bool {
	if len(out) < mapAfter {
		for _, m := range out {
			if m.Key == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, 2*len(out))
		for _, m := range out {
			(*seen)[m.Key] = struct{}{}
		}
	}
	if _, ok := (*seen)[key]; ok {
		return true
	}
	(*seen)[key] = struct{}{}
	return false
}

// SkipSpace returns the index of the first byte at or after b[i] that is
// not JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// StringEnd returns the index just past the string starting at b[i]=='"'.
func StringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the (valid) JSON value at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = StringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default: // number, true, false, null
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		return j
	}
}

// NumberEnd returns the index just past the number starting at b[i].
func NumberEnd(b []byte, i int) int {
	for i < len(b) && (isDigit(b[i]) || b[i] == '.' || b[i] == 'e' || b[i] == 'E' || b[i] == '+' || b[i] == '-') {
		i++
	}
	return i
}

// Unquote decodes a JSON string literal. Strings without escapes (the
// usual case) are converted directly.
func Unquote(lit []byte) (string, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", errors.New("not a string")
	}
	body := lit[1 : len(lit)-1]
	plain := true
	for _, c := range body {
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(body), nil
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", err
	}
	return s, nil
}

// EachMember calls f with the key and raw value of every member of a JSON
// object already known to be valid JSON, in document order, duplicates
// included, and stops at the first error f returns. Unlike
// SplitValidObject it keeps nothing and compares no keys, so its cost is
// linear in the input however many members there are. key is only valid
// during the call.
func EachMember(data []byte, f func(key, value []byte) error) error {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for i < len(data) {
		end := StringEnd(data, i)
		key := data[i+1 : end-1]
		for _, c := range key {
			if c == '\\' {
				s, err := Unquote(data[i:end])
				if err != nil {
					return errors.New("malformed object key")
				}
				key = []byte(s)
				break
			}
		}
		i = SkipSpace(data, end)
		i = SkipSpace(data, i+1) // past ':'
		vend := valueEnd(data, i)
		if err := f(key, data[i:vend]); err != nil {
			return err
		}
		i = SkipSpace(data, vend)
		if i >= len(data) || data[i] == '}' {
			return nil
		}
		i = SkipSpace(data, i+1) // past ','
	}
	return nil
}

// EachElement calls f with every raw element of a JSON array already
// known to be valid JSON, in order, and stops at the first error f
// returns.
func EachElement(data []byte, f func(i int, value []byte) error) error {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return errors.New("not a JSON array")
	}
	i = SkipSpace(data, i+1)
	for n := 0; i < len(data) && data[i] != ']'; n++ {
		end := valueEnd(data, i)
		if err := f(n, data[i:end]); err != nil {
			return err
		}
		i = SkipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = SkipSpace(data, i+1)
		}
	}
	return nil
}
