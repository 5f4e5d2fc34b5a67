package jsonw

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te`, `back\slash`, "tab\tnl\ncr\r", "\x00\x01\x1f", "é€😀", "bad\xffutf8", "\u2028\u2029", "<a&b>"} {
		got := String(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, got, err)
		}
		want := s
		if s == "bad\xffutf8" {
			want = "bad\ufffdutf8"
		}
		if back != want {
			t.Errorf("%q round-tripped to %q via %s", s, back, got)
		}
	}
	if got := string(String(nil, "<a&b>")); got != `"<a&b>"` {
		t.Errorf("HTML must not be escaped: %s", got)
	}
}

func FuzzString(f *testing.F) {
	f.Add("a\"b\\c\n\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(nil, s)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON for %q: %s", s, out)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		if want := string([]rune(s)); back != want {
			t.Fatalf("%q round-tripped to %q", want, back)
		}
	})
}

// stringBytes is String as it was, byte by byte, without the eight-byte
// skip over plain runs.
func stringBytes(dst []byte, s string) []byte {
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

// FuzzStringBytes holds String, which skips plain runs eight bytes at a
// time, to the byte-by-byte loop: the same bytes for every input.
func FuzzStringBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := String(nil, s), stringBytes(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("String(%q) = %s, want %s", s, got, want)
		}
	})
}

// BenchmarkString writes a requestState-like string: base64url, 600
// characters.
func BenchmarkString(b *testing.B) {
	s := strings.Repeat("AbCdEfGh-_0123456789xyz", 26)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = String(buf[:0], s)
	}
}

// TestPlainBytes checks plainBytes for every byte value at every position
// of a word whose other bytes are plain, and beside a byte that is not.
func TestPlainBytes(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	for _, fill := range []byte{'a', 0x00, 0xff, '"'} {
		for pos := 0; pos < 8; pos++ {
			for c := 0; c < 256; c++ {
				var v uint64
				for k := 0; k < 8; k++ {
					b := fill
					if k == pos {
						b = byte(c)
					}
					v |= uint64(b) << (8 * k)
				}
				got := plainBytes(v)>>(8*pos+7)&1 == 1
				if got != plain(byte(c)) {
					t.Fatalf("byte %#x at %d among %#x: plain %v, want %v", c, pos, fill, got, plain(byte(c)))
				}
			}
		}
	}
}
