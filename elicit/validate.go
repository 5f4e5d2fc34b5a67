package elicit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	jskind "github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/strictjson"
)

// schemaURL names the in-memory resource a Schema is compiled from. It is
// never fetched.
const schemaURL = "https://baton-mcp.invalid/elicit/requestedSchema.json"

// compiled caches a Schema's compiled validator.
type compiled struct {
	once sync.Once
	sch  *jsonschema.Schema
	err  error

	wireOnce sync.Once
	wire     []byte   // the canonical encoding, "$schema" included
	digest   [32]byte // SHA-256 of wire

	decode strictjson.Memo // key tables of the types answers are decoded into (Result.Decode)
	exact  exactKeys       // the types whose fields take the schema's properties exactly (decode_exact.go)

	// last is the digest of the last Request over this schema whose
	// digest was computed (Request.Digest): a handler asks the same
	// question again on every round, so its digest is read back instead
	// of hashed again.
	last atomic.Pointer[requestDigest]

	fastOnce sync.Once
	fast     *fastForm // the plan for checking answers without the validator (fastcheck.go)
}

// requestDigest is a Request's digest and the fields it was computed from.
type requestDigest struct {
	mode, message, url, elicitationID string
	digest                            [32]byte
}

// validator returns the compiled validator, compiling it on first use.
func (s *Schema) validator() (*jsonschema.Schema, error) {
	if s.cache == nil { // zero Schema: compile every time, nothing to cache in
		return s.compile()
	}
	s.cache.once.Do(func() { s.cache.sch, s.cache.err = s.compile() })
	return s.cache.sch, s.cache.err
}

// compile builds a validator from the canonical encoding, minus "$schema":
// the restricted vocabulary means the same in every draft, and an unknown
// dialect URL must never cause a fetch. Formats are asserted.
func (s *Schema) compile() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.appendJSON(nil, false)))
	if err != nil {
		return nil, fmt.Errorf("elicit: compiling schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("elicit: compiling schema: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("elicit: compiling schema: %w", err)
	}
	return sch, nil
}

// validateContent checks the content of an accepted answer against s.
// content must be a JSON object, without duplicate keys, whose values are
// strings, numbers (within float64 range), booleans or arrays of strings;
// nil (or JSON null) counts as an empty object, so it fails only if some
// property is required. Keys are matched exactly (case-sensitively).
// Properties not defined by the schema are allowed, as in JSON Schema, but
// must still have one of those value shapes.
//
// Two rules go beyond what the schema says: a multi-select may list each
// option once (["a","a"] is refused, keyword "uniqueItems"), and an
// integer must lie within ±(2^53-1), the range a JSON number carries
// exactly, on each side the field's own minimum or maximum leaves open
// (keyword "minimum" or "maximum"); an integer field with a default
// outside that range is refused when the schema is built.
//
// Each problem is reported as a [*ValidationError] naming the property;
// several are joined, in schema order.
func (s *Schema) validateContent(content json.RawMessage) error {
	if s == nil {
		return errors.New("elicit: validating content against a nil *Schema")
	}
	doc, _, err := decodeContent(content)
	if err != nil {
		return fmt.Errorf("elicit: invalid content: %w", err)
	}
	return s.validateContentDoc(doc)
}

func (s *Schema) validateContentDoc(doc map[string]any) error {
	verrs, err := s.validateDoc(doc)
	if err != nil {
		return err
	}
	if len(verrs) > 0 {
		errs := make([]error, len(verrs))
		for i, v := range verrs {
			errs[i] = v
		}
		return fmt.Errorf("elicit: content does not match the requested schema: %w", errors.Join(errs...))
	}
	return nil
}

