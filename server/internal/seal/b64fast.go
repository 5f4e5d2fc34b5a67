package seal

import (
	"encoding/base64"
	"encoding/binary"
	"slices"
	"sync"
)

// The ciphertext segment of a requestState grows by about 80 base64url
// characters per answer the state carries, and every retry decodes it
// and every suspended round encodes it again: under valgrind
// encoding/base64 spent about 8.5 instructions a character on it, some
// 900 per carried answer each way (BenchmarkCarried in bench/). These two
// do the same work sixteen characters at a time (then eight), two
// characters per table lookup, and leave what they cannot do that way
// (the last characters, anything but the alphabet) to encoding/base64, so
// their results, errors included, are its results (FuzzB64).

// b64Alphabet is base64url's alphabet.
const b64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// b64Pairs maps 12 bits to their two characters, the first in the low
// byte.
var b64Pairs = func() (t [4096]uint16) {
	for v := range t {
		t[v] = uint16(b64Alphabet[v>>6]) | uint16(b64Alphabet[v&63])<<8
	}
	return t
}()

// b64Values maps a character to its 6 bits, and every other byte to 0xff.
var b64Values = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := range len(b64Alphabet) {
		t[b64Alphabet[i]] = byte(i)
	}
	return t
}()

// b64Quads returns the table that maps two characters (the first in the
// low byte, as a little-endian load reads them) to their 12 bits, and any
// pair with a byte outside the alphabet to 0xffff. Decoding reads two
// characters per lookup: under valgrind (BenchmarkCarried in bench/,
// 2026-12-04) the decoding of a retry's ciphertext segment was the largest
// cost per carried answer, about 660 instructions (9.6 a character) with
// one lookup per character; FuzzB64 holds it to encoding/base64. The
// table is 128 KiB, so it is built on the first decode (a process that
// never opens a state never builds it), once, and only read after.
var b64Quads = sync.OnceValue(func() *[1 << 16]uint16 {
	t := new([1 << 16]uint16)
	for i := range t {
		a, b := b64Values[i&0xff], b64Values[i>>8]
		if a|b >= 64 {
			t[i] = 0xffff
		} else {
			t[i] = uint16(a)<<6 | uint16(b)
		}
	}
	return t
})

// appendB64 is b64.AppendEncode(dst, src).
func appendB64(dst, src []byte) []byte {
	n := b64.EncodedLen(len(src))
	dst = slices.Grow(dst, n)
	out := dst[len(dst) : len(dst)+n]
	i, o := encodeBlocks(out, src)
	b64.Encode(out[o:], src[i:])
	return dst[:len(dst)+n]
}

// encodeBlocks encodes six bytes (read as eight) into eight characters
// while both src and out have eight left, and returns how many bytes of
// src it read and characters of out it wrote. A function of its own, so
// that the loop keeps its few values in registers.
func encodeBlocks(out, src []byte) (i, o int) {
	t := &b64Pairs
	n := len(src)
	for len(src) >= 14 && len(out) >= 16 {
		v, w := binary.BigEndian.Uint64(src), binary.BigEndian.Uint64(src[6:14])
		binary.LittleEndian.PutUint64(out, uint64(t[v>>52&0xfff])|uint64(t[v>>40&0xfff])<<16|
			uint64(t[v>>28&0xfff])<<32|uint64(t[v>>16&0xfff])<<48)
		binary.LittleEndian.PutUint64(out[8:16], uint64(t[w>>52&0xfff])|uint64(t[w>>40&0xfff])<<16|
			uint64(t[w>>28&0xfff])<<32|uint64(t[w>>16&0xfff])<<48)
		src, out, o = src[12:], out[16:], o+16
	}
	for len(src) >= 8 && len(out) >= 8 {
		v := binary.BigEndian.Uint64(src)
		binary.LittleEndian.PutUint64(out, uint64(t[v>>52&0xfff])|uint64(t[v>>40&0xfff])<<16|
			uint64(t[v>>28&0xfff])<<32|uint64(t[v>>16&0xfff])<<48)
		src, out, o = src[6:], out[8:], o+8
	}
	return n - len(src), o
}

// appendUnB64Strict is strictB64.AppendDecode(dst, src).
func appendUnB64Strict(dst, src []byte) ([]byte, error) {
	dst = slices.Grow(dst, b64.DecodedLen(len(src))+2) // the last store writes two bytes past its six
	base := len(dst)
	i, o := decodeBlocks(dst[base:cap(dst)], src)
	dst, err := strictB64.AppendDecode(dst[:base+o], src[i:])
	if ce, ok := err.(base64.CorruptInputError); ok {
		err = base64.CorruptInputError(int64(ce) + int64(i)) // where in src
	}
	return dst, err
}

// decodeBlocks decodes eight characters (four lookups of two) into six
// bytes (written as eight) while src has eight left and out eight, up to
// the first block with a character outside the alphabet, and returns how
// many characters of src it read and bytes of out it wrote.
//
// Its shape is what valgrind showed cheapest (BenchmarkB64/decode, 1,100
// characters, 2026-12-04): 4.7 instructions a character (5.9 with the
// loop this replaced, 11.3 for encoding/base64's AppendDecode): each pair
// of characters is read from memory as a uint16 (no shifting out of a
// word), a block's validity is one test of its top bits (see b64Block),
// and only the slices and the table stay live across iterations (the
// replaced loop kept counts and words on the stack).
func decodeBlocks(out, src []byte) (i, o int) {
	t := b64Quads()
	n, m := len(src), len(out)
	// Sixteen characters make twelve bytes, written as two eight-byte
	// stores (the second reaches two bytes past them).
	for len(src) >= 16 && len(out) >= 14 {
		s := (*[16]byte)(src)
		a := b64Block(t, s[0:8])
		c := b64Block(t, s[8:16])
		if (a|c)>>48 != 0 {
			break // not the alphabet: the eight-character loop finds the block
		}
		binary.BigEndian.PutUint64(out, a<<16)
		binary.BigEndian.PutUint64(out[6:14], c<<16)
		src, out = src[16:], out[12:]
	}
	for len(src) >= 8 && len(out) >= 8 {
		a := b64Block(t, src[:8])
		if a>>48 != 0 {
			break // not the alphabet: encoding/base64 says what
		}
		binary.BigEndian.PutUint64(out, a<<16)
		src, out = src[8:], out[6:]
	}
	return n - len(src), m - len(out)
}

// b64Block decodes the eight characters s[:8] (two per lookup, each pair
// read as a little-endian uint16) into the low 48 bits of its result, or
// sets bit 63 if any is outside the alphabet: a lookup is read as a
// signed 16-bit value, so that a pair outside the alphabet (0xffff) widens
// to all ones and, shifted into its place, sets the top bits.
func b64Block(t *[1 << 16]uint16, s []byte) uint64 {
	_ = s[7]
	return uint64(int64(int16(t[binary.LittleEndian.Uint16(s)])))<<36 |
		uint64(int64(int16(t[binary.LittleEndian.Uint16(s[2:])])))<<24 |
		uint64(int64(int16(t[binary.LittleEndian.Uint16(s[4:])])))<<12 |
		uint64(int64(int16(t[binary.LittleEndian.Uint16(s[6:])])))
}
