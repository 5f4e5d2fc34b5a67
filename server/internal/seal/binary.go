package seal

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The encrypted content of a requestState is a compact binary record,
// not JSON: it is smaller (digests travel as 32 raw bytes, not base64
// text), so the token every retry carries is shorter, and it is faster to
// write and read. Layout, version 2 (str and bytes are a uvarint length
// and the bytes):
//
//	0x02
//	str method, str target, [32]byte arguments digest, str principal
//	uvarint round
//	uvarint n, then n × (str key, [32]byte digest)                 issued
//	bytes payload
//	uvarint n, then n × (str key, [32]byte digest, bytes answer)   recorded
//	optional: the flow (see appendFlow)
//
// Version 1 (positions instead of keys for recorded answers, no round) is
// refused: a state sealed by an older release is refused once and the
// client starts the call again.
const binaryVersion = 2

func appendBinaryState(dst []byte, st *State) []byte {
	dst = append(dst, binaryVersion)
	dst = appendStr(dst, st.Method)
	dst = appendStr(dst, st.Target)
	dst = append(dst, st.Arguments[:]...)
	dst = appendStr(dst, st.Principal)
	dst = binary.AppendUvarint(dst, uint64(st.Round))
	dst = binary.AppendUvarint(dst, uint64(len(st.Issued)))
	for _, is := range st.Issued {
		dst = appendStr(dst, is.Key)
		dst = append(dst, is.Digest[:]...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(st.Payload)))
	dst = append(dst, st.Payload...)
	dst = binary.AppendUvarint(dst, uint64(len(st.Answers)))
	dst = appendAnswers(dst, st.Answers)
	return appendFlow(dst, st.Flow)
}

// appendAnswers appends the recorded answers. An answer read from a
// record (readBinaryState) keeps its bytes there (Recorded.raw), and they
// are copied through as they are: a handler replaying from the top hands
// over the answers its state recorded, in their order, and the next state
// records them again, so the whole run of them is one copy instead of
// four appends an answer (under valgrind, BenchmarkCarried suspend in
// bench/, 2026-12-04: about 100 instructions an answer). The bytes are
// exactly what the loop below writes for the answer
// (TestAnswersCopiedThrough).
func appendAnswers(dst []byte, answers []Recorded) []byte {
	var run []byte // raw bytes of consecutive answers, contiguous in their record
	for i := range answers {
		a := &answers[i]
		if len(a.raw) > 0 {
			if n := len(run); n > 0 && cap(run)-n >= len(a.raw) && &run[:n+1][n] == &a.raw[0] {
				run = run[:n+len(a.raw)]
				continue
			}
			dst = append(dst, run...)
			run = a.raw
			continue
		}
		dst = append(dst, run...)
		run = nil
		dst = appendStr(dst, a.Key)
		dst = append(dst, a.Digest[:]...)
		dst = binary.AppendUvarint(dst, uint64(len(a.Answer)))
		dst = append(dst, a.Answer...)
	}
	return append(dst, run...)
}

func appendStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// binReader reads a binary state record; the first failure sticks.
type binReader struct {
	b   []byte
	err error
	// all, if set, is the record b ends (from the reader's start) as one
	// string: str cuts its strings out of it instead of copying each.
	all string
}

// str reads a string: a substring of all when set (one copy of the
// record for all its strings, not one allocation per key), a copy
// otherwise.
func (r *binReader) str() string {
	p := r.bytes()
	if r.err != nil || r.all == "" {
		return string(p)
	}
	end := len(r.all) - len(r.b)
	return r.all[end-len(p) : end]
}

var errTruncated = errors.New("truncated")

func (r *binReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) > 0 && r.b[0] < 0x80 { // one byte
		v := uint64(r.b[0])
		r.b = r.b[1:]
		return v
	}
	v, n := uvarintLong(r.b, 0)
	if n < 0 {
		r.err = errTruncated
		return 0
	}
	r.b = r.b[n:]
	return v
}

