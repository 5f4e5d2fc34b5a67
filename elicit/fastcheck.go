package elicit

import (
	"bytes"
	"math/big"
	"unicode/utf8"

	"github.com/baton-mcp/baton/internal/jsonscan"
)

// An answer to a form is checked on the path of the request that carries
// it: parsing the ElicitResult, decoding its content into the validator's
// generic form and running the validator cost about 17 allocations and
// 2 µs for a one-property form (issue 23's profile of the two-round flow,
// "validate the answer" in bench/steps.sh), while the schema is a flat
// object of primitives that a single pass over the bytes can check.
//
// checkFast says only "certainly valid": it accepts an ElicitResult that
// is an object with at most the members "action" and "content", whose
// content (for an accepted form) names only the schema's properties, each
// once, with a value of the property's type written plainly (strings
// without escapes, integers as at most 15 digits, no null) that meets
// every bound; anything else, and every answer it cannot decide (a string
// with a format, a number with a fraction or an exponent, a bound it
// cannot compare exactly), goes to the full check, which decides and
// words every refusal as before. FuzzCheckFast holds what it accepts to
// the full check, result for result.

// maxFastDigits is the most digits checkFast reads in an integer: any
// such integer lies within ±maxSafeInteger and is exact in an int64.
const maxFastDigits = 15

// fastBound is beyond any integer checkFast reads.
const fastBound = 1e16

// fastForm is a schema's plan for checkFast: one entry per property, in
// schema order.
type fastForm struct {
	fields   []fastField
	required uint64 // bits of the required properties
}

// fastField is what checkFast checks one property's value against.
type fastField struct {
	name string
	kind kind
	// slow sends every value of the property to the full check (a string
	// format, a numeric bound no integer can meet).
	slow bool

	minLength, maxLength int // in code points; maxLength < 0: none
	minItems, maxItems   int // maxItems < 0: none
	members              []string

	// lo and hi bound an integer value exactly (the schema's minimum
	// rounded up, its maximum rounded down).
	lo, hi int64
}

// fast returns s's plan for checkFast, built once, or nil when answers
// to s always go to the full check.
func (s *Schema) fast() *fastForm {
	if s.cache == nil {
		return nil
	}
	c := s.cache
	c.fastOnce.Do(func() { c.fast = s.planFast() })
	return c.fast
}

// planFast builds s's plan, or returns nil.
func (s *Schema) planFast() *fastForm {
	if len(s.fields) > 64 {
		return nil
	}
	ff := &fastForm{fields: make([]fastField, len(s.fields))}
	for i, f := range s.fields {
		p := fastField{name: f.name, kind: f.kind, maxLength: -1, maxItems: -1, lo: -fastBound, hi: fastBound}
		if f.minLength != nil {
			p.minLength = *f.minLength
		}
		if f.maxLength != nil {
			p.maxLength = *f.maxLength
		}
		if f.minItems != nil {
			p.minItems = *f.minItems
		}
		if f.maxItems != nil {
			p.maxItems = *f.maxItems
		}
		p.slow = f.format != ""
		switch f.kind {
		case kindEnum, kindLegacyEnum, kindMultiEnum:
			p.members = f.values
		case kindTitledEnum, kindTitledMultiEnum:
			p.members = make([]string, len(f.options))
			for j, o := range f.options {
				p.members[j] = o.Const
			}
		}
		if f.minimum != nil {
			lo, ok := boundOf(*f.minimum, true)
			p.lo = max(p.lo, lo)
			p.slow = p.slow || !ok
		}
		if f.maximum != nil {
			hi, ok := boundOf(*f.maximum, false)
			p.hi = min(p.hi, hi)
			p.slow = p.slow || !ok
		}
		ff.fields[i] = p
	}
	for _, name := range s.required {
		for i, f := range s.fields {
			if f.name == name {
				ff.required |= 1 << i
			}
		}
	}
	return ff
}

