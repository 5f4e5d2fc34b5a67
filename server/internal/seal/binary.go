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
	for k, d := range st.Issued {
		dst = appendStr(dst, k)
		dst = append(dst, d[:]...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(st.Payload)))
	dst = append(dst, st.Payload...)
	dst = binary.AppendUvarint(dst, uint64(len(st.Answers)))
	for _, a := range st.Answers {
		dst = appendStr(dst, a.Key)
		dst = append(dst, a.Digest[:]...)
		dst = binary.AppendUvarint(dst, uint64(len(a.Answer)))
		dst = append(dst, a.Answer...)
	}
	return appendFlow(dst, st.Flow)
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
	if len(r.b) > 0 && r.b[0] < 0x80 { // one byte: every length of a key or an answer below 128
		v := uint64(r.b[0])
		r.b = r.b[1:]
		return v
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errTruncated
		return 0
	}
	r.b = r.b[n:]
	return v
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
		st.Issued = make(map[string]Digest, n)
		for range n {
			k := r.str()
			st.Issued[k] = r.digest()
		}
	}
	if p := r.bytes(); len(p) > 0 {
		st.Payload = p
	}
	if n := r.count(3 + len(Digest{})); n > 0 {
		st.Answers = make([]Recorded, 0, n)
		for range n {
			k := r.str()
			d := r.digest()
			a := r.bytes()
			if k == "" && r.err == nil {
				r.err = errors.New("recorded answer without a key")
			}
			st.Answers = append(st.Answers, Recorded{Key: k, Digest: d, Answer: a})
		}
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
