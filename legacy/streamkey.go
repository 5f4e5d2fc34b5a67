package legacy

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"sync/atomic"
)

// streamKeys names the streams a Handler keeps events of: 12 bytes, 8
// random ones drawn once per Handler and a 4-byte count, in base64url (16
// characters, the form parseEventID reads). A key needs to be unique,
// not secret: a stream is found only within its session, after the
// session and its principal are checked (see "Resumable streams"), so
// a count spares every call's stream a read of crypto/rand. Keys repeat
// after 2^32 streams of one Handler, long after the first ones expired.
type streamKeys struct {
	prefix [8]byte
	n      atomic.Uint32
}

func newStreamKeys() *streamKeys {
	var k streamKeys
	_, _ = rand.Read(k.prefix[:]) // never fails (crypto/rand)
	return &k
}

// next returns a new stream key.
func (k *streamKeys) next() string {
	var b [12]byte
	copy(b[:], k.prefix[:])
	binary.BigEndian.PutUint32(b[8:], k.n.Add(1))
	return base64.RawURLEncoding.EncodeToString(b[:])
}
