// Package strictjson decodes untrusted JSON the way JSON-RPC and MCP define
// it: object keys match struct fields exactly, so "NAME" or "Name" never
// fills a field tagged "name". encoding/json matches case-insensitively,
// which lets a peer smuggle a second value past a check that read the
// first (the class of bug behind CVE-2026-27896); every Baton decoder of
// peer input goes through Unmarshal instead.
package strictjson

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"

	"github.com/segmentio/encoding/json"
)

// Unmarshal decodes data into v like encoding/json.Unmarshal, except that
// object keys must match struct field names exactly. Trailing data after
// the value is an error.
func Unmarshal(data []byte, v any) error {
	rest, err := json.Parse(data, v, json.DontMatchCaseInsensitiveStructFields)
	if err != nil {
		return err
	}
	if len(rest) == 0 { // the usual case: no call to trim nothing
		return nil
	}
	if rest = bytes.TrimLeft(rest, " \t\r\n"); len(rest) > 0 {
		return fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return nil
}

// shallow is the deepest nesting DecodeValue gives to segmentio's decoder.
// It decodes an interface by parsing the value to find its end, then
// decoding it, at every level, so its cost grows with depth times size (55
// levels over 430 KB: 106 ms, against 19 ms for encoding/json, which reads
// once); at the usual depths it is twice as fast as encoding/json.
const shallow = 8

// DecodeValue decodes any JSON value into the generic form JSON Schema
// validators expect: map[string]any, []any, string, bool, nil, and
// json.Number for numbers. Trailing data is an error. The work is linear
// in the input at any depth.
func DecodeValue(data []byte) (any, error) {
	if deeperThan(data, shallow) {
		return decodeValueOnce(data)
	}
	return decodeValueFast(data)
}

// decodeValueOnce is DecodeValue with encoding/json.
func decodeValueOnce(data []byte) (any, error) {
	dec := stdjson.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return v, nil
}

// decodeValueFast is DecodeValue with segmentio's decoder.
func decodeValueFast(data []byte) (any, error) {
	var v any
	rest, err := json.Parse(data, &v, json.UseNumber)
	if err != nil {
		return nil, err
	}
	if rest = bytes.TrimLeft(rest, " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return v, nil
}

// deeperThan reports whether data nests arrays and objects deeper than max
// (counting brackets outside strings, without validating).
func deeperThan(data []byte, max int) bool {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// UnmarshalNoCopy is Unmarshal for input that is never modified while the
// result is in use (a request body read once): decoded strings and raw
// messages share data's memory instead of copying it.
func UnmarshalNoCopy(data []byte, v any) error {
	rest, err := json.Parse(data, v, json.DontMatchCaseInsensitiveStructFields|json.ZeroCopy)
	if err != nil {
		return err
	}
	if rest = bytes.TrimLeft(rest, " \t\r\n"); len(rest) > 0 {
		return fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return nil
}
