package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// SkipValue checks the JSON value that starts at b[i] (after any
// whitespace) and returns the index just past it. ok is false when the
// text there is not exactly one valid JSON value (RFC 8259): no trailing
// commas, no leading zeros, no bare points, only the escapes JSON defines,
// no control characters in strings. Bytes of 0x80 and above in strings are
// taken as they are (as the decoders Baton uses take them), so a caller
// that needs valid UTF-8 checks it itself. It does not allocate for
// nesting up to 64 levels, and its work is linear in the value's length.
//
// It validates and finds the end of a value in one pass, so a caller that
// walks a document by hand (the request envelope) need not run json.Valid
// over it first.
func SkipValue(b []byte, i int) (end int, ok bool) {
	// open records, per open container, whether it is an object.
	var buf [64]bool
	open := buf[:0]
	i = SkipSpace(b, i)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return i, false
		}
		switch c := b[i]; c {
		case '{', '[':
			open = append(open, c == '{')
			i = SkipSpace(b, i+1)
			if i >= len(b) {
				return i, false
			}
			if b[i] == '}' && c == '{' || b[i] == ']' && c == '[' {
				open = open[:len(open)-1]
				i++
				break // the empty container is a complete value
			}
			if c == '{' {
				if i = skipKey(b, i); i < 0 {
					return 0, false
				}
			}
			continue // its first element or member value starts at b[i]
		case '"':
			if i = StringEndStrict(b, i); i < 0 {
				return 0, false
			}
		case 't':
			if i = literal(b, i, "true"); i < 0 {
				return 0, false
			}
		case 'f':
			if i = literal(b, i, "false"); i < 0 {
				return 0, false
			}
		case 'n':
			if i = literal(b, i, "null"); i < 0 {
				return 0, false
			}
		default:
			if i = NumberEndStrict(b, i); i < 0 {
				return 0, false
			}
		}
		// A value ended at b[i]: close containers, or move to the next
		// element or member.
		for {
			if len(open) == 0 {
				return i, true
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			obj := open[len(open)-1]
			if b[i] == ',' {
				i = SkipSpace(b, i+1)
				if obj {
					if i = skipKey(b, i); i < 0 {
						return 0, false
					}
				}
				break
			}
			if obj && b[i] == '}' || !obj && b[i] == ']' {
				open = open[:len(open)-1]
				i++
				continue
			}
			return i, false
		}
	}
}

// skipKey checks an object key and its colon at b[i] and returns the index
// of the member's value (after whitespace), or -1.
func skipKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = StringEndStrict(b, i); i < 0 {
		return -1
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return SkipSpace(b, i+1)
}

// literal checks that b[i:] starts with lit and returns the index past it,
// or -1.
func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// StringEndStrict checks the JSON string that starts at b[i] == '"' and
// returns the index just past its closing quote, or -1 when it is not a
// valid JSON string (an unknown escape, a short \u escape, a control
// character, no closing quote). Bytes of 0x80 and above are not checked.
func StringEndStrict(b []byte, i int) int {
	end, _ := ScanString(b, i)
	return end
}

// Masks for reading eight bytes at a time (the "has a zero byte" test:
// the lowest byte it flags is exact; bytes above a flagged one may be
// flagged wrongly, so only the lowest is used).
const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special flags the bytes of v that end a run of plain string bytes: a
// quote, a backslash, a control character (below 0x20) or a byte of 0x80
// and above.
func special(v uint64) uint64 {
	q := v ^ (lows * '"')
	bs := v ^ (lows * '\\')
	return ((q-lows)&^q | (bs-lows)&^bs | (v-lows*0x20)&^v | v) & highs
}

// ScanString is StringEndStrict, and also reports whether the string is
// plain: no escapes and no bytes of 0x80 and above, so that its bytes
// between the quotes are its value. It reads eight bytes at a time: the
// request envelope's strings (the requestState is 400 bytes or more) are
// read this way on every request.
func ScanString(b []byte, i int) (end int, plain bool) {
	plain = true
	j := i + 1
	for {
		for j+8 <= len(b) {
			m := special(binary.LittleEndian.Uint64(b[j:]))
			if m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		if j >= len(b) {
			return -1, false
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, plain
		case c == '\\':
			plain = false
			j++
			if j >= len(b) {
				return -1, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return -1, false
				}
				j += 4
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		case c >= 0x80:
			plain = false
		}
		j++
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// NumberEndStrict checks the JSON number that starts at b[i] and returns
// the index just past it, or -1 when b[i:] does not start with a number of
// JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func NumberEndStrict(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i
}