// boundOf returns the schema bound x as the validator reads it (the
// decimal of its canonical encoding), rounded up for a minimum and down
// for a maximum to the integer bound it sets on integers, clamped to
// ±fastBound. It reports false when it cannot (never for a finite x).
func boundOf(x float64, minimum bool) (int64, bool) {
	r, ok := new(big.Rat).SetString(string(appendNumber(nil, x)))
	if !ok {
		return 0, false
	}
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int)) // floor: the denominator is positive
	if minimum && m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	switch {
	case q.Cmp(big.NewInt(fastBound)) > 0:
		return fastBound, true
	case q.Cmp(big.NewInt(-fastBound)) < 0:
		return -fastBound, true
	}
	return q.Int64(), true
}

// checkFast returns the result CheckResult returns for data when it is
// certain that data passes every check, and false otherwise (the full
// check then decides).
//
// It is one function (over 100 lines): one pass over the answer (its
// action, then content's members) that gives up at the first doubt, its
// position and the properties seen kept in locals rather than passed
// between calls.
func (r *Request) checkFast(data []byte) (*Result, bool) {
	var ff *fastForm
	switch r.mode() {
	case ModeForm:
		if r.RequestedSchema == nil {
			return nil, false
		}
		if ff = r.RequestedSchema.fast(); ff == nil {
			return nil, false
		}
	case ModeURL:
	default:
		return nil, false
	}
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i = jsonscan.SkipSpace(data, i+1)
	var (
		action                 Action
		haveAction, hasContent bool
		content                []byte // nil: absent or null
		seen                   uint64 // the properties content names
	)
	for {
		key, end := plainString(data, i)
		if end < 0 {
			return nil, false
		}
		if i = jsonscan.SkipSpace(data, end); i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = jsonscan.SkipSpace(data, i+1)
		switch string(key) {
		case "action":
			v, end := plainString(data, i)
			if haveAction || end < 0 {
				return nil, false
			}
			switch Action(v) {
			case ActionAccept:
				action = ActionAccept
			case ActionDecline:
				action = ActionDecline
			case ActionCancel:
				action = ActionCancel
			default:
				return nil, false
			}
			haveAction, i = true, end
		case "content":
			if hasContent {
				return nil, false
			}
			hasContent = true
			if end := literal(data, i, "null"); end >= 0 {
				i = end
				break
			}
			if ff == nil {
				return nil, false // URL mode: content must be absent
			}
			end, bits := ff.content(data, i)
			if end < 0 {
				return nil, false
			}
			content, seen, i = data[i:end], bits, end
		default:
			return nil, false
		}
		i = jsonscan.SkipSpace(data, i)
		if i >= len(data) {
			return nil, false
		}
		if data[i] == '}' {
			break
		}
		if data[i] != ',' {
			return nil, false
		}
		i = jsonscan.SkipSpace(data, i+1)
	}
	if !haveAction || jsonscan.SkipSpace(data, i+1) != len(data) {
		return nil, false
	}
	if action != ActionAccept {
		if content != nil {
			return nil, false
		}
		return &Result{Action: action}, true
	}
	res := &Result{Action: action}
	if ff != nil {
		if seen&ff.required != ff.required {
			return nil, false
		}
		res.Content = content
		res.schema = r.RequestedSchema
	}
	return res, true
}

// content checks the content object that starts at data[i] and returns
// the index just past it and the bits of the properties it names, or -1.
func (ff *fastForm) content(data []byte, i int) (int, uint64) {
	if i >= len(data) || data[i] != '{' {
		return -1, 0
	}
	i = jsonscan.SkipSpace(data, i+1)
	var seen uint64
	if i < len(data) && data[i] == '}' {
		return i + 1, 0
	}
	for {
		key, end := plainString(data, i)
		if end < 0 {
			return -1, 0
		}
		k := ff.index(key)
		if k < 0 || seen&(1<<k) != 0 {
			return -1, 0
		}
		seen |= 1 << k
		if i = jsonscan.SkipSpace(data, end); i >= len(data) || data[i] != ':' {
			return -1, 0
		}
		if i = ff.fields[k].value(data, jsonscan.SkipSpace(data, i+1)); i < 0 {
			return -1, 0
		}
		i = jsonscan.SkipSpace(data, i)
		if i >= len(data) {
			return -1, 0
		}
		if data[i] == '}' {
			return i + 1, seen
		}
		if data[i] != ',' {
			return -1, 0
		}
		i = jsonscan.SkipSpace(data, i+1)
	}
}

