package strictjson

import (
	"encoding"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/baton-mcp/baton/internal/jsonscan"
)

// Exact matching is a security property (see the package doc), but it
// costs the usual Go habit dearly: a struct field without a json tag is
// named by its Go name, so {"name": "Ada"} leaves Name empty without a
// word. Bind and Fields turn that silence into an error: a key that
// matches no field exactly but would match one if case were ignored (the
// way encoding/json matches) is refused with an error naming the key, the
// field and the fix. Keys that match nothing at all are still ignored.

// Bind decodes data into v like Unmarshal (keys match struct fields
// exactly), then refuses a key that matches a field of a struct in v only
// when case is ignored: the usual cause is a field without a json tag
// (key "name", field Name). It is meant for values user code reads (tool
// arguments, elicitation answers), not for protocol envelopes. On error v
// may be partly filled.
func Bind(data []byte, v any) error {
	return (*Memo)(nil).Bind(data, v)
}

// Fields is the table of object keys that a Go type's structs accept,
// computed once (for a typed handler, at registration) and then read by
// Check from any goroutine. The nil *Fields checks nothing.
type Fields struct {
	root  *shape
	types map[reflect.Type]*shape
}

// shape is what the check needs of one type: nothing (nil shape), an
// object whose keys are fields (a struct), or a container whose elements
// or values have a shape.
type shape struct {
	kind   reflect.Kind      // reflect.Struct, reflect.Slice (slices and arrays) or reflect.Map
	fields map[string]*field // struct: exact JSON name -> field
	folded map[string]*field // struct: folded JSON name -> field (first in field order)
	elem   *shape            // slice, map: the element's shape
	name   string            // struct: the type's name, for messages
}

type field struct {
	goName string // Go name of the field
	key    string // the exact JSON key it takes
	tagged bool   // the key comes from a json tag
	shape  *shape // the value's shape (nil: nothing to check inside)
}

// FieldsOf returns the key table of t (pointers are followed). It returns
// nil when no struct is reachable from t, so that Check costs nothing.
func FieldsOf(t reflect.Type) *Fields {
	f := &Fields{types: map[reflect.Type]*shape{}}
	f.root = f.shapeOf(t)
	if f.root == nil {
		return nil
	}
	return f
}

var (
	unmarshalerType     = reflect.TypeFor[stdjson.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// shapeOf returns the shape of t, or nil when values of t hold no struct
// the check could look into. Types with their own UnmarshalJSON or
// UnmarshalText decide their keys themselves and are not looked into.
func (f *Fields) shapeOf(t reflect.Type) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, seen := f.types[t]; seen {
		return s // nil for a type being built that turned out empty is fine: recursion ends there
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		f.types[t] = nil
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		if t.Kind() == reflect.Map && t.Key().Kind() != reflect.String {
			f.types[t] = nil
			return nil
		}
		s := &shape{kind: reflect.Slice}
		if t.Kind() == reflect.Map {
			s.kind = reflect.Map
		}
		f.types[t] = s // placeholder for recursive types
		if s.elem = f.shapeOf(t.Elem()); s.elem == nil {
			f.types[t] = nil
			return nil
		}
		return s
	case reflect.Struct:
		s := &shape{kind: reflect.Struct, fields: map[string]*field{}, folded: map[string]*field{}, name: t.Name()}
		f.types[t] = s // registered before the fields' shapes, so recursive types end
		for _, sf := range reflect.VisibleFields(t) {
			key, tagged, ok := jsonName(sf)
			if !ok {
				continue
			}
			if _, dup := s.fields[key]; dup {
				continue // encoding/json's dominance rules pick one; either serves the check
			}
			fd := &field{goName: sf.Name, key: key, tagged: tagged}
			s.fields[key] = fd
			if _, dup := s.folded[fold(key)]; !dup {
				s.folded[fold(key)] = fd
			}
			fd.shape = f.shapeOf(sf.Type)
		}
		if len(s.fields) == 0 {
			f.types[t] = nil
			return nil
		}
		return s
	}
	f.types[t] = nil
	return nil
}

// jsonName returns the key encoding/json gives a visible struct field, and
// reports false for fields it skips (unexported, tagged "-", or embedded
// structs whose fields are promoted).
func jsonName(sf reflect.StructField) (key string, tagged, ok bool) {
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	name, _, _ := strings.Cut(tag, ",")
	if sf.Anonymous {
		t := sf.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if name == "" && t.Kind() == reflect.Struct {
			return "", false, false // promoted: VisibleFields lists its fields
		}
		if !sf.IsExported() && name == "" {
			return "", false, false
		}
	} else if !sf.IsExported() {
		return "", false, false
	}
	if name != "" {
		return name, true, true
	}
	return sf.Name, false, true
}

// fold maps s to a key shared by every string that equals it under Unicode
// simple case folding (strings.EqualFold), so "name", "NAME", "Name" and
// "\u212aey"/"key" meet in one map entry.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		m := r
		for g := unicode.SimpleFold(r); g != r; g = unicode.SimpleFold(g) {
			if g < m {
				m = g
			}
		}
		b.WriteRune(m)
	}
	return b.String()
}