// uvarintLong reads the uvarint at b[p:] and returns it and the offset
// just past it, or a negative offset when b ends first or the uvarint
// overflows. Callers read a one-byte uvarint (every length of a key or an
// answer below 128) themselves, before calling it: a function that did
// both would not be inlined (its call alone is most of the inliner's
// budget), and the answers' loop runs once per carried answer.
func uvarintLong(b []byte, p int) (v uint64, next int) {
	if p >= len(b) {
		return 0, -1
	}
	v, n := binary.Uvarint(b[p:])
	if n <= 0 {
		return 0, -1
	}
	return v, p + n
}

func (r *binReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errTruncated
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *binReader) digest() (d Digest) {
	if r.err != nil {
		return d
	}
	if len(r.b) < len(d) {
		r.err = errTruncated
		return d
	}
	copy(d[:], r.b)
	r.b = r.b[len(d):]
	return d
}

// count reads an element count and checks that the record could hold that
// many elements of at least min bytes each, so a forged count cannot make
// the reader allocate without bound.
func (r *binReader) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = errTruncated
		return 0
	}
	return int(n)
}

// readBinaryState decodes a binary state record into st (ID and times are
// set by the caller).
func readBinaryState(b []byte, st *State) error {
	if len(b) == 0 || b[0] != binaryVersion {
		return fmt.Errorf("unknown content version")
	}
	r := &binReader{b: b[1:], all: string(b[1:])}
	st.Method = r.str()
	st.Target = r.str()
	st.Arguments = r.digest()
	st.Principal = r.str()
	if rounds := r.uvarint(); rounds > 1<<20 {
		r.err = errors.New("round count out of range")
	} else {
		st.Round = int(rounds)
	}
	if n := r.count(1 + len(Digest{})); n > 0 {
		st.Issued = make(Issued, n)
		for i := range st.Issued {
			k := r.str()
			st.Issued[i] = IssuedRequest{Key: k, Digest: r.digest()}
		}
	}
	if p := r.bytes(); len(p) > 0 {
		st.Payload = p
	}
	if n := r.count(3 + len(Digest{})); n > 0 {
		st.Answers = r.answers(n)
	}
	st.Flow = r.flow()
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return errors.New("trailing bytes")
	}
	return nil
}

// answers reads n recorded answers. It is the loop of str, digest and
// bytes written out with one index and one bounds check per field: it
// runs once per answer a retry's state carries (under valgrind,
// BenchmarkCarried in bench/, 2026-12-04, the reader's methods cost about
// 250 instructions an answer). FuzzReadBinaryState holds it to the
// methods' reading (readAnswersSlow). Each answer keeps its bytes in the
// record (Recorded.raw) so that the next state can copy them through.
func (r *binReader) answers(n int) []Recorded {
	if r.err != nil {
		return nil
	}
	out := make([]Recorded, n)
	b, all := r.b, r.all
	off := len(all) - len(b) // b's offset in all (all is b's record from the reader's start)
	p := 0
	for i := range out {
		start := p
		// key
		var kl, al uint64
		if p < len(b) && b[p] < 0x80 { // one byte
			kl, p = uint64(b[p]), p+1
		} else if kl, p = uvarintLong(b, p); p < 0 {
			r.err = errTruncated
			return nil
		}
		if kl == 0 {
			r.err = errors.New("recorded answer without a key")
			return nil
		}
		if kl > uint64(len(b)-p) || len(b)-p-int(kl) < len(Digest{})+1 {
			r.err = errTruncated
			return nil
		}
		a := &out[i]
		if all != "" {
			a.Key = all[off+p : off+p+int(kl)]
		} else {
			a.Key = string(b[p : p+int(kl)])
		}
		p += int(kl)
		a.Digest = Digest(b[p : p+len(Digest{})])
		p += len(Digest{})
		// answer
		if p < len(b) && b[p] < 0x80 { // one byte
			al, p = uint64(b[p]), p+1
		} else if al, p = uvarintLong(b, p); p < 0 {
			r.err = errTruncated
			return nil
		}
		if al > uint64(len(b)-p) {
			r.err = errTruncated
			return nil
		}
		a.Answer = b[p : p+int(al) : p+int(al)]
		p += int(al)
		a.raw = b[start:p]
	}
	r.b = b[p:]
	return out
}
