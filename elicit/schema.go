package elicit

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/baton-mcp/baton/internal/jsonscan"
)

// Schema is the requestedSchema of a form: a flat JSON object schema
//
//	{"$schema"?: string, "type": "object", "properties": {...}, "required"?: [...]}
//
// whose properties are primitives (string, number, integer, boolean) or
// enum selects, never nested objects or free-form arrays.
//
// A Schema is built with [NewSchema] (or [NewForm]) or parsed with
// [Schema.UnmarshalJSON]; all three enforce the flatness
// and consistency rules, so every Schema value is valid. Property order is
// preserved when marshaling. A Schema is immutable once built and safe for
// concurrent use; its validator is compiled once, on first use, and
// cached. The zero Schema is a valid form with no properties.
type Schema struct {
	dialect  string   // "$schema", "" when absent
	fields   []*Field // properties, in order
	required []string // "required", in order
	cache    *compiled
}

// NewSchema builds a schema from fields, in the given order. Fields marked
// [Field.Required] are listed in "required" in the same order. All builder
// and rule violations are reported together, each as a [*SchemaError].
func NewSchema(fields ...*Field) (*Schema, error) {
	s, errs := buildSchema(fields)
	if len(errs) > 0 {
		return nil, fmt.Errorf("elicit: invalid schema: %w", errors.Join(errs...))
	}
	return s, nil
}

// buildSchema assembles and checks a schema, returning every violation.
func buildSchema(fields []*Field) (*Schema, []error) {
	s := &Schema{cache: new(compiled)}
	var errs []error
	for i, f := range fields {
		if f == nil {
			errs = append(errs, &SchemaError{Reason: fmt.Sprintf("field %d is nil", i)})
			continue
		}
		c := f.clone()
		s.fields = append(s.fields, c)
		if c.required {
			s.required = append(s.required, c.name)
		}
	}
	errs = append(errs, s.check()...)
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// parseSchemaJSON parses a requestedSchema from JSON and checks it against the
// specification's restricted schema: only the keywords listed for each
// property kind are accepted, no nesting, no duplicate keys, and the same
// consistency rules as [NewSchema]. Property order is preserved.
func parseSchemaJSON(data []byte) (*Schema, error) {
	s, err := parseSchema(data)
	if err != nil {
		return nil, fmt.Errorf("elicit: invalid schema: %w", err)
	}
	return s, nil
}

// UnmarshalJSON implements [json.Unmarshaler]: only the keywords listed
// for each property kind are accepted, no nesting, no duplicate keys, and
// the same consistency rules as [NewSchema]. A JSON null leaves the schema unchanged.
func (s *Schema) UnmarshalJSON(data []byte) error {
	if s == nil {
		return errors.New("elicit: UnmarshalJSON on a nil *Schema")
	}
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	parsed, err := parseSchemaJSON(data)
	if err != nil {
		return err
	}
	s.dialect, s.fields, s.required, s.cache = parsed.dialect, parsed.fields, parsed.required, parsed.cache
	return nil
}

// MarshalJSON implements [json.Marshaler]. The encoding is canonical:
// keywords come in a fixed order, properties in schema order, and numbers
// in Go's shortest round-trip form, so equal schemas encode to equal bytes.
func (s *Schema) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	w, _ := s.wire()
	return append([]byte(nil), w...), nil
}

// appendWire appends the schema's canonical encoding to dst. It is
// computed once per Schema.
func (s *Schema) appendWire(dst []byte) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	w, _ := s.wire()
	return append(dst, w...)
}

// wire returns the canonical encoding and its digest, computed once.
// A Schema is immutable, so the cache never goes stale.
func (s *Schema) wire() ([]byte, [32]byte) {
	if s.cache == nil { // zero Schema: nothing to cache in
		w := s.appendJSON(nil, true)
		return w, sha256.Sum256(w)
	}
	c := s.cache
	c.wireOnce.Do(func() {
		c.wire = s.appendJSON(nil, true)
		c.digest = sha256.Sum256(c.wire)
	})
	return c.wire, c.digest
}

