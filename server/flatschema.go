package server

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/baton-mcp/baton/internal/jsonscan"
)

// flatSchema is an input schema simple enough to check arguments against
// without decoding them: an object whose properties each have one
// primitive type and nothing else (the schemas AddTool infers from a
// struct of strings, numbers and booleans), with required properties and
// optionally additionalProperties false.
//
// Why: decoding the arguments into the validator's generic form and
// running the validator cost 12.5 allocations and about 10,000
// instructions per call for a one-property schema (issue 23's profile of
// BenchmarkToolsCall and the flow's first round, "validate arguments" in
// bench/steps.sh), a third of a plain call's allocations in ServeHTTP.
//
// accepts says only "certainly valid": arguments it does not accept (a
// type mismatch, a missing or unknown property, a duplicate or escaped
// key, an integer not written as digits, a null) go to the validator,
// which decides and words the problem. FuzzFlatSchema holds accepts to
// the validator.
type flatSchema struct {
	props    map[string]flatProp
	required uint64 // bits of the required properties
	closed   bool   // additionalProperties: false
}

type flatProp struct {
	typ string // "string", "integer", "number" or "boolean"
	bit uint64
}

// flatSchemaOf returns raw's flatSchema, or nil when raw is anything more
// than a flat schema.
func flatSchemaOf(raw json.RawMessage) *flatSchema {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	f := &flatSchema{props: map[string]flatProp{}}
	var required []string
	for k, v := range top {
		switch k {
		case "type":
			if string(bytes.TrimSpace(v)) != `"object"` {
				return nil
			}
		case "properties":
			var ps map[string]map[string]json.RawMessage
			if json.Unmarshal(v, &ps) != nil || len(ps) > 64 {
				return nil
			}
			for name, p := range ps {
				typ := ""
				for pk, pv := range p {
					switch pk {
					case "type":
						if json.Unmarshal(pv, &typ) != nil {
							return nil
						}
					case "title", "description", "$comment":
					default:
						return nil
					}
				}
				switch typ {
				case "string", "integer", "number", "boolean":
				default:
					return nil
				}
				f.props[name] = flatProp{typ: typ, bit: 1 << len(f.props)}
			}
		case "required":
			if json.Unmarshal(v, &required) != nil {
				return nil
			}
		case "additionalProperties":
			switch string(bytes.TrimSpace(v)) {
			case "false":
				f.closed = true
			case "true":
			default:
				return nil
			}
		case "$schema", "title", "description", "$comment":
		default:
			return nil
		}
	}
	for _, name := range required {
		p, ok := f.props[name]
		if !ok {
			return nil // required but not described: left to the validator
		}
		f.required |= p.bit
	}
	return f
}

// accepts reports whether args, a valid JSON object, certainly satisfies
// the schema. A nil *flatSchema accepts nothing.
func (f *flatSchema) accepts(args []byte) bool {
	if f == nil {
		return false
	}
	var seen uint64
	ok := true
	err := jsonscan.EachMember(args, func(k, v []byte) error {
		if len(v) == 0 || !isASCII(k) {
			ok = false // no value, or a key whose decoding may differ between decoders
			return errStop
		}
		p, known := f.props[string(k)]
		if !known {
			if f.closed {
				ok = false
				return errStop
			}
			return nil
		}
		if seen&p.bit != 0 {
			ok = false // a duplicate: the validator sees the last one
			return errStop
		}
		seen |= p.bit
		switch p.typ {
		case "string":
			ok = v[0] == '"'
		case "boolean":
			ok = string(v) == "true" || string(v) == "false"
		case "number":
			ok = v[0] == '-' || v[0] >= '0' && v[0] <= '9'
		case "integer":
			ok = isDigits(v)
		}
		if !ok {
			return errStop
		}
		return nil
	})
	return err == nil && ok && seen&f.required == f.required
}

// errStop ends an EachMember walk early.
var errStop = errors.New("stop")

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// isDigits reports whether v is an integer literal of digits (an optional
// minus, then digits): JSON's grammar already refused leading zeros.
func isDigits(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
