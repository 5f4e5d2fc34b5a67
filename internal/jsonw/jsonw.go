// Package jsonw appends JSON text by hand for Baton's hot paths (results
// written on every request), where encoding/json's reflection and the
// re-validation of Marshaler output cost more than the work itself.
package jsonw

import (
	"math/bits"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080 // bit 7 of each byte
)

// plainBytes sets bit 7 of each byte of v that String writes as it is
// (0x20 to 0x7f but '"' and '\\') and clears it for the others, exactly for
// every byte: the sums are taken over the low seven bits of each byte,
// which carry into bit 7 and never across bytes; x+0x60 reaches bit 7
// when x >= 0x20, (x^c)+0x7f when x != c, and a byte of 0x80 and above is
// cleared by &^v. Other bits are left as they fall. It is the test
// internal/jsonscan makes of a string's plain run; jsonw keeps its own
// because the layering puts the writer below the scanner (deps_test.go).
// TestPlainBytes checks it for every byte value at every position.
func plainBytes(v uint64) uint64 {
	v7 := v &^ highs
	return (v7 + lows*0x60) & ((v7 ^ lows*'"') + lows*0x7f) & ((v7 ^ lows*'\\') + lows*0x7f) &^ v
}

// String appends s as a JSON string. Quotes, backslashes and control
// characters are escaped; U+2028 and U+2029 too (JavaScript line
// terminators); invalid UTF-8 becomes U+FFFD. HTML characters are left as
// they are.
func String(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				// After a plain byte, eight at a time while none needs
				// escaping (see plainBytes): the sealed
				// requestState, several hundred characters of base64
				// written on every round of a flow, cost 6 instructions a
				// character byte by byte, about 1,100 of a two-round flow
				// (valgrind, bench's BenchmarkFlowHTTP, issue 23). Only
				// after a plain byte, so text that is mostly escapes or
				// non-ASCII pays nothing for it. FuzzStringBytes holds it
				// to the byte-by-byte loop.
				for i+8 <= len(s) {
					w := s[i : i+8]
					v := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
						uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
					if m := ^plainBytes(v) & highs; m != 0 {
						i += bits.TrailingZeros64(m) >> 3
						break
					}
					i += 8
				}
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Key appends "key": (the key is escaped like String).
func Key(dst []byte, key string) []byte {
	dst = String(dst, key)
	return append(dst, ':')
}
