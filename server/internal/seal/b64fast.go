package seal

import (
	"encoding/base64"
	"encoding/binary"
	"slices"
)

// The ciphertext segment of a requestState grows by about 80 base64url
// characters per answer the state carries, and every retry decodes it
// and every suspended round encodes it again: under valgrind
// encoding/base64 spent about 8.5 instructions a character on it, some
// 900 per carried answer each way (BenchmarkCarried in bench/). These two
// do the same work eight characters at a time, and leave what they cannot
// do that way (the last characters, anything but the alphabet) to
// encoding/base64, so their results, errors included, are its results.

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

// appendB64 is b64.AppendEncode(dst, src).
func appendB64(dst, src []byte) []byte {
	n := b64.EncodedLen(len(src))
	dst = slices.Grow(dst, n)
	out := dst[len(dst) : len(dst)+n]
	i, o := 0, 0
	// Six bytes (read as eight) make eight characters.
	for ; len(src)-i >= 8 && len(out)-o >= 8; i, o = i+6, o+8 {
		v := binary.BigEndian.Uint64(src[i:])
		binary.LittleEndian.PutUint64(out[o:], uint64(b64Pairs[v>>52&0xfff])|
			uint64(b64Pairs[v>>40&0xfff])<<16|
			uint64(b64Pairs[v>>28&0xfff])<<32|
			uint64(b64Pairs[v>>16&0xfff])<<48)
	}
	b64.Encode(out[o:], src[i:])
	return dst[:len(dst)+n]
}

// appendUnB64Strict is strictB64.AppendDecode(dst, src).
func appendUnB64Strict(dst, src []byte) ([]byte, error) {
	dst = slices.Grow(dst, b64.DecodedLen(len(src))+2) // the last store writes two bytes past its six
	base := len(dst)
	out := dst[base:cap(dst)]
	i, o := 0, 0
	// Eight characters make six bytes (written as eight).
	for ; len(src)-i >= 8 && len(out)-o >= 8; i, o = i+8, o+6 {
		s := src[i : i+8 : i+8]
		a0, a1, a2, a3 := uint64(b64Values[s[0]]), uint64(b64Values[s[1]]), uint64(b64Values[s[2]]), uint64(b64Values[s[3]])
		a4, a5, a6, a7 := uint64(b64Values[s[4]]), uint64(b64Values[s[5]]), uint64(b64Values[s[6]]), uint64(b64Values[s[7]])
		if (a0|a1|a2|a3|a4|a5|a6|a7)&0xc0 != 0 {
			break // not the alphabet: encoding/base64 says what
		}
		binary.BigEndian.PutUint64(out[o:], a0<<58|a1<<52|a2<<46|a3<<40|a4<<34|a5<<28|a6<<22|a7<<16)
	}
	dst, err := strictB64.AppendDecode(dst[:base+o], src[i:])
	if ce, ok := err.(base64.CorruptInputError); ok {
		err = base64.CorruptInputError(int64(ce) + int64(i)) // where in src
	}
	return dst, err
}