// index returns the position of the property named key, or -1.
func (ff *fastForm) index(key []byte) int {
	for k := range ff.fields {
		if ff.fields[k].name == string(key) {
			return k
		}
	}
	return -1
}

// value checks the property's value that starts at data[i] and returns
// the index just past it, or -1.
func (p *fastField) value(data []byte, i int) int {
	if p.slow || i >= len(data) {
		return -1
	}
	switch {
	case p.kind == kindBoolean:
		if end := literal(data, i, "true"); end >= 0 {
			return end
		}
		return literal(data, i, "false")
	case p.kind.isText():
		s, end := plainString(data, i)
		if end < 0 || !p.text(s) {
			return -1
		}
		return end
	case p.kind.isNumeric():
		x, end := smallInteger(data, i)
		if end < 0 || x < p.lo || x > p.hi {
			return -1
		}
		return end
	case p.kind.isMulti():
		return p.list(data, i)
	}
	return -1
}

// text reports whether s (a string value) meets the property's length
// bounds and, for a select, is one of its options.
func (p *fastField) text(s []byte) bool {
	if p.minLength > 0 || p.maxLength >= 0 {
		n := utf8.RuneCount(s)
		if n < p.minLength || p.maxLength >= 0 && n > p.maxLength {
			return false
		}
	}
	return p.kind == kindString || p.member(s)
}

// member reports whether s is one of the property's options.
func (p *fastField) member(s []byte) bool {
	for _, m := range p.members {
		if m == string(s) {
			return true
		}
	}
	return false
}

// maxFastItems bounds the selections checkFast reads in a multi-select
// (each is compared with every earlier one).
const maxFastItems = 64

// list checks a multi-select's value, a list of distinct options, that
// starts at data[i] and returns the index just past it, or -1.
func (p *fastField) list(data []byte, i int) int {
	if data[i] != '[' {
		return -1
	}
	var items [maxFastItems][]byte
	n := 0
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		i++
	} else {
		for {
			s, end := plainString(data, i)
			if end < 0 || n == maxFastItems || !p.member(s) {
				return -1
			}
			for _, earlier := range items[:n] {
				if bytes.Equal(earlier, s) {
					return -1
				}
			}
			items[n] = s
			n++
			if i = jsonscan.SkipSpace(data, end); i >= len(data) {
				return -1
			}
			if data[i] == ']' {
				i++
				break
			}
			if data[i] != ',' {
				return -1
			}
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	if n < p.minItems || p.maxItems >= 0 && n > p.maxItems {
		return -1
	}
	return i
}

// plainString reads the JSON string that starts at data[i] and returns
// its bytes between the quotes and the index just past it, or -1 unless
// the string is valid UTF-8 without escapes (its bytes are then its
// value).
func plainString(data []byte, i int) ([]byte, int) {
	if i >= len(data) || data[i] != '"' {
		return nil, -1
	}
	end, plain := jsonscan.ScanString(data, i)
	if end < 0 {
		return nil, -1
	}
	s := data[i+1 : end-1]
	if !plain && (bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s)) {
		return nil, -1
	}
	return s, end
}

// smallInteger reads the integer of at most maxFastDigits digits, without
// a fraction or an exponent, that starts at data[i], and returns it and
// the index just past it, or -1.
func smallInteger(data []byte, i int) (int64, int) {
	neg := data[i] == '-'
	if neg {
		i++
	}
	start := i
	var x int64
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		x = x*10 + int64(data[i]-'0')
		i++
		if i-start > maxFastDigits {
			return 0, -1
		}
	}
	switch {
	case i == start, data[start] == '0' && i-start > 1:
		return 0, -1
	case i < len(data) && (data[i] == '.' || data[i] == 'e' || data[i] == 'E'):
		return 0, -1
	}
	if neg {
		x = -x
	}
	return x, i
}

// literal returns the index just past lit at data[i], or -1.
func literal(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}
