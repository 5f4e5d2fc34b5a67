package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"
	"sync"
	"unsafe"

	"github.com/baton-mcp/baton/mrtr"
)

// ring is a key ring with its keys derived: what the Sealer signs,
// verifies, encrypts and decrypts with.
type ring struct {
	keys []derivedKey
	byID map[string]*derivedKey
}

type derivedKey struct {
	id     string
	mac    []byte
	aead   cipher.AEAD
	header string // the base64url JOSE header naming this key
	hs256  *macs  // HMAC-SHA256 states keyed with mac
}

const (
	hkdfMAC = "baton requestState HS256"
	hkdfEnc = "baton requestState AES-256-GCM"
)

// deriveRing derives the signing and encryption keys of every key of kr,
// once, when a ring is handed to a Sealer.
func deriveRing(kr *mrtr.KeyRing) (*ring, error) {
	keys := kr.Keys()
	r := &ring{keys: make([]derivedKey, 0, len(keys)), byID: make(map[string]*derivedKey, len(keys))}
	for _, k := range keys {
		d, err := derive(k)
		if err != nil {
			return nil, fmt.Errorf("key ring: key %q: %w", k.ID, err)
		}
		r.keys = append(r.keys, d)
		r.byID[k.ID] = &r.keys[len(r.keys)-1]
	}
	return r, nil
}

func derive(k mrtr.Key) (derivedKey, error) {
	mac, err := hkdf.Key(sha256.New, k.Secret, nil, hkdfMAC, 32)
	if err != nil {
		return derivedKey{}, err
	}
	enc, err := hkdf.Key(sha256.New, k.Secret, nil, hkdfEnc, 32)
	if err != nil {
		return derivedKey{}, err
	}
	block, err := aes.NewCipher(enc)
	if err != nil {
		return derivedKey{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return derivedKey{}, err
	}
	h, err := json.Marshal(map[string]string{"alg": "HS256", "kid": k.ID})
	if err != nil {
		return derivedKey{}, err
	}
	return derivedKey{id: k.ID, mac: mac, aead: aead, header: base64.RawURLEncoding.EncodeToString(h), hs256: &macs{key: mac}}, nil
}

func (r *ring) signing() *derivedKey { return &r.keys[0] }

func (r *ring) lookup(id string) (*derivedKey, bool) {
	k, ok := r.byID[id]
	return k, ok
}

// byHeader returns the key whose precomputed header is h, the header
// segment of a token.
func (r *ring) byHeader(h string) (*derivedKey, bool) {
	for i := range r.keys {
		if r.keys[i].header == h {
			return &r.keys[i], true
		}
	}
	return nil, false
}

// macs keeps HMAC-SHA256 states keyed with one key's MAC key, reset
// between uses: crypto/hmac remembers the keyed inner and outer states
// after the first Reset, so a pooled state skips hashing the key's two
// pad blocks and the three allocations of hmac.New on every token signed
// or verified. HS256 is exactly HMAC-SHA256 over the signing input
// (RFC 7518 3.2), which golang-jwt's SigningMethodHS256 computes with a
// fresh hmac.New each time; in process that cost a two-round flow 13 of
// its 211 allocations (one token signed, one verified) and two SHA-256
// blocks per token (BenchmarkMRTRTwoRounds, 2026-12-03).
type macs struct {
	key  []byte
	pool sync.Pool
}

// pooledMAC is a keyed HMAC state and the buffer its sums are written
// to: Sum through the hash.Hash interface makes its destination escape, so
// a destination of the caller's on its stack was one allocation per token
// signed or verified (BenchmarkOpen and BenchmarkSeal, 2026-12-04).
type pooledMAC struct {
	h   hash.Hash
	buf [sha256.Size]byte
}

func (m *macs) get() *pooledMAC {
	if p, ok := m.pool.Get().(*pooledMAC); ok {
		return p
	}
	return &pooledMAC{h: hmac.New(sha256.New, m.key)}
}

// sum returns HMAC-SHA256(key, msg).
func (m *macs) sum(msg string) (out [sha256.Size]byte) {
	p := m.get()
	// A string's bytes, read in place: an io.Writer must not modify or
	// keep what it is given, and a copy would cost an allocation of the
	// token's size.
	p.h.Write(unsafe.Slice(unsafe.StringData(msg), len(msg)))
	out = [sha256.Size]byte(p.h.Sum(p.buf[:0]))
	p.h.Reset()
	m.pool.Put(p)
	return out
}
