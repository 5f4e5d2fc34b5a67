package elicit

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// maxCount bounds minLength, maxLength, minItems and maxItems: 2^53, the
// largest integer every JSON implementation represents exactly.
const maxCount = 1 << 53

// Format is a string format a form field may declare. Only the four
// formats the specification allows exist.
type Format string

// The string formats allowed in an elicitation schema. Answers are checked
// against them by [Request.CheckResult].
const (
	// FormatEmail is an e-mail address (RFC 5321 mailbox).
	FormatEmail Format = "email"
	// FormatURI is an absolute URI (RFC 3986).
	FormatURI Format = "uri"
	// FormatDate is a full date, YYYY-MM-DD (RFC 3339).
	FormatDate Format = "date"
	// FormatDateTime is a date and time with offset (RFC 3339).
	FormatDateTime Format = "date-time"
)

func (f Format) valid() bool {
	switch f {
	case FormatEmail, FormatURI, FormatDate, FormatDateTime:
		return true
	}
	return false
}

// Option is one choice of a titled select: Const is the value sent back in
// the answer, Title is the label shown to the user. Both are required.
type Option struct {
	// Const is the value the client returns when this option is chosen.
	Const string `json:"const"`
	// Title is the display label of the option.
	Title string `json:"title"`
}

// kind is the shape of a property, one per row of the specification's
// PrimitiveSchemaDefinition union.
type kind uint8

const (
	kindString kind = iota + 1
	kindNumber
	kindInteger
	kindBoolean
	kindEnum            // type string + enum
	kindTitledEnum      // type string + oneOf [{const,title}]
	kindLegacyEnum      // type string + enum + enumNames
	kindMultiEnum       // type array + items {type string, enum}
	kindTitledMultiEnum // type array + items {anyOf [{const,title}]}
)

// String returns a human description of the kind, used in error messages.
func (k kind) String() string {
	switch k {
	case kindString:
		return "string"
	case kindNumber:
		return "number"
	case kindInteger:
		return "integer"
	case kindBoolean:
		return "boolean"
	case kindEnum:
		return "single-select enum"
	case kindTitledEnum:
		return "titled single-select enum"
	case kindLegacyEnum:
		return "legacy titled enum"
	case kindMultiEnum:
		return "multi-select enum"
	case kindTitledMultiEnum:
		return "titled multi-select enum"
	}
	return "unknown"
}

