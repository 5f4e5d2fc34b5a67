// Package strictjson decodes untrusted JSON the way JSON-RPC and MCP define
// it: object keys match struct fields exactly, so "NAME" or "Name" never
// fills a field tagged "name". encoding/json matches case-insensitively,
// which lets a peer smuggle a second value past a check that read the
// first (the class of bug behind CVE-2026-27896); every Baton decoder of
// peer input goes through Unmarshal instead.
package strictjson

import (
	"bytes"
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
	if rest = bytes.TrimLeft(rest, " \t\r\n"); len(rest) > 0 {
		return fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return nil
}

// DecodeValue decodes any JSON value into the generic form JSON Schema
// validators expect: map[string]any, []any, string, bool, nil, and
// json.Number for numbers. Trailing data is an error.
func DecodeValue(data []byte) (any, error) {
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
