package jsonscan

import (
	"encoding/binary"
	"math"
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
	return SkipValueWithin(b, i, &noLimits, 0)
}

// Limits bound the values SkipValueWithin accepts, as rpcwire.Limits bound
// a message (every field must be set: rpcwire.Limits.WithDefaults gives
// them).
type Limits struct {
	// MaxDepth is the deepest nesting of arrays and objects, counting the
	// levels open around the value (SkipValueWithin's depth).
	MaxDepth int
	// MaxMembers bounds the members of any one object.
	MaxMembers int
	// MaxNumberLength bounds a number literal, in bytes.
	MaxNumberLength int
	// MaxNumberExponent bounds the value of the digits a number literal
	// writes after e or E.
	MaxNumberExponent int
}

// noLimits is SkipValue's: nothing valid is refused.
var noLimits = Limits{MaxDepth: math.MaxInt, MaxMembers: math.MaxInt, MaxNumberLength: math.MaxInt, MaxNumberExponent: math.MaxInt}

// SkipValueWithin is SkipValue that also refuses (ok false) a value that
// exceeds lim where rpcwire.CheckLimits would refuse the document around
// it: nesting deeper than lim.MaxDepth counting the depth levels already
// open around the value, an object with more than lim.MaxMembers members,
// a number literal longer than lim.MaxNumberLength or whose exponent's
// digits pass lim.MaxNumberExponent. On valid JSON its verdict is
// CheckLimits's (FuzzSkipValueWithin holds it there), so a caller that
// walks a whole document with it (the request envelope) needs no separate
// limits pass first: issue 23's valgrind count of a plain call in process
// (BenchmarkToolsCall) had rpcwire.CheckLimits at about 3,500 of
// ServeHTTP's 29,000 instructions, a second walk of every byte the
// envelope walk reads anyway.
func SkipValueWithin(b []byte, i int, lim *Limits, depth int) (end int, ok bool) {
	i = SkipSpace(b, i)
	// A scalar is skipped without skipContainer's stack of open
	// containers, a 512-byte array the compiler zeroes on every call
	// (issue 23: the request envelope's id and requestState are scalars).
	if i < len(b) && b[i] != '{' && b[i] != '[' {
		if i = scalarEnd(b, i, lim); i < 0 {
			return 0, false
		}
		return i, true
	}
	return skipContainer(b, i, lim, depth)
}

// scalarEnd returns the end of the string, literal or number at b[i]
// (i < len(b)), or -1 if it is not valid or not within lim.
func scalarEnd(b []byte, i int, lim *Limits) int {
	switch b[i] {
	case '"':
		return StringEndStrict(b, i)
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	}
	start := i
	exp := 0
	if i, exp = numberEnd(b, i); i < 0 || !NumberWithin(b[start:i], exp, lim) {
		return -1
	}
	return i
}

// skipContainer is SkipValueWithin for a value that is not a scalar (b[i]
// is '{' or '[', or i is past b).
func skipContainer(b []byte, i int, lim *Limits, depth int) (end int, ok bool) {
	// open holds, per open container, -1 for an array or the object's
	// member count so far.
	var buf [64]int
	open := buf[:0]
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return i, false
		}
		switch c := b[i]; c {
		case '{', '[':
			if depth+len(open) >= lim.MaxDepth {
				return 0, false
			}
			n := -1
			if c == '{' {
				n = 0
			}
			open = append(open, n)
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
				if open[len(open)-1] = 1; lim.MaxMembers < 1 {
					return 0, false
				}
				if i = skipKey(b, i); i < 0 {
					return 0, false
				}
			}
			continue // its first element or member value starts at b[i]
		default:
			if i = scalarEnd(b, i, lim); i < 0 {
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
			top := len(open) - 1
			obj := open[top] >= 0
			if b[i] == ',' {
				i = SkipSpace(b, i+1)
				if obj {
					if open[top]++; open[top] > lim.MaxMembers {
						return 0, false
					}
					if i = skipKey(b, i); i < 0 {
						return 0, false
					}
				}
				break
			}
			if obj && b[i] == '}' || !obj && b[i] == ']' {
				open = open[:top]
				i++
				continue
			}
			return i, false
		}
	}
}

