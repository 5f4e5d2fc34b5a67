package mrtr

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/jsonw"
)

// emptyArgs is the digest input for a request without arguments; absent,
// null and {} arguments are the same call.
var emptyArgs = []byte("{}")

// ArgumentsDigest returns the SHA-256 digest of the canonical form of a
// request's arguments (see Canonicalize): two arguments have the same
// digest exactly when they differ only in what no JSON Schema validator or
// decoder can see (key order, whitespace, the spelling of strings and
// numbers). Absent and null arguments are treated as {}.
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
// The work is linear in the input at any depth: the value is checked with
// json.Valid, read once into a flat list of nodes (scalars already in
// canonical form, objects' members sorted when they close), then written
// out in one walk. Neither pass recurses.
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
// empty, spaces trimmed) to dst.
func appendCanonical(dst, t []byte) ([]byte, error) {
	if !json.Valid(t) {
		return nil, errors.New("canonicalize arguments: invalid JSON")
	}
	// Room for the usual small arguments, on the stack.
	var (
		nodes            [16]canonNode
		members, pending [16]canonMember
		arena            [256]byte
	)
	c, root, err := canonicalizer{nodes: nodes[:0], members: members[:0], pending: pending[:0], arena: arena[:0]}.read(t)
	if err != nil {
		return nil, fmt.Errorf("canonicalize arguments: %w", err)
	}
	return c.write(dst, root), nil
}

// canonicalizer holds the nodes of one value being canonicalised.
type canonicalizer struct {
	nodes   []canonNode
	members []canonMember // each container's members, contiguous
	pending []canonMember // members of the containers still open
	arena   []byte        // canonical text that is not in the input
}

// canonNode is a scalar that is its own canonical text (text, in the
// input), canonical text written to the arena (arena[first:n]: an escaped
// string, a number, or a run of an array's consecutive scalars,
// comma-separated), or a container (its members, members[first:first+n]).
// Nodes refer to the arena by offset, so it may grow and move.
type canonNode struct {
	text     []byte
	first, n int
	kind     byte // '{', '[', 'r' for arena text, or 0 for input text
}

// canonMember is a member of a container: its decoded key (objects only)
// and its value's node.
type canonMember struct {
	key  string
	node int
}

// read reads the valid JSON value data into c.nodes and returns c and the
// root. (c is a value, not a pointer, so that its buffers can stay on the
// caller's stack.)
func (c canonicalizer) read(data []byte) (canonicalizer, int, error) {
	type open struct{ node, pending int }
	var stackBuf [16]open
	stack := stackBuf[:0]
	root := -1
	var key string // the key of the next member, inside an object
	readKey := func(i int) (int, error) {
		end := jsonscan.StringEnd(data, i)
		k, err := jsonscan.Unquote(data[i:end])
		if err != nil {
			return 0, errors.New("malformed object key")
		}
		key = k
		i = jsonscan.SkipSpace(data, end)
		return jsonscan.SkipSpace(data, i+1), nil // past ':'
	}
	add := func(n canonNode) int {
		idx := len(c.nodes)
		c.nodes = append(c.nodes, n)
		if len(stack) == 0 {
			root = idx
		} else {
			c.pending = append(c.pending, canonMember{key: key, node: idx})
		}
		return idx
	}
	for i := jsonscan.SkipSpace(data, 0); i < len(data); i = jsonscan.SkipSpace(data, i) {
		switch ch := data[i]; ch {
		case '{', '[':
			idx := add(canonNode{kind: ch})
			stack = append(stack, open{node: idx, pending: len(c.pending)})
			i = jsonscan.SkipSpace(data, i+1)
			if ch == '{' && data[i] == '"' {
				var err error
				if i, err = readKey(i); err != nil {
					return c, 0, err
				}
			}
		case '}', ']':
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			kids := c.pending[o.pending:]
			if ch == '}' {
				slices.SortFunc(kids, func(a, b canonMember) int { return strings.Compare(a.key, b.key) })
				for j := 1; j < len(kids); j++ {
					if kids[j].key == kids[j-1].key {
						// A copy, so that the nodes stay on the stack.
						return c, 0, fmt.Errorf("duplicate key %q", strings.Clone(kids[j].key))
					}
				}
			}
			c.nodes[o.node].first, c.nodes[o.node].n = len(c.members), len(kids)
			c.members = append(c.members, kids...)
			c.pending = c.pending[:o.pending]
			i++
		case ',':
			i = jsonscan.SkipSpace(data, i+1)
			if c.nodes[stack[len(stack)-1].node].kind == '{' {
				var err error
				if i, err = readKey(i); err != nil {
					return c, 0, err
				}
			}
		default:
			// A scalar. In an array it joins the run of scalars before it
			// (one node for a whole array of numbers); elsewhere it is a
			// node, sharing data's memory when it is already canonical.
			var err error
			if top := len(stack) - 1; top >= 0 && c.nodes[stack[top].node].kind == '[' {
				var run *canonNode
				if p := len(c.pending); p > stack[top].pending {
					if last := &c.nodes[c.pending[p-1].node]; last.kind == 'r' && last.n == len(c.arena) {
						run = last
						c.arena = append(c.arena, ',')
					}
				}
				start := len(c.arena)
				if c.arena, i, err = appendScalar(c.arena, data, i); err != nil {
					return c, 0, err
				}
				if run != nil {
					run.n = len(c.arena)
				} else {
					add(canonNode{kind: 'r', first: start, n: len(c.arena)})
				}
				continue
			}
			if end, ok := plainScalar(data, i); ok {
				add(canonNode{text: data[i:end]})
				i = end
				continue
			}
			start := len(c.arena)
			if c.arena, i, err = appendScalar(c.arena, data, i); err != nil {
				return c, 0, err
			}
			add(canonNode{kind: 'r', first: start, n: len(c.arena)})
		}
	}
	return c, root, nil
}

