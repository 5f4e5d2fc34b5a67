package elicit

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/baton-mcp/baton/internal/strictjson"
)

// Content that CheckResult accepted holds only properties the schema
// defines (keepDefined drops the others), and their values are strings,
// numbers, booleans or arrays of strings. Decode's check for keys that
// match a field only when case is ignored (strictjson.Fields.Check, a
// second pass over the content) can then fail only if one of the schema's
// property names does so for the type decoded into: that is decided once
// per schema and type, and content of an exact type decodes in one pass.
// A handler decodes each carried answer on every round, so this is on the
// path of every request, once per answer.

// exactTypes bounds the types an exactKeys remembers (a handler decodes
// answers into a few fixed types).
const exactTypes = 16

// exactKeys remembers, per type decoded into, whether the schema's
// property names are exact for it (strictjson.Fields.Exact). The zero
// value is ready to use; it is safe for concurrent use.
type exactKeys struct {
	first atomic.Pointer[exactType] // the first type looked up, read without a lock

	mu sync.RWMutex
	m  map[reflect.Type]bool
}

// exactType is a type and whether the schema's names are exact for it.
type exactType struct {
	t     reflect.Type
	exact bool
}

// bindChecked decodes content, checked against s, into v (Result.Decode).
// A nil s checks keys in full.
func (s *Schema) bindChecked(content []byte, v any) error {
	if s == nil || s.cache == nil {
		return strictjson.Bind(content, v)
	}
	c := s.cache
	if v != nil && c.exact.of(s, &c.decode, reflect.TypeOf(v)) {
		return strictjson.Unmarshal(content, v)
	}
	return c.decode.Bind(content, v)
}

// of reports whether the property names of s are exact for t.
func (e *exactKeys) of(s *Schema, memo *strictjson.Memo, t reflect.Type) bool {
	if l := e.first.Load(); l != nil && l.t == t {
		return l.exact
	}
	e.mu.RLock()
	exact, ok := e.m[t]
	e.mu.RUnlock()
	if ok {
		return exact
	}
	names := make([]string, len(s.fields))
	for i, f := range s.fields {
		names[i] = f.name
	}
	exact = memo.Of(t).Exact(names)
	e.mu.Lock()
	if len(e.m) < exactTypes {
		if e.m == nil {
			e.m = make(map[reflect.Type]bool)
		}
		e.m[t] = exact
	}
	e.mu.Unlock()
	e.first.CompareAndSwap(nil, &exactType{t: t, exact: exact}) // the first type kept: types decoded in turn do not replace each other
	return exact
}
