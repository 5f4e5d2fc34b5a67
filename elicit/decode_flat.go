package elicit

import (
	"encoding"
	stdjson "encoding/json"
	"reflect"
)

// A handler decodes each carried answer on every round: under valgrind
// (BenchmarkCarried in bench/, 2026-12-04) Decode of {"ok":true} into a
// one-field struct was about 800 instructions, nearly all of it in the
// library decoder (segmentio's Parse: its flags scan over the input, its
// codec cache, reflection), the largest cost per carried answer after the
// state's bytes. Form content is a flat object, and a handler's answer type
// is often a struct of booleans and strings: flatPlan decodes exactly that
// case in one pass over the bytes, and leaves everything else (numbers,
// arrays, null, escapes, bytes outside printable ASCII, a key that is not a
// field, any type it cannot describe) to the library, before writing
// anything. FuzzDecodeFlat holds it to strictjson.Unmarshal.

// flatPlan is how a struct type of only bool and string fields takes an
// object's members: the field for each key, with its kind and index.
// It is built once per schema and type (exactKeys) and only read after.
type flatPlan struct {
	fields []flatField
}

type flatField struct {
	key   string
	index int          // the field's index in the struct
	kind  reflect.Kind // reflect.Bool or reflect.String
	// quoted is the key as a JSON string token, "key" with its quotes,
	// when the key is printable ASCII without '"' or '\\' (the only keys
	// a plain string can spell without escapes); "" otherwise, and such a
	// key is never taken. A member's key is matched by comparing its
	// bytes with each field's token: the same outcome as reading the
	// string (flatString) and comparing its bytes with each key, at about
	// a third of the cost (under valgrind, BenchmarkCarried in bench/,
	// 2026-12-04, about 100 instructions an answer before).
	quoted string
}

// quotedKey returns key as the JSON string token flatField.quoted holds.
func quotedKey(key string) string {
	for i := range len(key) {
		if c := key[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return ""
		}
	}
	return `"` + key + `"`
}

// maxFlatFields bounds the members a flat decode holds before writing.
const maxFlatFields = 16

// flatPlanOf returns the plan for decoding into t (a pointer type, as
// Decode is given), or nil when t is not a pointer to a struct whose every
// field is an exported bool or string (the built-in types, not named
// ones), named by a plain json tag or its Go name, each name once, and the
// struct has no methods of its own for JSON or text.
func flatPlanOf(t reflect.Type) *flatPlan {
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	st := t.Elem()
	if hasUnmarshaler(st) || st.NumField() == 0 || st.NumField() > maxFlatFields {
		return nil
	}
	p := &flatPlan{}
	for i := range st.NumField() {
		sf := st.Field(i)
		if !sf.IsExported() || sf.Anonymous {
			return nil
		}
		var k reflect.Kind
		switch sf.Type {
		case boolType:
			k = reflect.Bool
		case stringType:
			k = reflect.String
		default: // named types (json.Number among them) are left to the library
			return nil
		}
		name := sf.Name
		if tag, ok := sf.Tag.Lookup("json"); ok {
			tagName, opts, _ := cutComma(tag)
			if tagName == "-" && opts == "" {
				return nil // skipped by the library: rare enough to leave to it
			}
			if !plainOptions(opts) || !plainName(tagName) && tagName != "" {
				return nil
			}
			if tagName != "" {
				name = tagName
			}
		}
		for _, f := range p.fields {
			if f.key == name {
				return nil
			}
		}
		p.fields = append(p.fields, flatField{key: name, index: i, kind: k, quoted: quotedKey(name)})
	}
	return p
}

