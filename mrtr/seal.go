package mrtr

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-mcp/baton/jsonrpc"
)

// DefaultStateTTL is how long a requestState stays valid when
// SealerOptions.TTL is zero.
const DefaultStateTTL = 10 * time.Minute

// DefaultMaxStateSize bounds a requestState token, in bytes, when
// SealerOptions.MaxSize is zero.
const DefaultMaxStateSize = 64 << 10

// Binding is what a requestState is bound to: the request that created it
// and the principal who made it. A retry must match every field.
type Binding struct {
	// Method is the JSON-RPC method (tools/call, prompts/get, resources/read).
	Method string
	// Target is the tool or prompt name, or the resource URI.
	Target string
	// Arguments is ArgumentsDigest of the request's arguments.
	Arguments Digest
	// Principal is the authenticated subject, or "" when anonymous.
	Principal string
}

// State is the content of a requestState.
type State struct {
	Binding
	// Issued maps the key of every input request issued with this state to
	// the request's digest.
	Issued map[string]Digest
	// Payload is the handler's own data, as JSON.
	Payload json.RawMessage
	// ID is a random identifier unique to this state (the JWT "jti"), for
	// single-use enforcement.
	ID string
	// IssuedAt and ExpiresAt bound the state's life.
	IssuedAt, ExpiresAt time.Time
}

// SealerOptions configure a Sealer. The zero value is usable.
type SealerOptions struct {
	// TTL is how long sealed state stays valid (DefaultStateTTL if zero).
	TTL time.Duration
	// Audience, if set, is written as the JWT "aud" claim and required on
	// verification, so state from a deployment with another audience is
	// refused even if it shares a key.
	Audience string
	// MaxSize bounds a token in bytes (DefaultMaxStateSize if zero); larger
	// state is an error when sealing and refused when opening.
	MaxSize int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Sealer signs and verifies requestState tokens. It is safe for concurrent
// use; SetKeys swaps the key ring atomically.
type Sealer struct {
	ring    atomic.Pointer[KeyRing]
	ttl     time.Duration
	aud     string
	maxSize int
	now     func() time.Time
	parser  *jwt.Parser
}

// NewSealer returns a Sealer using ring.
func NewSealer(ring *KeyRing, opts SealerOptions) (*Sealer, error) {
	if ring == nil {
		return nil, errors.New("sealer: nil key ring")
	}
	if opts.TTL < 0 {
		return nil, fmt.Errorf("sealer: negative TTL %v", opts.TTL)
	}
	s := &Sealer{ttl: opts.TTL, aud: opts.Audience, maxSize: opts.MaxSize, now: opts.Now}
	if s.ttl == 0 {
		s.ttl = DefaultStateTTL
	}
	if s.maxSize <= 0 {
		s.maxSize = DefaultMaxStateSize
	}
	if s.now == nil {
		s.now = time.Now
	}
	popts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(s.now),
		jwt.WithJSONNumber(),
	}
	if s.aud != "" {
		popts = append(popts, jwt.WithAudience(s.aud))
	}
	s.parser = jwt.NewParser(popts...)
	s.ring.Store(ring)
	return s, nil
}

// SetKeys replaces the key ring. State signed by a key still in the new ring
// keeps verifying.
func (s *Sealer) SetKeys(ring *KeyRing) error {
	if ring == nil {
		return errors.New("sealer: nil key ring")
	}
	s.ring.Store(ring)
	return nil
}

// TTL returns the lifetime of newly sealed state.
func (s *Sealer) TTL() time.Duration { return s.ttl }

type stateClaims struct {
	jwt.RegisteredClaims
	Method  string            `json:"mth"`
	Target  string            `json:"tgt"`
	Args    string            `json:"arg"`
	Issued  map[string]string `json:"req,omitempty"`
	Payload json.RawMessage   `json:"pld,omitempty"`
}

var b64 = base64.RawURLEncoding

// Seal signs st with the newest key. It fills st.ID, st.IssuedAt and
// st.ExpiresAt.
func (s *Sealer) Seal(st *State) (string, error) {
	if st.Method == "" || st.Target == "" {
		return "", errors.New("seal state: method and target are required")
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", fmt.Errorf("seal state: %w", err)
	}
	now := s.now().Truncate(time.Second)
	st.ID = b64.EncodeToString(id)
	st.IssuedAt = now
	st.ExpiresAt = now.Add(s.ttl)
	c := stateClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   st.Principal,
			ID:        st.ID,
			IssuedAt:  jwt.NewNumericDate(st.IssuedAt),
			ExpiresAt: jwt.NewNumericDate(st.ExpiresAt),
		},
		Method:  st.Method,
		Target:  st.Target,
		Args:    b64.EncodeToString(st.Arguments[:]),
		Payload: st.Payload,
	}
	if s.aud != "" {
		c.Audience = jwt.ClaimStrings{s.aud}
	}
	if len(st.Issued) > 0 {
		c.Issued = make(map[string]string, len(st.Issued))
		for k, d := range st.Issued {
			c.Issued[k] = b64.EncodeToString(d[:])
		}
	}
	key := s.ring.Load().signing()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	tok.Header["kid"] = key.ID
	signed, err := tok.SignedString(key.Secret)
	if err != nil {
		return "", fmt.Errorf("seal state: %w", err)
	}
	if len(signed) > s.maxSize {
		return "", fmt.Errorf("seal state: token is %d bytes, over the %d-byte limit; keep less in the payload", len(signed), s.maxSize)
	}
	return signed, nil
}