// withArticle returns the kind after its indefinite article, for
// messages: "an integer", "a string".
func (k kind) withArticle() string {
	s := k.String()
	if strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// wireType is the value of the property's "type" keyword.
func (k kind) wireType() string {
	switch k {
	case kindNumber:
		return "number"
	case kindInteger:
		return "integer"
	case kindBoolean:
		return "boolean"
	case kindMultiEnum, kindTitledMultiEnum:
		return "array"
	}
	return "string"
}

func (k kind) isText() bool {
	return k == kindString || k == kindEnum || k == kindTitledEnum || k == kindLegacyEnum
}

func (k kind) isNumeric() bool { return k == kindNumber || k == kindInteger }

func (k kind) isMulti() bool { return k == kindMultiEnum || k == kindTitledMultiEnum }

// allowedKeywords lists, in wire order, the keywords a property of this
// kind may carry. Anything else is rejected when parsing.
func (k kind) allowedKeywords() []string {
	switch k {
	case kindString:
		return []string{"type", "title", "description", "minLength", "maxLength", "format", "default"}
	case kindNumber, kindInteger:
		return []string{"type", "title", "description", "minimum", "maximum", "default"}
	case kindBoolean:
		return []string{"type", "title", "description", "default"}
	case kindEnum:
		return []string{"type", "title", "description", "enum", "default"}
	case kindTitledEnum:
		return []string{"type", "title", "description", "oneOf", "default"}
	case kindLegacyEnum:
		return []string{"type", "title", "description", "enum", "enumNames", "default"}
	case kindMultiEnum, kindTitledMultiEnum:
		return []string{"type", "title", "description", "minItems", "maxItems", "items", "default"}
	}
	return nil
}

// Field is one property of a form, built with [String], [Number],
// [Integer], [Boolean], [Enum], [TitledEnum], [MultiEnum],
// [TitledMultiEnum] or [LegacyEnum] and refined with chainable modifiers.
//
// Modifiers never panic. A modifier that does not fit the field's kind, or
// an invalid argument, is recorded and reported by [NewForm] or
// [NewSchema]. Those constructors copy the field, so changing a Field
// afterwards does not affect schemas already built from it. A Field is not
// safe for concurrent modification.
type Field struct {
	name        string
	kind        kind
	title       *string
	description *string
	required    bool

	minLength *int
	maxLength *int
	format    Format

	minimum *float64
	maximum *float64

	minItems *int
	maxItems *int

	values  []string // enum values: kindEnum, kindLegacyEnum, kindMultiEnum
	names   []string // enumNames: kindLegacyEnum
	options []Option // oneOf / anyOf: kindTitledEnum, kindTitledMultiEnum

	// def is the default value, normalised: string for text kinds,
	// float64 for numeric kinds, bool for booleans, []string for
	// multi-selects; nil when absent.
	def any

	errs []error // builder errors, reported at schema construction
}

// String starts a free-text string property.
func String(name string) *Field { return &Field{name: name, kind: kindString} }

// Number starts a numeric property (JSON "number": any JSON number).
func Number(name string) *Field { return &Field{name: name, kind: kindNumber} }

// Integer starts an integral numeric property (JSON "integer").
func Integer(name string) *Field { return &Field{name: name, kind: kindInteger} }

// Boolean starts a true/false property.
func Boolean(name string) *Field { return &Field{name: name, kind: kindBoolean} }

// Enum starts an untitled single select: {"type":"string","enum":[...]}.
// Values must be non-empty and unique.
func Enum(name string, values ...string) *Field {
	return &Field{name: name, kind: kindEnum, values: slices.Clone(values)}
}

// TitledEnum starts a titled single select:
// {"type":"string","oneOf":[{"const":...,"title":...},...]}.
func TitledEnum(name string, options ...Option) *Field {
	return &Field{name: name, kind: kindTitledEnum, options: slices.Clone(options)}
}

// MultiEnum starts an untitled multi select:
// {"type":"array","items":{"type":"string","enum":[...]}}.
func MultiEnum(name string, values ...string) *Field {
	return &Field{name: name, kind: kindMultiEnum, values: slices.Clone(values)}
}

// TitledMultiEnum starts a titled multi select:
// {"type":"array","items":{"anyOf":[{"const":...,"title":...},...]}}.
func TitledMultiEnum(name string, options ...Option) *Field {
	return &Field{name: name, kind: kindTitledMultiEnum, options: slices.Clone(options)}
}

// LegacyEnum starts a legacy titled single select using the non-standard
// enumNames keyword: {"type":"string","enum":[...],"enumNames":[...]}.
// names must have the same length as values. Prefer [TitledEnum]; this
// shape is kept only for clients that predate it.
func LegacyEnum(name string, values, names []string) *Field {
	return &Field{name: name, kind: kindLegacyEnum, values: slices.Clone(values), names: slices.Clone(names)}
}

func (f *Field) fail(format string, args ...any) {
	f.errs = append(f.errs, &SchemaError{Property: f.name, Reason: fmt.Sprintf(format, args...)})
}

// misfit records that keyword does not apply to this field's kind and
// reports whether that was the case.
func (f *Field) misfit(keyword string, ok bool) bool {
	if !ok {
		f.fail("%s does not apply to %s property", keyword, f.kind.withArticle())
	}
	return !ok
}

// Title sets the label shown for the field.
func (f *Field) Title(s string) *Field {
	if f == nil {
		return nil
	}
	f.title = &s
	return f
}

// Description sets the help text shown for the field.
func (f *Field) Description(s string) *Field {
	if f == nil {
		return nil
	}
	f.description = &s
	return f
}

// Required marks the field as required: an accepted answer must contain it.
func (f *Field) Required() *Field {
	if f == nil {
		return nil
	}
	f.required = true
	return f
}

func (f *Field) count(keyword string, n int, fits bool, dst **int) *Field {
	if f == nil {
		return nil
	}
	if f.misfit(keyword, fits) {
		return f
	}
	if n < 0 || n > maxCount {
		f.fail("%s must be between 0 and 2^53, got %d", keyword, n)
		return f
	}
	*dst = &n
	return f
}

// MinLength sets the minimum length, in Unicode code points, of a string
// field.
func (f *Field) MinLength(n int) *Field {
	if f == nil {
		return nil
	}
	return f.count("minLength", n, f.kind == kindString, &f.minLength)
}

// MaxLength sets the maximum length, in Unicode code points, of a string
// field.
func (f *Field) MaxLength(n int) *Field {
	if f == nil {
		return nil
	}
	return f.count("maxLength", n, f.kind == kindString, &f.maxLength)
}

// MinItems sets the minimum number of selections of a multi-select field.
func (f *Field) MinItems(n int) *Field {
	if f == nil {
		return nil
	}
	return f.count("minItems", n, f.kind.isMulti(), &f.minItems)
}

// MaxItems sets the maximum number of selections of a multi-select field.
func (f *Field) MaxItems(n int) *Field {
	if f == nil {
		return nil
	}
	return f.count("maxItems", n, f.kind.isMulti(), &f.maxItems)
}

// Format sets the format of a string field: [FormatEmail], [FormatURI],
// [FormatDate] or [FormatDateTime].
func (f *Field) Format(format Format) *Field {
	if f == nil {
		return nil
	}
	if f.misfit("format", f.kind == kindString) {
		return f
	}
	if !format.valid() {
		f.fail("format %q is not allowed (allowed: email, uri, date, date-time)", string(format))
		return f
	}
	f.format = format
	return f
}

func (f *Field) bound(keyword string, x float64, dst **float64) *Field {
	if f == nil {
		return nil
	}
	if f.misfit(keyword, f.kind.isNumeric()) {
		return f
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		f.fail("%s must be a finite number, got %v", keyword, x)
		return f
	}
	*dst = &x
	return f
}

// Minimum sets the inclusive lower bound of a number or integer field.
func (f *Field) Minimum(x float64) *Field {
	if f == nil {
		return nil
	}
	return f.bound("minimum", x, &f.minimum)
}

// Maximum sets the inclusive upper bound of a number or integer field.
func (f *Field) Maximum(x float64) *Field {
	if f == nil {
		return nil
	}
	return f.bound("maximum", x, &f.maximum)
}

// Default sets the value the client should prefill (SEP-1034). Its Go type
// must fit the field: a string for string fields and single selects; any
// Go integer or float type (or a [json.Number]) for number fields, with an
// integral value for integer fields; a bool for boolean fields; a []string
// (or []any of strings) for multi selects. Selects also require every
// default value to be one of the options, and bounds must be respected.
func (f *Field) Default(v any) *Field {
	if f == nil {
		return nil
	}
	switch {
	case f.kind.isText():
		s, ok := v.(string)
		if !ok {
			f.fail("default must be a string, got %s", goType(v))
			return f
		}
		f.def = s
	case f.kind.isNumeric():
		x, ok := toFloat(v)
		if !ok {
			f.fail("default must be a number, got %s", goType(v))
			return f
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			f.fail("default must be a finite number, got %v", x)
			return f
		}
		f.def = x
	case f.kind == kindBoolean:
		b, ok := v.(bool)
		if !ok {
			f.fail("default must be a boolean, got %s", goType(v))
			return f
		}
		f.def = b
	case f.kind.isMulti():
		list, ok := toStrings(v)
		if !ok {
			f.fail("default must be a list of strings, got %s", goType(v))
			return f
		}
		f.def = list
	default:
		f.fail("default does not apply to %s property", f.kind.withArticle())
	}
	return f
}

func goType(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	}
	return 0, false
}

func toStrings(v any) ([]string, bool) {
	switch x := v.(type) {
	case []string:
		if x == nil {
			return []string{}, true
		}
		return slices.Clone(x), true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// clone returns a deep copy of f, so a schema never shares mutable state
// with the builder it came from.
func (f *Field) clone() *Field {
	c := *f
	c.title = clonePtr(f.title)
	c.description = clonePtr(f.description)
	c.minLength = clonePtr(f.minLength)
	c.maxLength = clonePtr(f.maxLength)
	c.minimum = clonePtr(f.minimum)
	c.maximum = clonePtr(f.maximum)
	c.minItems = clonePtr(f.minItems)
	c.maxItems = clonePtr(f.maxItems)
	c.values = slices.Clone(f.values)
	c.names = slices.Clone(f.names)
	c.options = slices.Clone(f.options)
	if list, ok := f.def.([]string); ok {
		c.def = slices.Clone(list)
	}
	c.errs = slices.Clone(f.errs)
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