// validateDoc validates a decoded content object and returns the
// violations in schema order; the error is set only if the schema could
// not be compiled or validation failed for another reason.
func (s *Schema) validateDoc(doc map[string]any) ([]*ValidationError, error) {
	sch, err := s.validator()
	if err != nil {
		return nil, err
	}
	var verrs []*ValidationError
	if err := sch.Validate(doc); err != nil {
		var verr *jsonschema.ValidationError
		if !errors.As(err, &verr) {
			return nil, fmt.Errorf("elicit: validating content: %w", err)
		}
		verrs = s.convert(doc, verr)
	}
	if more := s.checkBeyondSchema(doc, verrs); len(more) > 0 {
		verrs = append(verrs, more...)
		order := make(map[string]int, len(s.fields))
		for i, f := range s.fields {
			order[f.name] = i
		}
		slices.SortStableFunc(verrs, func(a, b *ValidationError) int {
			return cmp.Compare(order[a.Field], order[b.Field])
		})
	}
	return verrs, nil
}

// maxSafeInteger is the largest integer a JSON number carries exactly
// between any two implementations (2^53-1, IEEE 754 double precision):
// an integer answer beyond ±maxSafeInteger is refused unless the field's
// own minimum or maximum allows it (a bound the schema sets is checked as
// it is).
const maxSafeInteger = 1<<53 - 1

// checkBeyondSchema applies the rules an answer must meet that the
// restricted schema vocabulary cannot say: a multi-select lists each
// option at most once, and an integer lies within ±maxSafeInteger on every
// side the field does not bound itself. Fields that already have a
// violation are skipped.
func (s *Schema) checkBeyondSchema(doc map[string]any, found []*ValidationError) []*ValidationError {
	var out []*ValidationError
	for _, f := range s.fields {
		v, ok := doc[f.name]
		if !ok || slices.ContainsFunc(found, func(e *ValidationError) bool { return e.Field == f.name }) {
			continue
		}
		switch {
		case f.kind.isMulti():
			list, _ := v.([]any)
			first := make(map[string]int, len(list))
			for i, e := range list {
				str, _ := e.(string)
				if j, dup := first[str]; dup {
					out = append(out, &ValidationError{Field: f.name, Keyword: "uniqueItems",
						Reason: fmt.Sprintf("item %d: %s is already selected (item %d); each option may be chosen once", i, display(str), j)})
					continue
				}
				first[str] = i
			}
		case f.kind == kindInteger:
			n, ok := v.(json.Number)
			if !ok {
				continue
			}
			x, err := n.Float64()
			if err != nil {
				continue // out of float64 range: checkValue refused it
			}
			switch {
			case f.minimum == nil && x < -maxSafeInteger:
				out = append(out, &ValidationError{Field: f.name, Keyword: "minimum",
					Reason: fmt.Sprintf("must be at least %d (the safe integer range), got %s", -maxSafeInteger, clip.String(n.String()))})
			case f.maximum == nil && x > maxSafeInteger:
				out = append(out, &ValidationError{Field: f.name, Keyword: "maximum",
					Reason: fmt.Sprintf("must be at most %d (the safe integer range), got %s", maxSafeInteger, clip.String(n.String()))})
			}
		}
	}
	return out
}

// decodeContent decodes answer content: absent or null is an empty object;
// otherwise it must be an object, without duplicate keys, whose values
// have an allowed shape. The keys are also returned in document order.
func decodeContent(content []byte) (map[string]any, []string, error) {
	if t := bytes.TrimSpace(content); len(t) > 0 && !json.Valid(t) {
		return nil, nil, errors.New("content is not valid JSON")
	}
	return decodeValidContent(content)
}

// decodeValidContent is decodeContent for content already known to be
// valid JSON (a member of a parsed result).
func decodeValidContent(content []byte) (map[string]any, []string, error) {
	trimmed := bytes.TrimSpace(content)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return map[string]any{}, nil, nil
	}
	if trimmed[0] != '{' {
		return nil, nil, &ValidationError{Keyword: "content", Reason: "must be a JSON object"}
	}
	members, err := jsonscan.SplitValidObject(trimmed, "content")
	if err != nil {
		return nil, nil, err
	}
	doc := make(map[string]any, len(members))
	keys := make([]string, 0, len(members))
	var errs []error
	for _, m := range members {
		v, err := decodeValue(m.Value)
		if err != nil {
			return nil, nil, fmt.Errorf("content: key %s: %w", clip.Quote(m.Key), err)
		}
		if reason := checkValue(v); reason != "" {
			errs = append(errs, &ValidationError{Field: m.Key, Keyword: "content", Reason: reason})
		}
		doc[m.Key] = v
		keys = append(keys, m.Key)
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return doc, keys, nil
}

