package mrtr

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// MinKeySize is the shortest secret a Key may hold, in bytes.
const MinKeySize = 32

// Key is one HMAC secret for requestState, named by its ID (the JWT "kid").
type Key struct {
	ID     string
	Secret []byte
}

// RandomKey returns a key with a fresh 32-byte secret and a random ID. It
// suits a single process (tests, development); instances that must finish
// each other's flows need a shared key.
func RandomKey() (Key, error) {
	secret := make([]byte, MinKeySize)
	if _, err := rand.Read(secret); err != nil {
		return Key{}, fmt.Errorf("random state key: %w", err)
	}
	id := make([]byte, 6)
	if _, err := rand.Read(id); err != nil {
		return Key{}, fmt.Errorf("random state key id: %w", err)
	}
	return Key{ID: "r-" + hex.EncodeToString(id), Secret: secret}, nil
}

// KeyRing is an immutable, ordered set of keys. The first key signs new
// state; every key verifies. To rotate, build a new ring with the new key
// first and the old ones after it, and hand it to Sealer.SetKeys; drop an
// old key once the state it signed has expired.
//
// Each secret is never used directly: HKDF-SHA256 derives from it one key
// for the HS256 signature and one for the AES-256-GCM encryption of the
// state's content.
type KeyRing struct {
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

func derive(k Key) (derivedKey, error) {
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

// NewKeyRing returns a ring of the given keys, newest first. Every key needs
// a unique, non-empty ID and a secret of at least MinKeySize bytes.
func NewKeyRing(keys ...Key) (*KeyRing, error) {
	if len(keys) == 0 {
		return nil, errors.New("key ring: no keys")
	}
	r := &KeyRing{keys: make([]derivedKey, 0, len(keys)), byID: make(map[string]*derivedKey, len(keys))}
	for i, k := range keys {
		if k.ID == "" {
			return nil, fmt.Errorf("key ring: key %d has no ID", i)
		}
		if len(k.Secret) < MinKeySize {
			return nil, fmt.Errorf("key ring: key %q is %d bytes; at least %d are required", k.ID, len(k.Secret), MinKeySize)
		}
		if _, dup := r.byID[k.ID]; dup {
			return nil, fmt.Errorf("key ring: duplicate key ID %q", k.ID)
		}
		d, err := derive(k)
		if err != nil {
			return nil, fmt.Errorf("key ring: key %q: %w", k.ID, err)
		}
		r.keys = append(r.keys, d)
		r.byID[k.ID] = &r.keys[len(r.keys)-1]
	}
	return r, nil
}

// SigningKeyID returns the ID of the key that signs new state.
func (r *KeyRing) SigningKeyID() string { return r.keys[0].id }

// IDs returns the key IDs, newest first.
func (r *KeyRing) IDs() []string {
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.id
	}
	return ids
}

func (r *KeyRing) signing() *derivedKey { return &r.keys[0] }

func (r *KeyRing) lookup(id string) (*derivedKey, bool) {
	k, ok := r.byID[id]
	return k, ok
}
