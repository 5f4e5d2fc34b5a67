// Package jsonw appends JSON text by hand for Baton's hot paths (results
// written on every request), where encoding/json's reflection and the
// re-validation of Marshaler output cost more than the work itself.
package jsonw

import (
	"unicode/utf8"
)

const hex = "0123456789abcdef"

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