// checkValue returns why v is not string | number | boolean | string[],
// or "" if it is. Numbers must also fit a float64, so that any accepted
// content decodes with encoding/json, and their literal must be within
// rpcwire's default limits (100 bytes, exponent within ±400): a literal
// like 1e-999999 fits (as 0), but the schema's exact comparisons would
// cost time in proportion to its exponent.
func checkValue(v any) string {
	switch x := v.(type) {
	case string, bool:
		return ""
	case json.Number:
		if _, err := x.Float64(); err != nil || rpcwire.CheckLimits([]byte(x), rpcwire.Limits{}) != nil {
			return fmt.Sprintf("number %s is out of range", clip.String(string(x)))
		}
		return ""
	case []any:
		for _, e := range x {
			if _, ok := e.(string); !ok {
				return "must be a string, number, boolean or list of strings, got a list containing " + jsonTypeOf(e)
			}
		}
		return ""
	}
	return "must be a string, number, boolean or list of strings, got " + jsonTypeOf(v)
}

func jsonTypeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// convert flattens a jsonschema error tree into one ValidationError per
// problem, keeps only the type error where a value has the wrong type, and
// orders the result by property position in the schema.
func (s *Schema) convert(doc map[string]any, root *jsonschema.ValidationError) []*ValidationError {
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch e.ErrorKind.(type) {
		case *jskind.OneOf, *jskind.AnyOf:
			leaves = append(leaves, e) // report the select, not each const
			return
		}
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(root)

	type entry struct {
		v    *ValidationError
		loc  string
		item int
	}
	var entries []entry
	typed := map[string]bool{}
	for _, e := range leaves {
		loc := strings.Join(e.InstanceLocation, "\x00")
		field, item := "", -1
		if len(e.InstanceLocation) > 0 {
			field = e.InstanceLocation[0]
		}
		if len(e.InstanceLocation) > 1 {
			if n, err := strconv.Atoi(e.InstanceLocation[1]); err == nil {
				item = n
			}
		}
		if req, ok := e.ErrorKind.(*jskind.Required); ok {
			for _, name := range req.Missing {
				entries = append(entries, entry{&ValidationError{Field: name, Keyword: "required", Reason: "is required"}, name, -1})
			}
			continue
		}
		if _, ok := e.ErrorKind.(*jskind.Type); ok {
			typed[loc] = true
		}
		keyword, reason := s.describe(doc, field, item, e.ErrorKind)
		if item >= 0 {
			reason = fmt.Sprintf("item %d: %s", item, reason)
		}
		entries = append(entries, entry{&ValidationError{Field: field, Keyword: keyword, Reason: reason}, loc, item})
	}

	order := make(map[string]int, len(s.fields))
	for i, f := range s.fields {
		order[f.name] = i
	}
	pos := func(name string) int {
		if i, ok := order[name]; ok {
			return i
		}
		return len(s.fields)
	}
	out := make([]*ValidationError, 0, len(entries))
	kept := make([]entry, 0, len(entries))
	for _, en := range entries {
		if typed[en.loc] && en.v.Keyword != "type" {
			continue
		}
		kept = append(kept, en)
	}
	slices.SortStableFunc(kept, func(a, b entry) int {
		return cmp.Or(
			cmp.Compare(pos(a.v.Field), pos(b.v.Field)),
			cmp.Compare(a.v.Field, b.v.Field),
			cmp.Compare(a.item, b.item),
			cmp.Compare(a.v.Keyword, b.v.Keyword),
			cmp.Compare(a.v.Reason, b.v.Reason),
		)
	})
	for _, en := range kept {
		out = append(out, en.v)
	}
	return out
}

