package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"

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
	return derivedKey{id: k.ID, mac: mac, aead: aead, header: base64.RawURLEncoding.EncodeToString(h)}, nil
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
