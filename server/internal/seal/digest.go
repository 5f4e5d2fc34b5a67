package seal

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/jsonw"
)

// emptyArgs is the digest input for a request without arguments; absent,
// null and {} arguments are the same call.
var emptyArgs = []byte("{}")

// ArgumentsDigest returns the SHA-256 digest of the canonical form of a
// request's arguments (see Canonicalize): two arguments have the same
// digest exactly when JSON Schema treats them as equal, that is when they
// differ only in key order, whitespace and how equal strings and numbers
// are spelled. Absent and null arguments are treated as {}.
func ArgumentsDigest(args json.RawMessage) (Digest, error) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return sha256.Sum256(emptyArgs), nil
	}
	var buf [512]byte
	canon, err := appendCanonical(buf[:0], t)
	if err != nil {
		return Digest{}, err
	}
	return sha256.Sum256(canon), nil
}

// Canonicalize returns the canonical encoding of a JSON value. Absent, null
// and {} arguments are {}. Two values have the same canonical encoding
// exactly when they are equal as JSON Schema (and jsonschema/v6's const)
// compares them:
//
//   - Objects: members sorted by key, compared as strings of UTF-8 bytes
//     (code point order); a duplicate key is an error, since decoders
//     disagree on which member wins.
//   - Strings: decoded as Go decodes JSON (invalid UTF-8 and lone
//     surrogates become U+FFFD), then written one way: quote, backslash,
//     \n, \r and \t escaped by name, other control characters and U+2028
//     and U+2029 as \u00xx (lower-case hex), everything else as itself.
//   - Numbers: the exact decimal value (jsonscan.AppendNumber): 1, 1.0,
//     1e0 and 10e-1 are one form; 0.1 and 0.10000000000000000001 are two,
//     however many digits they carry. -0 is 0.
//   - No whitespace; true, false and null as themselves.
//
// RFC 8785 (JCS) is the reference point. The differences: numbers keep
// every digit of the literal instead of the shortest float64 digits (the
// same text for a literal that already is the shortest form); keys are
// sorted by UTF-8 bytes rather than UTF-16 code units; U+2028, U+2029,
// backspace and form feed are escaped as \u2028, \u2029, \u0008 and \u000c.
//
// The work is linear in the input at any depth, apart from sorting each
// object's keys: the value is checked with json.Valid, read once (scalars
// and arrays written in canonical form as they come, each object's members
// sorted when it closes), then written out in one walk. Neither pass
// recurses.
func Canonicalize(v json.RawMessage) ([]byte, error) {
	t := bytes.TrimSpace(v)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return emptyArgs, nil
	}
	out, err := appendCanonical(make([]byte, 0, len(t)), t)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(out, emptyArgs) {
		return emptyArgs, nil
	}
	return out, nil
}

// appendCanonical appends the canonical form of the JSON value t (not
// empty, spaces trimmed) to dst: a flat object's by appendFlat, anything
// else's by the general canonicalizer.
func appendCanonical(dst, t []byte) ([]byte, error) {
	if out, ok := appendFlat(dst, t); ok {
		return out, nil
	}
	return appendCanonicalAll(dst, t)
}

// appendCanonicalAll is appendCanonical for any JSON value. It is out of
// line so that its frame (3.4 KiB, most of it the buffers below) is on
// the stack only for the values appendFlat does not take (issue 23: a
// tool call's stack within net/http's first 8 KiB).
//
//go:noinline
func appendCanonicalAll(dst, t []byte) ([]byte, error) {
	if !json.Valid(t) {
		return nil, errors.New("canonicalize arguments: invalid JSON")
	}
	// Room for the usual small arguments, on the stack.
	var (
		arena, keys            [256]byte
		pieces, pendingPieces  [16]canonPiece
		members, pendingMember [16]canonMember
		objects                [8]canonObject
	)
	c := canonicalizer{
		arena: arena[:0], keys: keys[:0],
		pieces: pieces[:0], pendingPieces: pendingPieces[:0],
		members: members[:0], pendingMembers: pendingMember[:0],
		objects: objects[:0],
	}
	c, err := c.read(t)
	if err != nil {
		return nil, fmt.Errorf("canonicalize arguments: %w", err)
	}
	return c.write(dst), nil
}

// canonicalizer holds a value being canonicalised. Only objects need
// more than text: arrays keep their order, so everything else (scalars,
// arrays, separators) is written in input order to the arena as runs of
// canonical text, and an object is a list of members whose values are
// lists of pieces (runs and objects). Every index is an offset, so the
// buffers may grow and move, and hold no pointers.
type canonicalizer struct {
	arena []byte // canonical text of runs
	keys  []byte // each key decoded, then as canonical text with its ':'

	pieces  []canonPiece // each member's value, contiguous; the root's last
	members []canonMember
	objects []canonObject
	root    int // the number of the root's pieces

	// The pieces of the members being read, and the members of the
	// objects being read.
	pendingPieces  []canonPiece
	pendingMembers []canonMember
}