// CaseError reports a key that matches a struct field only when case is
// ignored.
type CaseError struct {
	// Path locates the object holding the key, as a JSON Pointer ("" for
	// the top level).
	Path string
	// Key is the key as sent.
	Key string
	// Struct and Field name the Go struct type ("" when anonymous) and its
	// field.
	Struct, Field string
	// Want is the key the field takes; Tagged says it comes from a json
	// tag (else it is the Go name).
	Want   string
	Tagged bool
}

// Error names the key, the field it matched only case-insensitively, and
// the fix.
func (e *CaseError) Error() string {
	where := ""
	if e.Path != "" {
		where = " at " + e.Path
	}
	field := e.Field
	if e.Struct != "" {
		field = e.Struct + "." + e.Field
	}
	if e.Tagged {
		return fmt.Sprintf("key %q%s matches field %s (json:%q) only if case is ignored, and keys are matched exactly: the key must be spelled %q",
			e.Key, where, field, e.Want, e.Want)
	}
	return fmt.Sprintf("key %q%s matches field %s only if case is ignored, and keys are matched exactly: a field without a json tag takes its Go name %q; add the tag `json:%q` to the field",
		e.Key, where, field, e.Want, e.Key)
}

// Check walks data, which must be valid JSON (call it after data decoded
// into the type), and
// returns a *CaseError for the first key, in document order, that matches
// no field of its struct exactly but matches one when case is ignored.
func (f *Fields) Check(data []byte) error {
	if f == nil {
		return nil
	}
	return checkValue(data, f.root, "")
}

func checkValue(data []byte, s *shape, path string) error {
	if s == nil {
		return nil
	}
	var err error
	switch s.kind {
	case reflect.Struct:
		err = jsonscan.EachMember(data, func(k, v []byte) error {
			fd, ok := s.fields[string(k)]
			if !ok {
				if fd = s.folded[fold(string(k))]; fd != nil {
					return &CaseError{Path: path, Key: string(k), Struct: s.name, Field: fd.goName, Want: fd.key, Tagged: fd.tagged}
				}
				return nil
			}
			if fd.shape == nil {
				return nil
			}
			return checkValue(v, fd.shape, path+"/"+escape(string(k)))
		})
	case reflect.Map:
		err = jsonscan.EachMember(data, func(k, v []byte) error {
			return checkValue(v, s.elem, path+"/"+escape(string(k)))
		})
	case reflect.Slice:
		err = jsonscan.EachElement(data, func(i int, v []byte) error {
			return checkValue(v, s.elem, path+"/"+strconv.Itoa(i))
		})
	}
	if err == nil {
		return nil // and no *CaseError for errors.As to escape (an allocation per check)
	}
	var ce *CaseError
	if errors.As(err, &ce) {
		return err
	}
	return nil // null where an object or array was expected: nothing to check
}

// escape escapes a key for a JSON Pointer (RFC 6901).
func escape(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

// Memo keeps the key tables (FieldsOf) of the few types one owner decodes
// into, so that Bind reflects over a type once per owner rather than on
// every call: a server keeps one per tool (the types its handler binds
// arguments into), an elicitation schema one for the types its answers are
// decoded into. A profile of the two-round flow showed building the table
// at about a tenth of the server's time. It holds at most MemoSize types
// (an owner decodes into a few fixed types); beyond that, tables are built
// per call. The zero Memo is ready to use; a nil *Memo builds every time.
// It is safe for concurrent use.
type Memo struct {
	mu     sync.Mutex
	tables map[reflect.Type]*Fields
}

// MemoSize is the number of types a Memo keeps.
const MemoSize = 16

// Of returns FieldsOf(t), from the memo when it is there.
func (m *Memo) Of(t reflect.Type) *Fields {
	if m == nil {
		return FieldsOf(t)
	}
	m.mu.Lock()
	f, ok := m.tables[t]
	m.mu.Unlock()
	if ok {
		return f
	}
	f = FieldsOf(t)
	m.mu.Lock()
	if len(m.tables) < MemoSize {
		if m.tables == nil {
			m.tables = make(map[reflect.Type]*Fields)
		}
		m.tables[t] = f
	}
	m.mu.Unlock()
	return f
}

// Bind is the package's Bind with the key table taken from m.
func (m *Memo) Bind(data []byte, v any) error {
	if err := Unmarshal(data, v); err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	return m.Of(reflect.TypeOf(v)).Check(data)
}
