package seal

import (
	"bytes"
	"math"

	"github.com/baton-mcp/baton/internal/jsonscan"
)

// flatMember is a member of a flat object: its key, t[key:keyEnd] with
// its quotes, and its value, t[val:valEnd].
type flatMember struct{ key, keyEnd, val, valEnd int32 }

// maxFlatMembers is the most members appendFlat takes: its members live
// in its frame.
const maxFlatMembers = 32

// appendFlat appends the canonical form of t (not empty, spaces trimmed)
// to dst when t is a flat object, the usual tool arguments: at most 32
// members, each key a plain string and each value a plain scalar
// (plainScalar: its own canonical form) or an array of them; any
// whitespace between tokens. The canonical form is then the members
// sorted by key, whitespace dropped, every token as it is. For anything
// else, malformed JSON and duplicate keys included, it reports false and
// appends nothing: the general canonicalizer reads it and words the
// error.
//
// It is hand-written, not json.Valid and the canonicalizer: those were
// 2.9% of a two-round flow's server CPU over HTTP for its {"id":42}, the
// canonicalizer's frame of 3.4 KiB of buffers (zeroed on every call)
// among it, and that frame, deep under the tool call, pushed both rounds
// past the 8 KiB stack net/http starts a connection's goroutine with (a
// stack copy per connection per GC cycle; issue 23, bench's
// TestFlowStack). FuzzFlatCanonical holds it to the general path.
func appendFlat(dst, t []byte) ([]byte, bool) {
	if len(t) < 2 || t[0] != '{' || len(t) > math.MaxInt32 {
		return dst, false
	}
	var ms [maxFlatMembers]flatMember
	n := 0
	i := jsonscan.SkipSpace(t, 1)
	if i < len(t) && t[i] == '}' {
		if i+1 != len(t) {
			return dst, false
		}
		return append(dst, "{}"...), true
	}
	for {
		if n == len(ms) || i >= len(t) || t[i] != '"' {
			return dst, false
		}
		ks := i
		ke, ok := plainScalar(t, i)
		if !ok {
			return dst, false
		}
		i = jsonscan.SkipSpace(t, ke)
		if i >= len(t) || t[i] != ':' {
			return dst, false
		}
		vs := jsonscan.SkipSpace(t, i+1)
		ve, ok := flatValue(t, vs)
		if !ok {
			return dst, false
		}
		ms[n] = flatMember{key: int32(ks), keyEnd: int32(ke), val: int32(vs), valEnd: int32(ve)}
		n++
		i = jsonscan.SkipSpace(t, ve)
		if i >= len(t) {
			return dst, false
		}
		if t[i] == '}' {
			if i+1 != len(t) {
				return dst, false
			}
			break
		}
		if t[i] != ',' {
			return dst, false
		}
		i = jsonscan.SkipSpace(t, i+1)
	}
	// Sorted once the whole object is known to be flat (insertion; at
	// most 32), so an object that is not costs only the walk: by the
	// key's bytes, which for a plain key are its decoded
	// bytes, as the general path compares them.
	for i := 1; i < n; i++ {
		m := ms[i]
		k := t[m.key+1 : m.keyEnd-1]
		j := i
		for ; j > 0; j-- {
			c := bytes.Compare(t[ms[j-1].key+1:ms[j-1].keyEnd-1], k)
			if c == 0 {
				return dst, false // a duplicate key: the general path refuses it
			}
			if c < 0 {
				break
			}
			ms[j] = ms[j-1]
		}
		ms[j] = m
	}
	dst = append(dst, '{')
	for j := range n {
		m := &ms[j]
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, t[m.key:m.keyEnd]...)
		dst = append(dst, ':')
		v := t[m.val:m.valEnd]
		if v[0] != '[' {
			dst = append(dst, v...)
			continue
		}
		// An array of plain scalars, checked: its tokens without the
		// whitespace between them (a plain string has no quote inside).
		for p := 0; p < len(v); p++ {
			switch c := v[p]; c {
			case ' ', '\t', '\n', '\r':
			case '"':
				e := p + 1 + bytes.IndexByte(v[p+1:], '"')
				dst = append(dst, v[p:e+1]...)
				p = e
			default:
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '}'), true
}

// flatValue returns where the value at t[i] ends, if it is a plain scalar
// or an array of plain scalars.
func flatValue(t []byte, i int) (int, bool) {
	if i >= len(t) {
		return 0, false
	}
	if t[i] != '[' {
		return plainScalar(t, i)
	}
	i = jsonscan.SkipSpace(t, i+1)
	if i < len(t) && t[i] == ']' {
		return i + 1, true
	}
	for {
		e, ok := plainScalar(t, i)
		if !ok {
			return 0, false
		}
		i = jsonscan.SkipSpace(t, e)
		if i >= len(t) {
			return 0, false
		}
		switch t[i] {
		case ']':
			return i + 1, true
		case ',':
			i = jsonscan.SkipSpace(t, i+1)
		default:
			return 0, false
		}
	}
}