// describe turns one jsonschema error kind into a keyword and a reason.
func (s *Schema) describe(doc map[string]any, field string, item int, k jsonschema.ErrorKind) (string, string) {
	switch k := k.(type) {
	case *jskind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = article(w)
		}
		return "type", fmt.Sprintf("must be %s, got %s", strings.Join(want, " or "), article(k.Got))
	case *jskind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = display(w)
		}
		return "enum", fmt.Sprintf("%s is not one of the allowed values %s", display(k.Got), strings.Join(want, ", "))
	case *jskind.OneOf, *jskind.AnyOf:
		keyword := "oneOf"
		if _, ok := k.(*jskind.AnyOf); ok {
			keyword = "anyOf"
		}
		return keyword, fmt.Sprintf("%s is not one of the allowed values %s", display(valueAt(doc, field, item)), s.consts(field))
	case *jskind.Const:
		return "const", fmt.Sprintf("%s is not the allowed value %s", display(k.Got), display(k.Want))
	case *jskind.Format:
		return "format", fmt.Sprintf("%s is not a valid %s: %s", display(k.Got), formatName(k.Want), clip.String(fmt.Sprint(k.Err)))
	case *jskind.MinLength:
		return "minLength", fmt.Sprintf("must be at least %d characters long, got %d", k.Want, k.Got)
	case *jskind.MaxLength:
		return "maxLength", fmt.Sprintf("must be at most %d characters long, got %d", k.Want, k.Got)
	case *jskind.Minimum:
		return "minimum", fmt.Sprintf("must be at least %s, got %s", ratString(k.Want), ratString(k.Got))
	case *jskind.Maximum:
		return "maximum", fmt.Sprintf("must be at most %s, got %s", ratString(k.Want), ratString(k.Got))
	case *jskind.MinItems:
		return "minItems", fmt.Sprintf("must have at least %s, got %d", selections(k.Want), k.Got)
	case *jskind.MaxItems:
		return "maxItems", fmt.Sprintf("must have at most %s, got %d", selections(k.Want), k.Got)
	}
	path := k.KeywordPath()
	if len(path) == 0 {
		return "schema", "does not match the schema"
	}
	return path[len(path)-1], strings.Join(path, "/") + " failed"
}

// consts lists the option values of a titled select, for messages.
func (s *Schema) consts(field string) string {
	for _, f := range s.fields {
		if f.name == field {
			vals := make([]string, len(f.options))
			for i, o := range f.options {
				vals[i] = strconv.Quote(o.Const)
			}
			return strings.Join(vals, ", ")
		}
	}
	return "(unknown)"
}

func selections(n int) string {
	if n == 1 {
		return "1 selection"
	}
	return strconv.Itoa(n) + " selections"
}

func valueAt(doc map[string]any, field string, item int) any {
	v := doc[field]
	if item < 0 {
		return v
	}
	if list, ok := v.([]any); ok && item < len(list) {
		return list[item]
	}
	return nil
}

// article phrases a JSON type name for messages: "an integer", "a list".
func article(t string) string {
	switch t {
	case "integer", "object":
		return "an " + t
	case "array":
		return "a list"
	case "null":
		return "null"
	}
	return "a " + t
}

// display phrases a value for messages; strings, which come from the
// peer, are cut (see internal/clip).
func display(v any) string {
	switch x := v.(type) {
	case string:
		return clip.Quote(x)
	case nil:
		return "null"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return clip.String(fmt.Sprint(v))
}

func formatName(f string) string {
	switch Format(f) {
	case FormatEmail:
		return "email address"
	case FormatURI:
		return "absolute URI"
	case FormatDate:
		return "date (YYYY-MM-DD)"
	case FormatDateTime:
		return "date-time (RFC 3339)"
	}
	return f
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return clip.String(r.Num().String())
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
