// Package jsonscan splits JSON objects into their members without a
// token stream or reflection: the input is checked once with json.Valid
// (which does not allocate) and then walked, slicing raw member values.
// Baton uses it for small peer objects decoded on every request
// (inputResponses, elicitation answers), where generic decoders cost more
// than the data.
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
	Key   string
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

func splitValidObject(data []byte, what string) ([]Member, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, fmt.Errorf("%s must be a JSON object", what)
	}
	i = skipSpace(data, i+1)
	var out []Member
	if data[i] == '}' {
		return out, nil
	}
	for {
		// data[i] is '"': json.Valid guarantees the shape from here on.
		end := stringEnd(data, i)
		key, err := Unquote(data[i:end])
		if err != nil {
			return nil, fmt.Errorf("%s: malformed object key", what)
		}
		for _, m := range out {
			if m.Key == key {
				return nil, fmt.Errorf("%s: duplicate key %s", what, clip.Quote(key))
			}
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // past ':'
		vend := valueEnd(data, i)
		out = append(out, Member{Key: key, Value: json.RawMessage(data[i:vend])})
		i = skipSpace(data, vend)
		if data[i] == '}' {
			return out, nil
		}
		i = skipSpace(data, i+1) // past ','
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i]=='"'.
func stringEnd(b []byte, i int) int {
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
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
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

// SplitValidArray returns the raw elements of a JSON array already known
// to be valid JSON.
func SplitValidArray(data []byte) ([]json.RawMessage, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, errors.New("not a JSON array")
	}
	i = skipSpace(data, i+1)
	var out []json.RawMessage
	if i < len(data) && data[i] == ']' {
		return out, nil
	}
	for i < len(data) {
		end := valueEnd(data, i)
		out = append(out, json.RawMessage(data[i:end]))
		i = skipSpace(data, end)
		if i >= len(data) || data[i] == ']' {
			return out, nil
		}
		i = skipSpace(data, i+1) // past ','
	}
	return out, nil
}

// EachMember calls f with the key and raw value of every member of a JSON
// object already known to be valid JSON, in document order, duplicates
// included, and stops at the first error f returns. Unlike
// SplitValidObject it keeps nothing and compares no keys, so its cost is
// linear in the input however many members there are. key is only valid
// during the call.
func EachMember(data []byte, f func(key, value []byte) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for i < len(data) {
		end := stringEnd(data, i)
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
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // past ':'
		vend := valueEnd(data, i)
		if err := f(key, data[i:vend]); err != nil {
			return err
		}
		i = skipSpace(data, vend)
		if i >= len(data) || data[i] == '}' {
			return nil
		}
		i = skipSpace(data, i+1) // past ','
	}
	return nil
}

// EachElement calls f with every raw element of a JSON array already
// known to be valid JSON, in order, and stops at the first error f
// returns.
func EachElement(data []byte, f func(i int, value []byte) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return errors.New("not a JSON array")
	}
	i = skipSpace(data, i+1)
	for n := 0; i < len(data) && data[i] != ']'; n++ {
		end := valueEnd(data, i)
		if err := f(n, data[i:end]); err != nil {
			return err
		}
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return nil
}
