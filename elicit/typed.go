package elicit

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Typed forms: a form's schema inferred from a flat Go struct.
//
// Each exported field of the struct is one property, in field order. Its
// name is the field's json tag name (or its Go name without one); a field
// tagged json:"-" is left out. A field is required unless its json tag says
// omitempty or omitzero, as for the input schemas of typed tools. The Go
// type chooses the kind:
//
//	string (or a named string type)   string, or a single select with an enum tag
//	int, int8..int64, uint..uint64    integer (unsigned types get minimum 0)
//	float32, float64                  number
//	bool                              boolean
//	time.Time                         string with format date-time
//	[]string with an enum tag         multi select
//	*T of any of the above            the same as T
//
// Anything else (a nested or embedded struct, a map, a slice that is not an
// enum multi select, an interface) is an error that names the field.
//
// These tags refine a property (all optional):
//
//	title:"..."          the label shown for the field
//	description:"..."    its help text
//	enum:"a|b|c"         an untitled select: single for a string, multi for []string
//	enum:"a=A|b=B"       a titled select (oneOf for a string, items.anyOf for []string):
//	                     each option is const=title
//	enumNames:"A|B|C"    with an untitled string enum, the legacy enumNames shape
//	default:"..."        the prefilled value, parsed for the field's kind
//	                     (a|b for a multi select)
//	format:"email"       email, uri, date or date-time (strings only)
//	minLength, maxLength string bounds, in code points
//	minimum, maximum     number and integer bounds
//	minItems, maxItems   multi-select bounds
//
// Enum values and titles cannot contain '|', and a const cannot contain
// '='. The five enum shapes the specification allows are all reachable:
//
//	Size   string   `json:"size" enum:"s|m|l"`                         // enum
//	Size   string   `json:"size" enum:"s=Small|m=Medium|l=Large"`      // oneOf
//	Extras []string `json:"extras" enum:"milk|sugar"`                  // items.enum
//	Extras []string `json:"extras" enum:"milk=Milk|sugar=Sugar"`       // items.anyOf
//	Size   string   `json:"size" enum:"s|m|l" enumNames:"S|M|L"`       // enum + enumNames

// Form is a form whose schema was inferred from the struct type T: its
// [Form.Schema] goes in an elicitation, and [Form.Decode] turns the answer
// back into a T. Build one with [FormOf]; it is immutable and safe for
// concurrent use.
type Form[T any] struct {
	schema *Schema
}

// FormOf infers the form of the struct type T (by the rules of the
// package's typed-forms section) once, typically when a tool is registered.
func FormOf[T any]() (*Form[T], error) {
	s, err := inferSchema[T]()
	if err != nil {
		return nil, err
	}
	return &Form[T]{schema: s}, nil
}

// Schema returns the form's schema, the requestedSchema to send.
func (f *Form[T]) Schema() *Schema {
	if f == nil {
		return nil
	}
	return f.schema
}

// Request returns a form-mode elicitation request with this form's schema.
func (f *Form[T]) Request(message string) *Request {
	return &Request{Mode: ModeForm, Message: message, RequestedSchema: f.Schema()}
}

// Decode decodes an accepted answer into a new T, with the rules of
// [Result.Decode]: [ErrDeclined] or [ErrCancelled] (both match
// [ErrNotAccepted]) when the user did not accept.
func (f *Form[T]) Decode(res *Result) (T, error) {
	var v T
	if err := res.Decode(&v); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// inferSchema infers a flat form schema from the struct type T, following
// the rules in the package's typed-forms section: the json tag names a
// property, the Go type chooses its kind, and the tags title, description,
// enum, enumNames, default, format, minLength, maxLength, minimum, maximum,
// minItems and maxItems refine it. The result is checked against the same
// rules as [NewSchema]; every problem is reported together, each as a
// [*SchemaError] naming the property and the Go field.
func inferSchema[T any]() (*Schema, error) {
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("elicit: invalid form type %s: %w", t, &SchemaError{Reason: "a form is inferred from a struct type, got " + t.Kind().String()})
	}
	var fields []*Field
	var errs []error
	for sf := range fieldsOf(t) {
		f, err := fieldFor(sf)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if f != nil {
			fields = append(fields, f)
		}
	}
	if len(errs) == 0 {
		var s *Schema
		s, errs = buildSchema(fields)
		if len(errs) == 0 {
			return s, nil
		}
	}
	return nil, fmt.Errorf("elicit: invalid form type %s: %w", t, errors.Join(errs...))
}

// fieldsOf yields the struct's fields in order.
func fieldsOf(t reflect.Type) func(func(reflect.StructField) bool) {
	return func(yield func(reflect.StructField) bool) {
		for i := range t.NumField() {
			if !yield(t.Field(i)) {
				return
			}
		}
	}
}

