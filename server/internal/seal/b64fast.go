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
func decodeBlocks(out, src []byte) (i, o int) {
	t := b64Quads()
	// Sixteen characters make twelve bytes, written as two eight-byte
	// stores (the second reaches two bytes past them): blocks while both
	// fit, counted up front so that the loop checks one bound each.
	blocks := min(len(src)/16, (len(out)-2)/12)
	for ; blocks > 0; blocks-- {
		s, d := src[i:i+16:i+16], out[o:o+14:o+14]
		x, y := binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[8:])
		p0, p1, p2, p3 := uint64(t[uint16(x)]), uint64(t[uint16(x>>16)]), uint64(t[uint16(x>>32)]), uint64(t[uint16(x>>48)])
		q0, q1, q2, q3 := uint64(t[uint16(y)]), uint64(t[uint16(y>>16)]), uint64(t[uint16(y>>32)]), uint64(t[uint16(y>>48)])
		if (p0|p1|p2|p3|q0|q1|q2|q3)&^0xfff != 0 {
			break // not the alphabet: the eight-character loop finds the block
		}
		binary.BigEndian.PutUint64(d, p0<<52|p1<<40|p2<<28|p3<<16)
		binary.BigEndian.PutUint64(d[6:], q0<<52|q1<<40|q2<<28|q3<<16)
		i, o = i+16, o+12
	}
	src, out = src[i:], out[o:]
	for len(src) >= 8 && len(out) >= 8 {
		x := binary.LittleEndian.Uint64(src)
		p0, p1, p2, p3 := uint64(t[uint16(x)]), uint64(t[uint16(x>>16)]), uint64(t[uint16(x>>32)]), uint64(t[uint16(x>>48)])
		if (p0|p1|p2|p3)&^0xfff != 0 {
			break // not the alphabet: encoding/base64 says what
		}
		binary.BigEndian.PutUint64(out, p0<<52|p1<<40|p2<<28|p3<<16)
		src, out, i, o = src[8:], out[6:], i+8, o+6
	}
	return i, o
}