// StateError says why a requestState was refused. It becomes a -32602
// error whose message carries the reason.
type StateError struct {
	Reason string
	Err    error
}

// Error returns the reason.
func (e *StateError) Error() string { return "invalid requestState: " + e.Reason }

// Unwrap returns the underlying error, if any.
func (e *StateError) Unwrap() error { return e.Err }

// RPCError converts the error to its wire form.
func (e *StateError) RPCError() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.InvalidParams, Message: e.Error()}
}

func refuse(reason string, err error) *StateError { return &StateError{Reason: reason, Err: err} }

// Open verifies token and checks that it is bound to want. Any failure is a
// *StateError naming the reason: malformed, too large, unknown key, bad
// signature, wrong algorithm, expired, wrong audience, or issued for another
// method, target, set of arguments or principal.
func (s *Sealer) Open(token string, want Binding) (*State, error) {
	if len(token) > s.maxSize {
		return nil, refuse(fmt.Sprintf("token is %d bytes, over the %d-byte limit", len(token), s.maxSize), nil)
	}
	ring := s.ring.Load()
	var c stateClaims
	_, err := s.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errors.New("no key id")
		}
		secret, ok := ring.lookup(kid)
		if !ok {
			return nil, fmt.Errorf("unknown key id %q", kid)
		}
		return secret, nil
	})
	if err != nil {
		return nil, classify(err)
	}
	st := &State{
		Binding: Binding{Method: c.Method, Target: c.Target, Principal: c.Subject},
		Payload: c.Payload,
		ID:      c.ID,
	}
	if c.IssuedAt != nil {
		st.IssuedAt = c.IssuedAt.Time
	}
	if c.ExpiresAt != nil {
		st.ExpiresAt = c.ExpiresAt.Time
	}
	if err := decodeDigest(c.Args, &st.Arguments); err != nil {
		return nil, refuse("malformed argument digest", err)
	}
	if len(c.Issued) > 0 {
		st.Issued = make(map[string]Digest, len(c.Issued))
		for k, v := range c.Issued {
			var d Digest
			if err := decodeDigest(v, &d); err != nil {
				return nil, refuse(fmt.Sprintf("malformed digest for input request %q", k), err)
			}
			st.Issued[k] = d
		}
	}
	switch {
	case st.Method != want.Method:
		return nil, refuse(fmt.Sprintf("it was issued for %s, not %s", st.Method, want.Method), nil)
	case st.Target != want.Target:
		return nil, refuse(fmt.Sprintf("it was issued for %q, not %q", st.Target, want.Target), nil)
	case st.Arguments != want.Arguments:
		return nil, refuse("it was issued for different arguments", nil)
	case st.Principal != want.Principal:
		return nil, refuse("it was issued to another principal", nil)
	}
	return st, nil
}

func decodeDigest(s string, d *Digest) error {
	b, err := b64.DecodeString(s)
	if err != nil {
		return err
	}
	if len(b) != len(d) {
		return fmt.Errorf("digest is %d bytes, want %d", len(b), len(d))
	}
	copy(d[:], b)
	return nil
}

func classify(err error) *StateError {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return refuse(detail("malformed token", err, jwt.ErrTokenMalformed), err)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		// Also a pinned-algorithm violation ("signing method none is invalid").
		return refuse(detail("signature does not verify", err, jwt.ErrTokenSignatureInvalid), err)
	case errors.Is(err, jwt.ErrTokenExpired):
		return refuse("expired", err)
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return refuse("issued for another audience", err)
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued), errors.Is(err, jwt.ErrTokenNotValidYet):
		return refuse("issued in the future", err)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		if strings.Contains(err.Error(), "aud") {
			return refuse("issued for another audience (it has none)", err)
		}
		return refuse(detail("a required claim is missing", err, jwt.ErrTokenRequiredClaimMissing), err)
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		// A key lookup failure.
		return refuse(detail("cannot be verified", err, jwt.ErrTokenUnverifiable), err)
	default:
		return refuse("does not verify", err)
	}
}

// detail appends what the JWT library said beyond its sentinel's text:
// "token signature is invalid: signing method none is invalid" becomes
// "<what>: signing method none is invalid".
func detail(what string, err, sentinel error) string {
	msg := err.Error()
	prefix := sentinel.Error() + ": "
	if i := strings.Index(msg, prefix); i >= 0 {
		if rest := msg[i+len(prefix):]; rest != "" {
			return what + ": " + rest
		}
	}
	return what
}