// plainScalar reports whether the scalar at data[i] is its own canonical
// form (true, false, null, a string of printable ASCII without escapes, an
// integer of at most 21 digits other than -0), and where it ends.
func plainScalar(data []byte, i int) (int, bool) {
	switch data[i] {
	case 't':
		return i + 4, true
	case 'f':
		return i + 5, true
	case 'n':
		return i + 4, true
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch b := data[j]; {
			case b == '"':
				return j + 1, true
			case b < 0x20 || b == '\\' || b >= utf8.RuneSelf:
				return 0, false
			}
		}
		return 0, false
	}
	j := i
	if data[j] == '-' {
		j++
	}
	if data[j] == '0' {
		return 0, false // 0 is canonical but -0 is not; 0.5 is not an integer
	}
	start := j
	for j < len(data) && data[j] >= '0' && data[j] <= '9' {
		j++
	}
	if j-start > 21 || j < len(data) && (data[j] == '.' || data[j] == 'e' || data[j] == 'E') {
		return 0, false
	}
	return j, true
}

// appendScalar appends the canonical text of the scalar at data[i] and
// returns where it ends.
func appendScalar(dst, data []byte, i int) ([]byte, int, error) {
	switch data[i] {
	case 't':
		return append(dst, "true"...), i + 4, nil
	case 'f':
		return append(dst, "false"...), i + 5, nil
	case 'n':
		return append(dst, "null"...), i + 4, nil
	case '"':
		end := jsonscan.StringEnd(data, i)
		if e, ok := plainScalar(data, i); ok {
			return append(dst, data[i:e]...), e, nil
		}
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

// write appends the canonical text of node root and everything under it.
func (c *canonicalizer) write(dst []byte, root int) []byte {
	type open struct{ node, next int }
	var stackBuf [16]open
	stack := stackBuf[:0]
	value := func(dst []byte, idx int) []byte {
		switch n := &c.nodes[idx]; n.kind {
		case 0:
			return append(dst, n.text...)
		case 'r':
			return append(dst, c.arena[n.first:n.n]...)
		default:
			stack = append(stack, open{node: idx})
			return append(dst, n.kind)
		}
	}
	dst = value(dst, root)
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		n := &c.nodes[top.node]
		if top.next == n.n {
			stack = stack[:len(stack)-1]
			if n.kind == '{' {
				dst = append(dst, '}')
			} else {
				dst = append(dst, ']')
			}
			continue
		}
		m := c.members[n.first+top.next]
		if top.next > 0 {
			dst = append(dst, ',')
		}
		top.next++
		if n.kind == '{' {
			dst = jsonw.Key(dst, m.key)
		}
		dst = value(dst, m.node)
	}
	return dst
}
