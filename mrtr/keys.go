package mrtr

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
)

// MinKeySize is the shortest secret a Key may hold, in bytes.
const MinKeySize = 32

// Key is one HMAC secret for requestState, named by its ID (the JWT "kid").
type Key struct {
	// ID names the key in the "kid" header of every requestState it signs
	// (non-empty, unique in its ring). It is visible to clients: choose a
	// name, not a secret.
	ID string
	// Secret is the HMAC-SHA256 secret, at least MinKeySize bytes. Every
	// instance that must verify another's state holds the same one.
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
// first and the old ones after it, and hand it to the server
// (server.Server.SetStateKeys); drop an old key once the state it signed
// has expired.
//
// Each secret is never used directly: HKDF-SHA256 derives from it one key
// for the HS256 signature and one for the AES-256-GCM encryption of the
// state's content.
type KeyRing struct {
	keys []Key
}

// NewKeyRing returns a ring of the given keys, newest first. Every key needs
// a unique, non-empty ID and a secret of at least MinKeySize bytes. The ring
// keeps copies of the secrets.
func NewKeyRing(keys ...Key) (*KeyRing, error) {
	if len(keys) == 0 {
		return nil, errors.New("key ring: no keys")
	}
	r := &KeyRing{keys: make([]Key, 0, len(keys))}
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		if k.ID == "" {
			return nil, fmt.Errorf("key ring: key %d has no ID", i)
		}
		if len(k.Secret) < MinKeySize {
			return nil, fmt.Errorf("key ring: key %q is %d bytes; at least %d are required", k.ID, len(k.Secret), MinKeySize)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("key ring: duplicate key ID %q", k.ID)
		}
		seen[k.ID] = true
		r.keys = append(r.keys, Key{ID: k.ID, Secret: bytes.Clone(k.Secret)})
	}
	return r, nil
}

// SigningKeyID returns the ID of the key that signs new state.
func (r *KeyRing) SigningKeyID() string { return r.keys[0].ID }

// IDs returns the key IDs, newest first.
func (r *KeyRing) IDs() []string {
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.ID
	}
	return ids
}

// Keys returns copies of the keys, newest first.
func (r *KeyRing) Keys() []Key {
	out := make([]Key, len(r.keys))
	for i, k := range r.keys {
		out[i] = Key{ID: k.ID, Secret: bytes.Clone(k.Secret)}
	}
	return out
}
