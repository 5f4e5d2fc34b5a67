package elicit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// splitObject splits a JSON object into its members, in order, without
// building a token stream: it checks the whole input with json.Valid (no
// allocation), then walks the top level, slicing raw values. Keys are
// unescaped; duplicates are an error.
func splitObject(data []byte, what string) ([]member, error) {
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s: invalid JSON", what)
	}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, fmt.Errorf("%s must be a JSON object", what)
	}
	i = skipSpace(data, i+1)
	var out []member
	if data[i] == '}' {
		return out, nil
	}
	for {
		// data[i] is '"': json.Valid guarantees the shape from here on.
		end := stringEnd(data, i)
		key, err := unquote(data[i:end])
		if err != nil {
			return nil, fmt.Errorf("%s: malformed object key", what)
		}
		for _, m := range out {
			if m.key == key {
				return nil, fmt.Errorf("%s: duplicate key %q", what, key)
			}
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // past ':'
		vend := valueEnd(data, i)
		out = append(out, member{key: key, value: json.RawMessage(data[i:vend])})
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

// unquote decodes a JSON string literal. Strings without escapes (the
// usual case) are converted directly.
func unquote(lit []byte) (string, error) {
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

// decodeValue decodes a content value: strings, numbers (as json.Number),
// booleans, null and arrays, without a reflection-driven decoder for the
// common scalar cases.
func decodeValue(raw []byte) (any, error) {
	switch raw[0] {
	case '"':
		return unquote(raw)
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	case '[', '{':
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	default:
		if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
				return json.Number(raw), nil // reported as out of range by checkValue
			}
			return nil, err
		}
		return json.Number(raw), nil
	}
}