// fieldFor builds the property of one struct field, nil for a field that
// is not part of the form.
func fieldFor(sf reflect.StructField) (*Field, error) {
	name, optional, skip := jsonName(sf)
	if skip {
		return nil, nil
	}
	fail := func(format string, args ...any) error {
		return &SchemaError{Property: name, Reason: "field " + sf.Name + ": " + fmt.Sprintf(format, args...)}
	}
	if sf.Anonymous {
		return nil, fail("an embedded field is not allowed in a flat form")
	}
	if !sf.IsExported() {
		return nil, nil
	}
	t := sf.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	enum, hasEnum := sf.Tag.Lookup("enum")
	names, hasNames := sf.Tag.Lookup("enumNames")
	var f *Field
	switch t.Kind() {
	case reflect.String:
		if !hasEnum {
			f = String(name)
			break
		}
		values, opts, titled, err := parseEnum(enum)
		if err != nil {
			return nil, fail("%v", err)
		}
		switch {
		case titled && hasNames:
			return nil, fail("enumNames goes with an untitled enum (a|b), not with const=title options")
		case titled:
			f = TitledEnum(name, opts...)
		case hasNames:
			f = LegacyEnum(name, values, strings.Split(names, "|"))
		default:
			f = Enum(name, values...)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f = Integer(name)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		f = Integer(name)
		if _, ok := sf.Tag.Lookup("minimum"); !ok {
			f.Minimum(0)
		}
	case reflect.Float32, reflect.Float64:
		f = Number(name)
	case reflect.Bool:
		f = Boolean(name)
	case reflect.Slice, reflect.Array:
		if t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.String || !hasEnum {
			return nil, fail("a %s is not allowed in a flat form: only a []string with an enum tag (a multi select)", t)
		}
		if hasNames {
			return nil, fail("enumNames applies only to a single select (a string field)")
		}
		values, opts, titled, err := parseEnum(enum)
		if err != nil {
			return nil, fail("%v", err)
		}
		if titled {
			f = TitledMultiEnum(name, opts...)
		} else {
			f = MultiEnum(name, values...)
		}
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() { // an RFC 3339 string
			if v, ok := sf.Tag.Lookup("format"); ok && v != string(FormatDateTime) {
				return nil, fail("a time.Time is a date-time, not %q", v)
			}
			f = String(name).Format(FormatDateTime)
			break
		}
		return nil, fail("a nested struct (%s) is not allowed in a flat form", t)
	default:
		return nil, fail("a %s is not allowed in a flat form", t)
	}
	if hasEnum && t.Kind() != reflect.String && t.Kind() != reflect.Slice {
		return nil, fail("enum applies only to a string or []string field")
	}
	if hasNames && !hasEnum {
		return nil, fail("enumNames needs an enum tag")
	}
	if !optional {
		f.Required()
	}
	if err := applyTags(f, sf); err != nil {
		return nil, fail("%v", err)
	}
	return f, nil
}

// jsonName reads the property name from the json tag.
func jsonName(sf reflect.StructField) (name string, optional, skip bool) {
	tag, ok := sf.Tag.Lookup("json")
	if tag == "-" {
		return "", false, true
	}
	name = sf.Name
	if ok {
		n, opts, _ := strings.Cut(tag, ",")
		if n != "" {
			name = n
		}
		for o := range strings.SplitSeq(opts, ",") {
			if o == "omitempty" || o == "omitzero" {
				optional = true
			}
		}
	}
	return name, optional, false
}

// parseEnum reads an enum tag: a|b|c, or const=title|const=title.
func parseEnum(tag string) (values []string, opts []Option, titled bool, err error) {
	parts := strings.Split(tag, "|")
	for i, p := range parts {
		c, title, ok := strings.Cut(p, "=")
		if i == 0 {
			titled = ok
		} else if ok != titled {
			return nil, nil, false, fmt.Errorf("enum %q mixes plain values and const=title options", tag)
		}
		if ok {
			opts = append(opts, Option{Const: c, Title: title})
		} else {
			values = append(values, p)
		}
	}
	return values, opts, titled, nil
}

// applyTags applies the refining tags; the builders record misfits, which
// buildSchema reports.
func applyTags(f *Field, sf reflect.StructField) error {
	if v, ok := sf.Tag.Lookup("title"); ok {
		f.Title(v)
	}
	if v, ok := sf.Tag.Lookup("description"); ok {
		f.Description(v)
	}
	if v, ok := sf.Tag.Lookup("format"); ok {
		f.Format(Format(v))
	}
	counts := []struct {
		key string
		set func(int) *Field
	}{{"minLength", f.MinLength}, {"maxLength", f.MaxLength}, {"minItems", f.MinItems}, {"maxItems", f.MaxItems}}
	for _, c := range counts {
		if v, ok := sf.Tag.Lookup(c.key); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s %q is not an integer", c.key, v)
			}
			c.set(n)
		}
	}
	bounds := []struct {
		key string
		set func(float64) *Field
	}{{"minimum", f.Minimum}, {"maximum", f.Maximum}}
	for _, b := range bounds {
		if v, ok := sf.Tag.Lookup(b.key); ok {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%s %q is not a number", b.key, v)
			}
			b.set(x)
		}
	}
	if v, ok := sf.Tag.Lookup("default"); ok {
		switch {
		case f.kind.isText():
			f.Default(v)
		case f.kind.isMulti():
			list := []string{}
			if v != "" {
				list = strings.Split(v, "|")
			}
			f.Default(list)
		case f.kind.isNumeric():
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("default %q is not a number", v)
			}
			f.Default(x)
		case f.kind == kindBoolean:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("default %q is not a boolean", v)
			}
			f.Default(b)
		}
	}
	return nil
}
