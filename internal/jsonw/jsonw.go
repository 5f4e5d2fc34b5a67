// Package jsonw appends JSON text by hand for Baton's hot paths (results
// written on every request), where encoding/json's reflection and the
// re-validation of Marshaler output cost more than the work itself.
package jsonw

import (
	"math/bits"
	"unicode/utf8"

	"github.com/baton-mcp/baton/internal/jsonscan"
)

const hex = "0123456789abcdef"

// highs has bit 7 of each byte set.
const highs = 0x8080808080808080

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
				// escaping (see jsonscan.PlainBytes): the sealed
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
					if m := ^jsonscan.PlainBytes(v) & highs; m != 0 {
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