// appendJSON writes the canonical encoding of s. withDialect controls
// whether "$schema" is written (it is left out of the validator).
func (s *Schema) appendJSON(b []byte, withDialect bool) []byte {
	b = append(b, '{')
	if withDialect && s.dialect != "" {
		b = append(b, `"$schema":`...)
		b = appendString(b, s.dialect)
		b = append(b, ',')
	}
	b = append(b, `"type":"object","properties":{`...)
	for i, f := range s.fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.name)
		b = append(b, ':')
		b = f.appendJSON(b)
	}
	b = append(b, '}')
	if len(s.required) > 0 {
		b = append(b, `,"required":`...)
		b = appendStrings(b, s.required)
	}
	return append(b, '}')
}

func (f *Field) appendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, f.kind.wireType())
	if f.title != nil {
		b = append(b, `,"title":`...)
		b = appendString(b, *f.title)
	}
	if f.description != nil {
		b = append(b, `,"description":`...)
		b = appendString(b, *f.description)
	}
	b = appendInt(b, "minLength", f.minLength)
	b = appendInt(b, "maxLength", f.maxLength)
	if f.format != "" {
		b = append(b, `,"format":`...)
		b = appendString(b, string(f.format))
	}
	b = appendFloat(b, "minimum", f.minimum)
	b = appendFloat(b, "maximum", f.maximum)
	switch f.kind {
	case kindEnum, kindLegacyEnum:
		b = append(b, `,"enum":`...)
		b = appendStrings(b, f.values)
		if f.kind == kindLegacyEnum {
			b = append(b, `,"enumNames":`...)
			b = appendStrings(b, f.names)
		}
	case kindTitledEnum:
		b = append(b, `,"oneOf":`...)
		b = appendOptions(b, f.options)
	case kindMultiEnum, kindTitledMultiEnum:
		b = appendInt(b, "minItems", f.minItems)
		b = appendInt(b, "maxItems", f.maxItems)
		if f.kind == kindMultiEnum {
			b = append(b, `,"items":{"type":"string","enum":`...)
			b = appendStrings(b, f.values)
		} else {
			b = append(b, `,"items":{"anyOf":`...)
			b = appendOptions(b, f.options)
		}
		b = append(b, '}')
	}
	if f.def != nil {
		b = append(b, `,"default":`...)
		b = appendValue(b, f.def)
	}
	return append(b, '}')
}

