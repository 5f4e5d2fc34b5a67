package main

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// stateBinding is what the go-sdk server's requestState binds: the
// originating method, the tool, a digest of its arguments and a digest of
// the questions issued (SEP-2322 "Server Requirements"). There is no
// principal: the bench has no authentication (Baton binds the empty one).
type stateBinding struct {
	Method    string `json:"m"`
	Tool      string `json:"t"`
	Args      string `json:"a"`
	Questions string `json:"q"`
}

type sealedState struct {
	stateBinding
	Exp int64 `json:"exp"`
}

// sdkSealer is the go-sdk server's stand-in for the sealing the SDK does
// not provide: the binding and an expiry, as JSON, sealed with
// AES-256-GCM (random 96-bit nonce; key derived with HKDF-SHA256 from the
// bench key), then base64url. AEAD gives integrity and confidentiality in
// one primitive; open rejects a state that fails authentication, has
// expired or is bound to anything else. It is lighter than Baton's state
// (no JWT, no separate HMAC, no key id, no recorded answers).
type sdkSealer struct {
	aead cipher.AEAD
	ttl  time.Duration
}

func newSDKSealer(secret []byte, ttl time.Duration) (*sdkSealer, error) {
	key, err := hkdf.Key(sha256.New, secret, nil, "gosdk-bench requestState", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sdkSealer{aead: aead, ttl: ttl}, nil
}

func (s *sdkSealer) seal(b stateBinding) (string, error) {
	plain, err := json.Marshal(sealedState{stateBinding: b, Exp: time.Now().Add(s.ttl).Unix()})
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, nil)), nil
}

func (s *sdkSealer) open(state string, want stateBinding) error {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return errors.New("malformed")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return errors.New("authentication failed")
	}
	var st sealedState
	if err := json.Unmarshal(plain, &st); err != nil {
		return errors.New("malformed payload")
	}
	if time.Now().Unix() > st.Exp {
		return errors.New("expired")
	}
	if st.stateBinding != want {
		return errors.New("bound to another request")
	}
	return nil
}

// digest is base64url(SHA-256(b)).
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// confirmSchema is the confirm tool's requested schema (one required
// boolean, confirm) as the peers send it, and its resolved form, with
// which the peers' confirm handlers validate an accepted answer (the
// go-sdk's schema library, google/jsonschema-go, resolved once).
func confirmSchema() (*jsonschema.Schema, *jsonschema.Resolved, error) {
	schema := &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"confirm": {Type: "boolean"}},
		Required:   []string{"confirm"},
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, nil, err
	}
	return schema, resolved, nil
}