// NumberWithin reports whether the number literal lit (valid JSON, its
// exponent's digits starting at lit[exp], or exp 0 for none) is within
// lim's length and exponent, counted as rpcwire.CheckLimits counts them.
func NumberWithin(lit []byte, exp int, lim *Limits) bool {
	if len(lit) > lim.MaxNumberLength {
		return false
	}
	if exp == 0 {
		return true
	}
	e := 0
	for _, c := range lit[exp:] {
		// As CheckLimits: stop once over the limit (lit holds only digits from exp on).
		if e = e*10 + int(c-'0'); e > lim.MaxNumberExponent {
			return false
		}
	}
	return true
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

// Masks for reading eight bytes at a time.
const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainLow is plainBytes without the test for bytes of 0x80 and above
// (bit 7 of v): a caller that ORs v in after it makes the same test for
// several words at once.
func plainLow(v uint64) uint64 {
	v7 := v &^ highs
	return (v7 + lows*0x60) & ((v7 ^ lows*'"') + lows*0x7f) & ((v7 ^ lows*'\\') + lows*0x7f)
}

// plainBytes sets bit 7 of each byte of v that may stand in a run of
// plain string bytes (0x20 to 0x7f but '"' and '\\') and clears it for the
// others, exactly for every byte: the sums are taken over the low seven
// bits of each byte, which carry into bit 7 and never across bytes.
// x+0x60 reaches bit 7 when x >= 0x20; (x^c)+0x7f when x != c; a byte of
// 0x80 and above is cleared by &^v. Other bits are left as they fall.
func plainBytes(v uint64) uint64 {
	return plainLow(v) &^ v
}

// plainRun reads b from b[j] on 32 bytes at a time while they are plain
// string bytes (see plainBytes) and returns the index of the first byte
// that is not, with stop true, or of the last 32 or fewer bytes, with stop
// false. ScanString calls it only once a string has shown 64 plain bytes:
// the short strings it reads most (keys, small values, _meta keys of 40
// characters) never pay for a call and a loop they would leave at once
// (with 32, BenchmarkMRTRTwoRounds in server/ cost 400 instructions more
// than the eight-byte loop alone).
func plainRun(b []byte, j int) (end int, stop bool) {
	s := b[j:]
	for len(s) >= 32 {
		v0, v1 := binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[8:16])
		v2, v3 := binary.LittleEndian.Uint64(s[16:24]), binary.LittleEndian.Uint64(s[24:32])
		if (^(plainLow(v0)&plainLow(v1)&plainLow(v2)&plainLow(v3))|v0|v1|v2|v3)&highs != 0 {
			for k := 0; k < 32; k += 8 {
				if m := ^plainBytes(binary.LittleEndian.Uint64(s[k:])) & highs; m != 0 {
					return len(b) - len(s) + k + bits.TrailingZeros64(m)>>3, true
				}
			}
		}
		s = s[32:]
	}
	return len(b) - len(s), false
}

// ScanString is StringEndStrict, and also reports whether the string is
// plain: no escapes and no bytes of 0x80 and above, so that its bytes
// between the quotes are its value. It reads eight bytes at a time, and
// once 64 bytes have been plain, 32 at a time (plainRun): the request
// envelope's strings are read this way on every request, and the
// requestState among them grows by 69 characters per answer it carries.
// Under valgrind (BenchmarkScanString, 1,104 characters, 2026-12-04) eight
// bytes at a time with the usual has-zero-byte tests cost 4.9
// instructions a character, this 2.75. FuzzScanString holds it to the
// grammar read byte by byte.
func ScanString(b []byte, i int) (end int, plain bool) {
	plain = true
	j := i + 1
	for {
		for j+8 <= len(b) {
			m := ^plainBytes(binary.LittleEndian.Uint64(b[j:])) & highs
			if m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
			if j-i > 64 && j+32 <= len(b) {
				var stop bool
				if j, stop = plainRun(b, j); stop {
					break
				}
			}
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
	end, _ := numberEnd(b, i)
	return end
}

// numberEnd is NumberEndStrict, and also returns the offset of the
// exponent's first digit from b[i] (0 when there is no exponent).
func numberEnd(b []byte, i int) (end, exp int) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1, 0
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return -1, 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1, 0
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
			return -1, 0
		}
		exp = i - start
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i, exp
}