// canonPiece is a run, arena[start:end], or (obj ≥ 0) an object.
type canonPiece struct{ start, end, obj int }

// canonMember is an object member: its key decoded, keys[key:text], its
// canonical text, keys[text:end], and its value, pieces[first:first+n].
type canonMember struct{ key, text, end, first, n int }

// canonObject is an object: members[first:first+n], sorted by key.
type canonObject struct{ first, n int }

// read reads the valid JSON value data. The root's pieces end c.pieces.
// (c is a value, not a pointer, so that its buffers can stay on the
// caller's stack.)
//
// It is one function (over 100 lines): an iterative walk whose stack and
// buffers are c's, by value; split into functions, each would take and
// return c (copies of its slices' headers at every value) or a pointer
// to it, which moves its buffers to the heap.
func (c canonicalizer) read(data []byte) (canonicalizer, error) {
	type open struct {
		obj      int  // the object, or -1 for an array
		members  int  // where its members start in pendingMembers
		pieces   int  // where the enclosing list of pieces starts
		inMember bool // a member is being read
	}
	var stackBuf [16]open
	stack := stackBuf[:0]
	pstart := 0 // where the current list of pieces starts in pendingPieces
	// text appends b, then the scalar at data[i] if i ≥ 0, to the run that
	// ends the current list of pieces, and returns where the scalar ends.
	text := func(b byte, i int) (int, error) {
		n := len(c.pendingPieces)
		if n == pstart || c.pendingPieces[n-1].obj >= 0 || c.pendingPieces[n-1].end != len(c.arena) {
			c.pendingPieces = append(c.pendingPieces, canonPiece{start: len(c.arena), end: len(c.arena), obj: -1})
			n++
		}
		if b != 0 {
			c.arena = append(c.arena, b)
		}
		var err error
		if i >= 0 {
			if c.arena, i, err = appendScalar(c.arena, data, i); err != nil {
				return 0, err
			}
		}
		c.pendingPieces[n-1].end = len(c.arena)
		return i, nil
	}
	// beginMember reads the key at data[i] and returns where its value starts.
	beginMember := func(i int) (int, error) {
		end := jsonscan.StringEnd(data, i)
		m := canonMember{key: len(c.keys)}
		if e, ok := plainScalar(data, i); ok && e == end {
			c.keys = append(c.keys, data[i+1:end-1]...)
			m.text = len(c.keys)
			c.keys = append(c.keys, data[i:end]...)
			c.keys = append(c.keys, ':')
		} else {
			k, err := jsonscan.Unquote(data[i:end])
			if err != nil {
				return 0, errors.New("malformed object key")
			}
			c.keys = append(c.keys, k...)
			m.text = len(c.keys)
			c.keys = jsonw.Key(c.keys, k)
		}
		m.end = len(c.keys)
		c.pendingMembers = append(c.pendingMembers, m)
		stack[len(stack)-1].inMember = true
		pstart = len(c.pendingPieces)
		i = jsonscan.SkipSpace(data, end)
		return jsonscan.SkipSpace(data, i+1), nil // past ':'
	}
	// endMember moves the value of the member being read to c.pieces.
	endMember := func() {
		m := &c.pendingMembers[len(c.pendingMembers)-1]
		m.first, m.n = len(c.pieces), len(c.pendingPieces)-pstart
		c.pieces = append(c.pieces, c.pendingPieces[pstart:]...)
		c.pendingPieces = c.pendingPieces[:pstart]
	}
	var err error
	for i := jsonscan.SkipSpace(data, 0); i < len(data); i = jsonscan.SkipSpace(data, i) {
		switch ch := data[i]; ch {
		case '[':
			stack = append(stack, open{obj: -1})
			_, err = text('[', -1)
			i++
		case ']':
			stack = stack[:len(stack)-1]
			_, err = text(']', -1)
			i++
		case '{':
			obj := len(c.objects)
			c.objects = append(c.objects, canonObject{})
			c.pendingPieces = append(c.pendingPieces, canonPiece{obj: obj})
			stack = append(stack, open{obj: obj, members: len(c.pendingMembers), pieces: pstart})
			if i = jsonscan.SkipSpace(data, i+1); data[i] == '"' {
				i, err = beginMember(i)
			}
		case '}':
			o := stack[len(stack)-1]
			if o.inMember {
				endMember()
			}
			kids := c.pendingMembers[o.members:]
			keys := c.keys
			slices.SortFunc(kids, func(a, b canonMember) int { return bytes.Compare(keys[a.key:a.text], keys[b.key:b.text]) })
			for j := 1; j < len(kids); j++ {
				if k := keys[kids[j].key:kids[j].text]; bytes.Equal(k, keys[kids[j-1].key:kids[j-1].text]) {
					return c, fmt.Errorf("duplicate key %s", clip.Quote(string(k))) // a copy: the keys may be on the stack
				}
			}
			c.objects[o.obj] = canonObject{first: len(c.members), n: len(kids)}
			c.members = append(c.members, kids...)
			c.pendingMembers = c.pendingMembers[:o.members]
			stack = stack[:len(stack)-1]
			pstart = o.pieces
			i++
		case ',':
			if stack[len(stack)-1].obj < 0 {
				_, err = text(',', -1)
				i++
			} else {
				endMember()
				i, err = beginMember(jsonscan.SkipSpace(data, i+1))
			}
		default:
			i, err = text(0, i)
		}
		if err != nil {
			return c, err
		}
	}
	c.root = len(c.pendingPieces)
	c.pieces = append(c.pieces, c.pendingPieces...)
	return c, nil
}

