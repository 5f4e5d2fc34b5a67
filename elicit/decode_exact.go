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
	m  map[reflect.Type]*exactType
}

// exactType is a type, whether the schema's names are exact for it, and
// its flat decoding plan (nil: none; decode_flat.go).
type exactType struct {
	t     reflect.Type
	exact bool
	plan  *flatPlan
}

// bindChecked decodes content, checked against s, into v (Result.Decode).
// A nil s checks keys in full.
func (s *Schema) bindChecked(content []byte, v any) error {
	if s == nil || s.cache == nil {
		return strictjson.Bind(content, v)
	}
	c := s.cache
	if v != nil {
		t := reflect.TypeOf(v)
		e := c.exact.first.Load() // of's first step, without its call: once per answer a handler decodes
		if e == nil || e.t != t {
			e = c.exact.of(s, &c.decode, t)
		}
		if e.exact {
			if e.plan != nil && e.plan.decode(content, v) {
				return nil // strictjson.Unmarshal's result, in one pass (decode_flat.go)
			}
			return strictjson.Unmarshal(content, v)
		}
	}
	return c.decode.Bind(content, v)
}

// of returns what e remembers of t: whether the property names of s are
// exact for it, and its flat decoding plan.
func (e *exactKeys) of(s *Schema, memo *strictjson.Memo, t reflect.Type) *exactType {
	if l := e.first.Load(); l != nil && l.t == t {
		return l
	}
	e.mu.RLock()
	et, ok := e.m[t]
	e.mu.RUnlock()
	if ok {
		return et
	}
	names := make([]string, len(s.fields))
	for i, f := range s.fields {
		names[i] = f.name
	}
	et = &exactType{t: t, exact: memo.Of(t).Exact(names), plan: flatPlanOf(t)}
	e.mu.Lock()
	if len(e.m) < exactTypes {
		if e.m == nil {
			e.m = make(map[reflect.Type]*exactType)
		}
		e.m[t] = et
	}
	e.mu.Unlock()
	e.first.CompareAndSwap(nil, et) // the first type kept: types decoded in turn do not replace each other
	return et
}
