package seal

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// FuzzB64: appendB64 and appendUnB64Strict give encoding/base64's results
// (the same characters, the same bytes, the same error at the same
// offset) for any input, after any prefix already in dst.
func FuzzB64(f *testing.F) {
	f.Add([]byte(""), []byte("x"))
	f.Add([]byte("hello, world: 0123456789"), []byte(""))
	f.Add(bytes.Repeat([]byte{0xfb, 0xff, 0x00}, 40), []byte("pre"))
	f.Add([]byte("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo\nYWJj"), []byte(""))
	f.Add([]byte("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVp"), []byte("")) // nonzero trailing bits
	f.Add([]byte("QUJDREVG+0hJSktMTU5PUFFSU1RVVldYWVo"), []byte(""))
	f.Fuzz(func(t *testing.T, src, prefix []byte) {
		want := base64.RawURLEncoding.AppendEncode(bytes.Clone(prefix), src)
		if got := appendB64(bytes.Clone(prefix), src); !bytes.Equal(got, want) {
			t.Fatalf("appendB64(%x) = %q, want %q", src, got, want)
		}
		// src as text to decode, and the encoding of src.
		for _, text := range [][]byte{src, want[len(prefix):]} {
			wantB, wantErr := base64.RawURLEncoding.Strict().AppendDecode(bytes.Clone(prefix), text)
			gotB, gotErr := appendUnB64Strict(bytes.Clone(prefix), text)
			if gotErr != wantErr || (wantErr == nil && !bytes.Equal(gotB, wantB)) {
				t.Fatalf("appendUnB64Strict(%q) = %x, %v; want %x, %v", text, gotB, gotErr, wantB, wantErr)
			}
		}
	})
}

// BenchmarkB64 decodes and encodes the ciphertext segment of a state
// carrying about sixteen answers (1,100 characters).
func BenchmarkB64(b *testing.B) {
	src := bytes.Repeat([]byte{0xfb, 0x10, 0x7e, 0x00, 0x42}, 165)
	text := appendB64(nil, src)
	var buf []byte
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var err error
			if buf, err = appendUnB64Strict(buf[:0], text); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-library", func(b *testing.B) {
		for b.Loop() {
			var err error
			if buf, err = strictB64.AppendDecode(buf[:0], text); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			buf = appendB64(buf[:0], src)
		}
	})
}