// plainScalar reports whether the scalar at t[i] is its own canonical
// form, and where it ends: true, false, null, a string of printable ASCII
// without escapes, 0, or an integer of at most 21 digits that does not
// start with 0 (so not -0). It also checks the literal and the string are
// well-formed, so appendFlat can read data not yet validated; what
// follows the scalar is the caller's to check. canonicalize and
// appendScalar (on validated data) and appendFlat share it, so the flat
// path's canonical form is the general path's by construction
// (FuzzFlatCanonical checks the whole).
func plainScalar(t []byte, i int) (int, bool) {
	if i >= len(t) {
		return 0, false
	}
	switch t[i] {
	case 't':
		return plainLiteral(t, i, "true")
	case 'f':
		return plainLiteral(t, i, "false")
	case 'n':
		return plainLiteral(t, i, "null")
	case '"':
		for j := i + 1; j < len(t); j++ {
			switch b := t[j]; {
			case b == '"':
				return j + 1, true
			case b < 0x20 || b == '\\' || b >= 0x80:
				return 0, false
			}
		}
		return 0, false
	}
	j := i
	if t[j] == '-' {
		j++
	}
	if j == i && t[j] == '0' && (j+1 == len(t) || t[j+1] != '.' && t[j+1] != 'e' && t[j+1] != 'E' && (t[j+1] < '0' || t[j+1] > '9')) {
		return j + 1, true // 0 is its own canonical form (-0, 0.5 and 01 are not)
	}
	if j >= len(t) || t[j] < '1' || t[j] > '9' {
		return 0, false // -0 is not plain (nor 0.5); anything else is not a number
	}
	start := j
	for j < len(t) && t[j] >= '0' && t[j] <= '9' {
		j++
	}
	if j-start > 21 || j < len(t) && (t[j] == '.' || t[j] == 'e' || t[j] == 'E') {
		return 0, false
	}
	return j, true
}

// plainLiteral returns where lit ends if it stands at t[i].
func plainLiteral(t []byte, i int, lit string) (int, bool) {
	if len(t)-i < len(lit) || string(t[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// appendScalar appends the canonical text of the scalar at data[i] and
// returns where it ends.
func appendScalar(dst, data []byte, i int) ([]byte, int, error) {
	if end, ok := plainScalar(data, i); ok {
		return append(dst, data[i:end]...), end, nil
	}
	if data[i] == '"' {
		end := jsonscan.StringEnd(data, i)
		s, err := jsonscan.Unquote(data[i:end])
		if err != nil {
			return nil, 0, err
		}
		return jsonw.String(dst, s), end, nil
	}
	end := jsonscan.NumberEnd(data, i)
	dst, err := jsonscan.AppendNumber(dst, data[i:end])
	return dst, end, err
}

// write appends the canonical text of the value read: the root's pieces,
// which end c.pieces, and the objects under them, in one walk.
func (c *canonicalizer) write(dst []byte) []byte {
	// A frame writes a list of pieces: the root's, or those of the
	// current member of an object.
	type frame struct{ obj, member, first, n, next int }
	var stackBuf [16]frame
	stack := append(stackBuf[:0], frame{obj: -1, first: len(c.pieces) - c.root, n: c.root})
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < f.n {
			p := c.pieces[f.first+f.next]
			f.next++
			if p.obj < 0 {
				dst = append(dst, c.arena[p.start:p.end]...)
			} else {
				dst = append(dst, '{')
				stack = append(stack, frame{obj: p.obj, member: -1})
			}
			continue
		}
		if f.obj < 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		o := c.objects[f.obj]
		if f.member++; f.member < o.n {
			if f.member > 0 {
				dst = append(dst, ',')
			}
			m := c.members[o.first+f.member]
			dst = append(dst, c.keys[m.text:m.end]...)
			f.first, f.n, f.next = m.first, m.n, 0
			continue
		}
		dst = append(dst, '}')
		stack = stack[:len(stack)-1]
	}
	return dst
}