var (
	boolType            = reflect.TypeFor[bool]()
	stringType          = reflect.TypeFor[string]()
	jsonUnmarshalerType = reflect.TypeFor[stdjson.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// hasUnmarshaler reports whether t or *t decodes itself.
func hasUnmarshaler(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || pt.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

func cutComma(s string) (before, after string, found bool) {
	for i := range len(s) {
		if s[i] == ',' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// plainOptions reports whether a json tag's options change nothing for
// decoding: none, or only omitempty / omitzero (",string" does).
func plainOptions(opts string) bool {
	for opts != "" {
		var o string
		o, opts, _ = cutComma(opts)
		if o != "omitempty" && o != "omitzero" {
			return false
		}
	}
	return true
}

// plainName reports whether s is a tag name made of letters, digits, '_'
// and '-' only: one the library takes as it is.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// decode decodes content into the struct v points to (whose type the plan
// is for) and reports true, or reports false, having written nothing, for
// the library to decode. It takes an object of members whose keys name
// fields exactly and whose values are true or false (bool fields) or
// strings of printable ASCII without escapes (string fields), with JSON
// whitespace between the tokens and nothing after the object but
// whitespace.
func (p *flatPlan) decode(content []byte, v any) bool {
	// The members found, written only once the whole object is taken: a
	// field's index and its value's bytes (for a bool, end-start is 1 for
	// true), small so that zeroing the array costs little.
	type member struct {
		f          uint8
		start, end uint16
	}
	var members [maxFlatFields]member
	n := 0
	b := content
	if len(b) > 1<<16-1 {
		return false
	}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			// key: a field's token, "key" (flatField.quoted), or the
			// library's to read
			fi := -1
			for j := range p.fields {
				if q := p.fields[j].quoted; q != "" && len(b)-i >= len(q) && string(b[i:i+len(q)]) == q { // compared, not copied
					fi = j
					break
				}
			}
			if fi < 0 || n == len(members) {
				return false
			}
			f := &p.fields[fi]
			i = skipWS(b, i+len(f.quoted))
			if i >= len(b) || b[i] != ':' {
				return false
			}
			i = skipWS(b, i+1)
			m := member{f: uint8(fi)}
			switch f.kind {
			case reflect.Bool:
				switch {
				case len(b)-i >= 4 && string(b[i:i+4]) == "true":
					m.start, m.end, i = uint16(i), uint16(i+1), i+4
				case len(b)-i >= 5 && string(b[i:i+5]) == "false":
					m.start, m.end, i = uint16(i), uint16(i), i+5
				default:
					return false
				}
				if i < len(b) && !isDelim(b[i]) {
					return false // "truex": the library's error
				}
			default: // reflect.String
				vs, ve, ok := flatString(b, i)
				if !ok {
					return false
				}
				m.start, m.end, i = uint16(vs), uint16(ve), ve+1
			}
			members[n] = m
			n++
			i = skipWS(b, i)
			if i >= len(b) {
				return false
			}
			if b[i] == '}' {
				i++
				break
			}
			if b[i] != ',' {
				return false
			}
			i = skipWS(b, i+1)
		}
	}
	if skipWS(b, i) != len(b) {
		return false
	}
	// v's type is the plan's, a pointer to the struct; the fields are set
	// through reflect (no unsafe: a few dozen instructions a field more).
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false
	}
	st := rv.Elem()
	for _, m := range members[:n] {
		f := &p.fields[m.f]
		if f.kind == reflect.Bool {
			st.Field(f.index).SetBool(m.end > m.start)
		} else {
			st.Field(f.index).SetString(string(b[m.start:m.end]))
		}
	}
	return true
}

// skipWS returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipWS(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' { // inlined: the usual compact content
		return i
	}
	return skipWSLoop(b, i)
}

// skipWSLoop is skipWS past whitespace.
func skipWSLoop(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// isDelim reports whether c may follow a literal inside an object.
func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// flatString reads the string at b[i] and returns the bounds of its bytes
// (end is the closing quote's index), or false when it is not a string of
// printable ASCII without escapes.
func flatString(b []byte, i int) (start, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return i + 1, j, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return 0, 0, false
		}
	}
	return 0, 0, false
}
