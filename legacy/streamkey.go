package legacy

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"sync/atomic"
)

// streamKeys names the streams an adapter keeps events of: 12 bytes, 8
// random ones drawn once per adapter and a 4-byte count, in base64url (16
// characters, the form parseEventID reads). A key needs to be unique,
// not secret: a stream is found only within its session, after the
// session and its principal are checked (see "Resumable streams"), so
// a count spares every call's stream a read of crypto/rand. Keys repeat
// after 2^32 streams of one adapter, long after the first ones expired.
type streamKeys struct {
	prefix [8]byte
	// head is the base64url of prefix's first 6 bytes: the first 8
	// characters of every key, encoded once (see next).
	head [8]byte
	n    atomic.Uint32
}

func newStreamKeys() *streamKeys {
	var k streamKeys
	_, _ = rand.Read(k.prefix[:]) // never fails (crypto/rand)
	base64.RawURLEncoding.Encode(k.head[:], k.prefix[:6])
	return &k
}

// next returns a new stream key. Base64 encodes 3 bytes as 4 characters,
// so the key's first 8 characters are those of the prefix's first 6
// bytes, the same for every key (head); only the last 6 bytes (2 of the
// prefix, the count) are encoded here, into the key's 16 bytes, which
// become its string: one allocation, where EncodeToString made a buffer
// and its string, about 480 instructions of every blocking round trip
// (BenchmarkLegacyElicitInProcess, callgrind, issue 23).
// TestStreamKeysEncoding holds it to EncodeToString of the 12 bytes.
func (k *streamKeys) next() string {
	var tail [6]byte
	copy(tail[:], k.prefix[6:])
	binary.BigEndian.PutUint32(tail[2:], k.n.Add(1))
	b := make([]byte, 16)
	copy(b, k.head[:])
	base64.RawURLEncoding.Encode(b[8:], tail[:])
	return string(b)
}