// appendString appends s encoded as encoding/json encodes it. A string
// of printable ASCII that json.Marshal leaves as it is (no quote,
// backslash, <, > or &) is copied without it: a question's mode and
// message are encoded on every round that asks it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s) // a string always encodes
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendStrings(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendOptions(b []byte, opts []Option) []byte {
	b = append(b, '[')
	for i, o := range opts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"const":`...)
		b = appendString(b, o.Const)
		b = append(b, `,"title":`...)
		b = appendString(b, o.Title)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendInt(b []byte, key string, p *int) []byte {
	if p == nil {
		return b
	}
	return fmt.Appendf(b, `,%q:%d`, key, *p)
}

func appendFloat(b []byte, key string, p *float64) []byte {
	if p == nil {
		return b
	}
	return appendNumber(fmt.Appendf(b, `,%q:`, key), *p)
}

// appendNumber encodes a finite float exactly as encoding/json does.
// Non-finite values cannot reach a Schema; they would encode as 0.
func appendNumber(b []byte, x float64) []byte {
	enc, err := json.Marshal(x)
	if err != nil {
		return append(b, '0')
	}
	return append(b, enc...)
}

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return appendString(b, x)
	case float64:
		return appendNumber(b, x)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case []string:
		return appendStrings(b, x)
	}
	return append(b, "null"...)
}

// check enforces every rule on an assembled schema and returns all
// violations found.
func (s *Schema) check() []error {
	var errs []error
	seen := make(map[string]bool, len(s.fields))
	for _, f := range s.fields {
		if seen[f.name] {
			errs = append(errs, &SchemaError{Property: f.name, Reason: "duplicate property name"})
			continue
		}
		seen[f.name] = true
		errs = append(errs, f.check()...)
	}
	listed := make(map[string]bool, len(s.required))
	for _, name := range s.required {
		switch {
		case !seen[name]:
			errs = append(errs, &SchemaError{Property: name, Reason: "listed in required but not defined in properties"})
		case listed[name]:
			errs = append(errs, &SchemaError{Property: name, Reason: "listed in required more than once"})
		}
		listed[name] = true
	}
	if len(errs) == 0 {
		errs = s.checkFormatDefaults()
	}
	return errs
}

// check enforces the per-property rules.
func (f *Field) check() []error {
	errs := slices.Clone(f.errs)
	add := func(format string, args ...any) {
		errs = append(errs, &SchemaError{Property: f.name, Reason: fmt.Sprintf(format, args...)})
	}
	if f.name == "" {
		add("property name must not be empty")
	}
	if f.minLength != nil && f.maxLength != nil && *f.minLength > *f.maxLength {
		add("minLength %d is greater than maxLength %d", *f.minLength, *f.maxLength)
	}
	if f.format != "" && !f.format.valid() {
		add("format %q is not allowed (allowed: email, uri, date, date-time)", string(f.format))
	}
	if f.minimum != nil && f.maximum != nil && *f.minimum > *f.maximum {
		add("minimum %v is greater than maximum %v", *f.minimum, *f.maximum)
	}
	if f.minItems != nil && f.maxItems != nil && *f.minItems > *f.maxItems {
		add("minItems %d is greater than maxItems %d", *f.minItems, *f.maxItems)
	}
	var members []string
	switch f.kind {
	case kindEnum, kindLegacyEnum, kindMultiEnum:
		members = f.values
		if len(f.values) == 0 {
			add("enum must list at least one value")
		}
		dup := map[string]bool{}
		for _, v := range f.values {
			if v == "" {
				add("enum values must not be empty")
			} else if dup[v] {
				add("enum value %q is listed more than once", v)
			}
			dup[v] = true
		}
		if f.kind == kindLegacyEnum && len(f.names) != len(f.values) {
			add("enumNames has %d entries but enum has %d", len(f.names), len(f.values))
		}
	case kindTitledEnum, kindTitledMultiEnum:
		kw := "oneOf"
		if f.kind == kindTitledMultiEnum {
			kw = "items.anyOf"
		}
		if len(f.options) == 0 {
			add("%s must list at least one option", kw)
		}
		dup := map[string]bool{}
		for i, o := range f.options {
			switch {
			case o.Const == "":
				add("%s[%d] needs a non-empty const", kw, i)
			case dup[o.Const]:
				add("%s const %q is listed more than once", kw, o.Const)
			}
			if o.Title == "" {
				add("%s[%d] needs a non-empty title", kw, i)
			}
			dup[o.Const] = true
			members = append(members, o.Const)
		}
	}
	if f.def != nil {
		errs = append(errs, f.checkDefault(members)...)
	}
	return errs
}

func (f *Field) checkDefault(members []string) []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, &SchemaError{Property: f.name, Reason: fmt.Sprintf(format, args...)})
	}
	switch {
	case f.kind.isText():
		s, ok := f.def.(string)
		if !ok {
			add("default must be a string")
			break
		}
		n := utf8.RuneCountInString(s)
		if f.minLength != nil && n < *f.minLength {
			add("default %q is shorter than minLength %d", s, *f.minLength)
		}
		if f.maxLength != nil && n > *f.maxLength {
			add("default %q is longer than maxLength %d", s, *f.maxLength)
		}
		if f.kind != kindString && len(members) > 0 && !slices.Contains(members, s) {
			add("default %q is not one of the options", s)
		}
	case f.kind.isNumeric():
		x, ok := f.def.(float64)
		if !ok {
			add("default must be a number")
			break
		}
		if f.kind == kindInteger && x != math.Trunc(x) {
			add("default %v is not an integer", x)
		}
		if f.kind == kindInteger && (f.minimum == nil && x < -maxSafeInteger || f.maximum == nil && x > maxSafeInteger) {
			add("default %v is outside the safe integer range ±%d; set minimum or maximum to allow it", x, maxSafeInteger)
		}
		if f.minimum != nil && x < *f.minimum {
			add("default %v is less than minimum %v", x, *f.minimum)
		}
		if f.maximum != nil && x > *f.maximum {
			add("default %v is greater than maximum %v", x, *f.maximum)
		}
	case f.kind == kindBoolean:
		if _, ok := f.def.(bool); !ok {
			add("default must be a boolean")
		}
	case f.kind.isMulti():
		list, ok := f.def.([]string)
		if !ok {
			add("default must be a list of strings")
			break
		}
		seen := map[string]bool{}
		for _, v := range list {
			if len(members) > 0 && !slices.Contains(members, v) {
				add("default value %q is not one of the options", v)
			}
			if seen[v] {
				add("default value %q is listed more than once", v)
			}
			seen[v] = true
		}
		if f.minItems != nil && len(list) < *f.minItems {
			add("default has %d items, fewer than minItems %d", len(list), *f.minItems)
		}
		if f.maxItems != nil && len(list) > *f.maxItems {
			add("default has %d items, more than maxItems %d", len(list), *f.maxItems)
		}
	}
	return errs
}

// checkFormatDefaults validates string defaults that carry a format with
// the same validator answers are checked with, so a prefilled default is
// always an acceptable answer.
func (s *Schema) checkFormatDefaults() []error {
	doc := map[string]any{}
	for _, f := range s.fields {
		if str, ok := f.def.(string); ok && f.format != "" {
			doc[f.name] = str
		}
	}
	if len(doc) == 0 {
		return nil
	}
	verrs, err := s.validateDoc(doc)
	if err != nil {
		return []error{&SchemaError{Reason: err.Error()}}
	}
	errs := make([]error, 0, len(verrs))
	for _, v := range verrs {
		if v.Keyword == "required" {
			continue // only the defaults are checked here
		}
		errs = append(errs, &SchemaError{Property: v.Field, Reason: "default " + v.Reason})
	}
	return errs
}

// keepDefined returns content restricted to the properties s defines,
// keeping the original key order. content is returned unchanged when every
// key is defined.
func (s *Schema) keepDefined(content json.RawMessage, keys []string, doc map[string]any) json.RawMessage {
	defined := func(name string) bool {
		return slices.ContainsFunc(s.fields, func(f *Field) bool { return f.name == name })
	}
	if !slices.ContainsFunc(keys, func(k string) bool { return !defined(k) }) {
		return content
	}
	b := []byte{'{'}
	for _, k := range keys {
		if !defined(k) {
			continue
		}
		enc, err := json.Marshal(doc[k]) // string, json.Number, bool or []any of strings
		if err != nil {
			continue // unreachable: checkValue admitted only encodable values
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = append(b, enc...)
	}
	return append(b, '}')
}

// --- parsing ---

// decodeObject splits a JSON object into its members, in order, rejecting
// duplicate keys and trailing data. what names the object in errors.
func decodeObject(data []byte, what string) ([]jsonscan.Member, error) {
	return jsonscan.SplitObject(data, what)
}

func parseSchema(data []byte) (*Schema, error) {
	members, err := decodeObject(data, "schema")
	if err != nil {
		return nil, err
	}
	s := &Schema{cache: new(compiled)}
	var haveType, haveProps bool
	for _, m := range members {
		switch m.Key {
		case "$schema":
			if s.dialect, err = parseString(m.Value); err != nil {
				return nil, &SchemaError{Reason: "$schema " + err.Error()}
			}
		case "type":
			t, err := parseString(m.Value)
			if err != nil || t != "object" {
				return nil, &SchemaError{Reason: `type must be "object"`}
			}
			haveType = true
		case "properties":
			props, err := decodeObject(m.Value, "properties")
			if err != nil {
				return nil, &SchemaError{Reason: err.Error()}
			}
			var errs []error
			for _, p := range props {
				f, err := parseField(p.Key, p.Value)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				s.fields = append(s.fields, f)
			}
			if len(errs) > 0 {
				return nil, errors.Join(errs...)
			}
			haveProps = true
		case "required":
			if s.required, err = parseStrings(m.Value); err != nil {
				return nil, &SchemaError{Reason: "required " + err.Error()}
			}
		default:
			return nil, &SchemaError{Reason: fmt.Sprintf("keyword %q is not allowed at the top level (allowed: $schema, type, properties, required)", m.Key)}
		}
	}
	if !haveType {
		return nil, &SchemaError{Reason: `missing "type": "object"`}
	}
	if !haveProps {
		return nil, &SchemaError{Reason: `missing "properties"`}
	}
	if errs := s.check(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// parseField parses one property definition.
//
// It is one function (over 100 lines): the checks of one property
// definition's keywords, in the order their errors are reported.
func parseField(name string, data []byte) (*Field, error) {
	fail := func(format string, args ...any) error {
		return &SchemaError{Property: name, Reason: fmt.Sprintf(format, args...)}
	}
	members, err := decodeObject(data, "definition")
	if err != nil {
		return nil, fail("%v", err)
	}
	kw := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		kw[m.Key] = m.Value
	}
	rawType, ok := kw["type"]
	if !ok {
		return nil, fail(`missing "type"`)
	}
	typ, err := parseString(rawType)
	if err != nil {
		return nil, fail("type must be a single type name string")
	}
	f := &Field{name: name}
	_, hasEnum := kw["enum"]
	_, hasOneOf := kw["oneOf"]
	_, hasNames := kw["enumNames"]
	switch typ {
	case "string":
		switch {
		case hasEnum && hasOneOf:
			return nil, fail("enum and oneOf cannot be combined")
		case hasOneOf:
			f.kind = kindTitledEnum
		case hasEnum && hasNames:
			f.kind = kindLegacyEnum
		case hasEnum:
			f.kind = kindEnum
		case hasNames:
			return nil, fail("enumNames requires enum")
		default:
			f.kind = kindString
		}
	case "number":
		f.kind = kindNumber
	case "integer":
		f.kind = kindInteger
	case "boolean":
		f.kind = kindBoolean
	case "array":
		items, ok := kw["items"]
		if !ok {
			return nil, fail("arrays are only allowed as multi-select enums and need items")
		}
		if f.kind, err = f.parseItems(items); err != nil {
			return nil, fail("%v", err)
		}
	case "object":
		return nil, fail("nested objects are not allowed; elicitation schemas must be flat")
	default:
		return nil, fail("type %q is not allowed (allowed: string, number, integer, boolean, array)", typ)
	}
	allowed := f.kind.allowedKeywords()
	for _, m := range members {
		if !slices.Contains(allowed, m.Key) {
			return nil, fail("keyword %q is not allowed on %s property (allowed: %s)", m.Key, f.kind.withArticle(), strings.Join(allowed, ", "))
		}
	}
	for _, m := range members {
		var err error
		switch m.Key {
		case "type", "items":
			// handled above
		case "title":
			f.title, err = parseStringPtr(m.Value)
		case "description":
			f.description, err = parseStringPtr(m.Value)
		case "minLength":
			f.minLength, err = parseCount(m.Value)
		case "maxLength":
			f.maxLength, err = parseCount(m.Value)
		case "minItems":
			f.minItems, err = parseCount(m.Value)
		case "maxItems":
			f.maxItems, err = parseCount(m.Value)
		case "minimum":
			f.minimum, err = parseFloatPtr(m.Value)
		case "maximum":
			f.maximum, err = parseFloatPtr(m.Value)
		case "format":
			var s string
			if s, err = parseString(m.Value); err == nil {
				if f.format = Format(s); !f.format.valid() {
					err = fmt.Errorf("%q is not allowed (allowed: email, uri, date, date-time)", s)
				}
			}
		case "enum":
			f.values, err = parseStrings(m.Value)
		case "enumNames":
			f.names, err = parseStrings(m.Value)
		case "oneOf":
			f.options, err = parseOptions(m.Value)
		case "default":
			f.def, err = f.parseDefault(m.Value)
		}
		if err != nil {
			return nil, fail("%s %v", m.Key, err)
		}
	}
	return f, nil
}

// parseItems parses the items of a multi select, storing its options, and
// returns the kind it denotes.
func (f *Field) parseItems(data []byte) (kind, error) {
	members, err := decodeObject(data, "items")
	if err != nil {
		return 0, err
	}
	kw := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		kw[m.Key] = m.Value
	}
	if raw, ok := kw["anyOf"]; ok {
		if len(kw) != 1 {
			return 0, errors.New(`items of a titled multi select may only contain "anyOf"`)
		}
		if f.options, err = parseOptions(raw); err != nil {
			return 0, fmt.Errorf("items.anyOf %w", err)
		}
		return kindTitledMultiEnum, nil
	}
	rawEnum, ok := kw["enum"]
	if !ok {
		return 0, errors.New("arrays are only allowed as multi-select enums: items need enum or anyOf")
	}
	for _, m := range members {
		if m.Key != "type" && m.Key != "enum" {
			return 0, fmt.Errorf("keyword %q is not allowed in items (allowed: type, enum)", m.Key)
		}
	}
	if t, err := parseString(kw["type"]); err != nil || t != "string" {
		return 0, errors.New(`items.type must be "string"`)
	}
	if f.values, err = parseStrings(rawEnum); err != nil {
		return 0, fmt.Errorf("items.enum %w", err)
	}
	return kindMultiEnum, nil
}

func (f *Field) parseDefault(data []byte) (any, error) {
	switch {
	case f.kind.isText():
		return parseString(data)
	case f.kind.isNumeric():
		return parseNumber(data)
	case f.kind == kindBoolean:
		switch string(bytes.TrimSpace(data)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, errors.New("must be a boolean")
	default:
		return parseStrings(data)
	}
}

// firstByte returns the first non-space byte of a JSON value.
func firstByte(data []byte) byte {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 {
		return 0
	}
	return data[0]
}

func parseString(data []byte) (string, error) {
	var s string
	if firstByte(data) != '"' || json.Unmarshal(data, &s) != nil {
		return "", errors.New("must be a string")
	}
	return s, nil
}

func parseStringPtr(data []byte) (*string, error) {
	s, err := parseString(data)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

func parseStrings(data []byte) ([]string, error) {
	var raw []json.RawMessage
	if firstByte(data) != '[' || json.Unmarshal(data, &raw) != nil {
		return nil, errors.New("must be an array of strings")
	}
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		s, err := parseString(r)
		if err != nil {
			return nil, errors.New("must be an array of strings")
		}
		out = append(out, s)
	}
	return out, nil
}

func parseNumber(data []byte) (float64, error) {
	var n json.Number
	if c := firstByte(data); c != '-' && (c < '0' || c > '9') {
		return 0, errors.New("must be a number")
	}
	if err := json.Unmarshal(data, &n); err != nil {
		return 0, errors.New("must be a number")
	}
	x, err := n.Float64()
	if err != nil || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%s is out of range", n)
	}
	return x, nil
}

func parseFloatPtr(data []byte) (*float64, error) {
	x, err := parseNumber(data)
	if err != nil {
		return nil, err
	}
	return &x, nil
}

func parseCount(data []byte) (*int, error) {
	x, err := parseNumber(data)
	if err != nil {
		return nil, err
	}
	if x != math.Trunc(x) || x < 0 || x > maxCount {
		return nil, fmt.Errorf("must be a non-negative integer no greater than 2^53, got %v", x)
	}
	n := int(x)
	return &n, nil
}

func parseOptions(data []byte) ([]Option, error) {
	var raw []json.RawMessage
	if firstByte(data) != '[' || json.Unmarshal(data, &raw) != nil {
		return nil, errors.New("must be an array of {const, title} objects")
	}
	out := make([]Option, 0, len(raw))
	for i, r := range raw {
		members, err := decodeObject(r, fmt.Sprintf("entry %d", i))
		if err != nil {
			return nil, err
		}
		var o Option
		var haveConst, haveTitle bool
		for _, m := range members {
			switch m.Key {
			case "const":
				if o.Const, err = parseString(m.Value); err != nil {
					return nil, fmt.Errorf("entry %d: const %w", i, err)
				}
				haveConst = true
			case "title":
				if o.Title, err = parseString(m.Value); err != nil {
					return nil, fmt.Errorf("entry %d: title %w", i, err)
				}
				haveTitle = true
			default:
				return nil, fmt.Errorf("entry %d: keyword %q is not allowed (allowed: const, title)", i, m.Key)
			}
		}
		if !haveConst || !haveTitle {
			return nil, fmt.Errorf("entry %d needs both const and title", i)
		}
		out = append(out, o)
	}
	return out, nil
}
