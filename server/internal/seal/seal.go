// Package seal seals a suspended call's state into the requestState token
// and opens it again: an HS256 JWT (golang-jwt's header and claims) whose
// claims carry the nonce and tag of content encrypted with AES-256-GCM,
// the ciphertext following the signature as a fourth segment, bound to
// the request and the principal, with an expiry and a leeway for clock
// skew; and the canonical form of arguments whose digest
// the state is bound to. Package server uses it; users configure it through
// server.Options and never see it.
package seal

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-mcp/baton/internal/bufpool"
	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/jsonw"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
)

// DefaultTTL is how long a requestState stays valid when the server's
// Options.StateTTL is zero.
const DefaultTTL = 10 * time.Minute

// DefaultLeeway is the clock skew tolerated between the instance that
// seals a requestState and the one that opens it, when the server's
// Options.StateLeeway is zero: a state's issue time may be that far ahead of
// the opening instance's clock. Expiry gets no leeway.
const DefaultLeeway = 30 * time.Second

// DefaultMaxSize bounds a requestState token, in bytes, when the
// server's Options.MaxStateSize is zero.
const DefaultMaxSize = 64 << 10

// Digest is a SHA-256 digest.
type Digest [32]byte

// Equal reports whether d and e are the same digest, as d == e does. It
// compares four words inline: == on the array calls runtime.memequal,
// about 40 instructions under valgrind, and a retry compares a digest or
// two per answer its state carries (BenchmarkCarried in bench/). Digests
// are not secret (a question's is computed from the question), so the
// comparison need not take constant time.
func (d *Digest) Equal(e *Digest) bool {
	return binary.LittleEndian.Uint64(d[0:8])^binary.LittleEndian.Uint64(e[0:8])|
		binary.LittleEndian.Uint64(d[8:16])^binary.LittleEndian.Uint64(e[8:16])|
		binary.LittleEndian.Uint64(d[16:24])^binary.LittleEndian.Uint64(e[16:24])|
		binary.LittleEndian.Uint64(d[24:32])^binary.LittleEndian.Uint64(e[24:32]) == 0
}

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

// Issued is the input requests issued with a state, each key with its
// request's digest, in the order issued. A state issues few (one is the
// usual round), so it is a slice searched from the front, not a map: a
// map of one entry cost two allocations of about 440 bytes in all in
// each round of a two-round flow (BenchmarkMRTRTwoRounds -memprofile,
// issue 23, 2026-12-04), one where the round issued the question and one
// where the next round opened the state.
type Issued []IssuedRequest

// IssuedRequest is one input request of Issued.
type IssuedRequest struct {
	Key    string
	Digest Digest
}

// Lookup returns the digest issued under key. Were a key issued twice,
// the last one counts (as it would in a map filled in order).
func (is Issued) Lookup(key string) (Digest, bool) {
	for i := len(is) - 1; i >= 0; i-- {
		if is[i].Key == key {
			return is[i].Digest, true
		}
	}
	return Digest{}, false
}

// State is the content of a requestState.
type State struct {
	// Binding is the request the state was issued for.
	Binding
	// Issued holds the key of every input request issued with this state
	// and the request's digest.
	Issued Issued
	// Payload is the handler's own data, as JSON.
	Payload json.RawMessage
	// Answers are the answers the handler has been given so far, in the
	// order it asked, each under the key of its question.
	Answers []Recorded
	// Round counts the rounds before this state's: 1 for the state the
	// first round issued.
	Round int
	// ID is a random identifier unique to this state (the JWT "jti"), for
	// single-use enforcement.
	ID string
	// IssuedAt and ExpiresAt bound the state's life, to the millisecond.
	IssuedAt, ExpiresAt time.Time

	// Leeway is the clock skew tolerated by the sealer that opened the
	// state: a single-use redemption is kept that much past ExpiresAt.
	Leeway time.Duration

	// Flow follows the flow across its rounds: its id (Seal draws one
	// when it is zero) and the spans of its first and previous rounds.
	Flow Flow
}

// Recorded is an answer the handler received, under the key of the
// question it answered and with that question's digest.
type Recorded struct {
	// Key is the key of the question answered.
	Key string
	// Digest is the digest of the question as it was issued.
	Digest Digest
	// Answer is the answer as the client sent it.
	Answer json.RawMessage

	// raw, for an answer read from a binary record, is its bytes there
	// (key, digest and answer, as appendAnswers writes them): the next
	// record copies them through. Nil for any other answer.
	raw []byte
}

// SealerOptions configure a Sealer. The zero value is usable.
type SealerOptions struct {
	// Plaintext leaves the state's content readable (base64 JSON) inside
	// the signed token. By default it is encrypted with AES-256-GCM, since
	// recorded answers and payloads can be personal data.
	Plaintext bool
	// TTL is how long sealed state stays valid (DefaultTTL if zero).
	// The state's times are written in milliseconds, so a TTL is truncated
	// to whole milliseconds and one under a millisecond is an error.
	TTL time.Duration
	// Audience, if set, is written as the JWT "aud" claim and required on
	// verification, so state from a deployment with another audience is
	// refused even if it shares a key.
	Audience string
	// MaxSize bounds a token in bytes (DefaultMaxSize if zero); larger
	// state is an error when sealing and refused when opening.
	MaxSize int
	// Leeway is how far ahead of this sealer's clock a state's issue time
	// (iat, and nbf if a token has one) may be and still be accepted: the
	// clock skew tolerated between the instances of a fleet. Zero means
	// DefaultLeeway; a negative value means none. Expiry gets no
	// leeway: a state is refused from the moment this sealer's clock
	// reaches its exp, which the issuer set to its issue time plus the
	// TTL.
	Leeway time.Duration
	// Now is the sealer's clock, read to write a state's times and to check
	// them; nil means the wall clock (time.Now).
	Now func() time.Time
}

// Sealer signs and verifies requestState tokens. It is safe for concurrent
// use; SetKeys swaps the key ring atomically.
type Sealer struct {
	ring      atomic.Pointer[ring]
	plaintext bool
	ttl       time.Duration
	leeway    time.Duration
	aud       string
	maxSize   int
	now       func() time.Time
	validator *stateValidator
	scratch   bufpool.Pool // Seal's work buffers
}

// wallClock returns now, or the wall clock when now is nil. It is the one
// place this package reads the wall clock: a Sealer keeps the clock it was
// given, so a test or a simulation can give each its own.
func wallClock(now func() time.Time) func() time.Time {
	if now != nil {
		return now
	}
	return time.Now
}

// NewSealer returns a Sealer using the keys of kr.
func NewSealer(kr *mrtr.KeyRing, opts SealerOptions) (*Sealer, error) {
	if kr == nil {
		return nil, errors.New("sealer: nil key ring")
	}
	r, err := deriveRing(kr)
	if err != nil {
		return nil, fmt.Errorf("sealer: %w", err)
	}
	if opts.TTL < 0 {
		return nil, fmt.Errorf("sealer: negative TTL %v", opts.TTL)
	}
	if opts.TTL > 0 && opts.TTL < time.Millisecond {
		return nil, fmt.Errorf("sealer: TTL %v is under a millisecond, the unit state times are written in", opts.TTL)
	}
	s := &Sealer{ttl: opts.TTL.Truncate(time.Millisecond), aud: opts.Audience, maxSize: opts.MaxSize, now: wallClock(opts.Now), plaintext: opts.Plaintext}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	switch {
	case opts.Leeway == 0:
		s.leeway = DefaultLeeway
	case opts.Leeway > 0:
		s.leeway = opts.Leeway
	}
	if s.maxSize <= 0 {
		s.maxSize = DefaultMaxSize
	}
	s.validator = &stateValidator{now: s.now, leeway: s.leeway}
	if s.aud != "" {
		// golang-jwt checks the audience; the times are checked by
		// stateValidator itself (see there why).
		s.validator.aud = jwt.NewValidator(jwt.WithAudience(s.aud), jwt.WithTimeFunc(s.now))
	}
	s.ring.Store(r)
	return s, nil
}

// SetKeys replaces the key ring. State signed by a key still in the new ring
// keeps verifying.
func (s *Sealer) SetKeys(kr *mrtr.KeyRing) error {
	if kr == nil {
		return errors.New("sealer: nil key ring")
	}
	r, err := deriveRing(kr)
	if err != nil {
		return fmt.Errorf("sealer: %w", err)
	}
	s.ring.Store(r)
	return nil
}

// TTL returns the lifetime of newly sealed state.
func (s *Sealer) TTL() time.Duration { return s.ttl }

// Now reads the sealer's clock (SealerOptions.Now, or the wall clock). A
// server reads every time through it, so one injected clock governs state,
// leases and timestamps alike.
func (s *Sealer) Now() time.Time { return s.now() }

// Leeway returns the clock skew tolerated on a state's issue time (zero
// when none). See SealerOptions.Leeway.
func (s *Sealer) Leeway() time.Duration { return s.leeway }

// stateClaims are the JWT claims: the registered ones in the clear, the
// rest in Body (plaintext mode) or sealed in Enc. They implement
// jwt.Claims with their own JSON coding: golang-jwt still verifies the
// signature, the algorithm and the audience, but decoding skips
// encoding/json's reflection (this runs on every MRTR retry).
//
// The times are Unix milliseconds (0 when absent), written as NumericDates
// with a fraction ("iat":1767225600.123; RFC 7519 allows non-integer
// seconds). Whole seconds, golang-jwt's default, made both rules inexact:
// truncating took up to a second off every state's life and added up to a
// second, at random, to the leeway on iat. Milliseconds keep exp exactly
// iat+TTL and the leeway what it says, for at most eight bytes. An older
// Baton reads the fraction and truncates it (an earlier iat and exp), so
// a rolling upgrade is safe.
type stateClaims struct {
	ExpiresAtMs int64      `json:"exp"`
	IssuedAtMs  int64      `json:"iat"`
	NotBeforeMs int64      `json:"nbf,omitempty"` // Seal writes none; honoured when present
	ID          string     `json:"jti"`
	Audience    []string   `json:"aud,omitempty"`
	Body        *stateBody `json:"st,omitempty"`
	Enc         string     `json:"enc,omitempty"`
	// badTime names a time claim that is no NumericDate between 1970 and
	// the year 9999; stateValidator refuses the token naming it.
	badTime string
}

// stateClaimsWire decodes numbers as JSON numbers: a token is foreign
// input even when signed.
type stateClaimsWire struct {
	ExpiresAt *float64        `json:"exp"`
	IssuedAt  *float64        `json:"iat"`
	NotBefore *float64        `json:"nbf"`
	ID        string          `json:"jti"`
	Audience  json.RawMessage `json:"aud"`
	Body      *stateBody      `json:"st"`
	Enc       string          `json:"enc"`
}

// maxNumericDate is 9999-12-31T23:59:59Z, the latest time a state may name.
const maxNumericDate = 253402300799

// numericDateMs converts a NumericDate (seconds, perhaps with a fraction)
// to Unix milliseconds: 0 when absent, false when out of range. A float64
// holds such a time to better than 0.04 ms up to the year 9999, so
// rounding gives back exactly the milliseconds Seal wrote.
func numericDateMs(f *float64) (int64, bool) {
	if f == nil {
		return 0, true
	}
	if !(*f >= 0 && *f <= maxNumericDate) {
		return 0, false
	}
	return int64(math.Round(*f * 1000)), true
}

// appendNumericDate writes a non-negative Unix time in milliseconds as a
// NumericDate: whole seconds, and three decimals when there is a fraction.
func appendNumericDate(b []byte, ms int64) []byte {
	b = strconv.AppendInt(b, ms/1000, 10)
	if f := ms % 1000; f != 0 {
		b = append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	}
	return b
}

// UnmarshalJSON decodes the claims case-sensitively (strictjson).
func (c *stateClaims) UnmarshalJSON(b []byte) error {
	var w stateClaimsWire
	if err := strictjson.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = stateClaims{ID: w.ID, Body: w.Body, Enc: w.Enc}
	// The times by index, not through pointers into c: a pointer to a
	// field of c kept in a table made c escape, and Open's claims, on its
	// stack, an allocation.
	for i, t := range [...]struct {
		name string
		in   *float64
	}{{"exp", w.ExpiresAt}, {"iat", w.IssuedAt}, {"nbf", w.NotBefore}} {
		ms, ok := numericDateMs(t.in)
		if !ok && c.badTime == "" {
			c.badTime = t.name
		}
		switch i {
		case 0:
			c.ExpiresAtMs = ms
		case 1:
			c.IssuedAtMs = ms
		default:
			c.NotBeforeMs = ms
		}
	}
	if a := bytes.TrimSpace(w.Audience); len(a) > 0 && !bytes.Equal(a, []byte("null")) {
		var aud jwt.ClaimStrings
		if err := aud.UnmarshalJSON(a); err != nil {
			return err
		}
		c.Audience = aud
	}
	return nil
}

// MarshalJSON encodes the claims by hand.
func (c stateClaims) MarshalJSON() ([]byte, error) {
	return c.appendJSON(make([]byte, 0, 112+len(c.Enc)))
}

// appendJSON appends the claims' JSON to b.
func (c *stateClaims) appendJSON(b []byte) ([]byte, error) {
	b, err := c.appendMembers(b)
	if err != nil {
		return nil, err
	}
	if c.Enc != "" {
		b = append(b, `,"enc":`...)
		b = appendB64String(b, c.Enc)
	}
	return append(b, '}'), nil
}

// appendMembers appends the claims' JSON but enc and the closing brace.
func (c *stateClaims) appendMembers(b []byte) ([]byte, error) {
	b = append(b, `{"exp":`...)
	b = appendNumericDate(b, c.ExpiresAtMs)
	b = append(b, `,"iat":`...)
	b = appendNumericDate(b, c.IssuedAtMs)
	if c.NotBeforeMs != 0 {
		b = append(b, `,"nbf":`...)
		b = appendNumericDate(b, c.NotBeforeMs)
	}
	b = append(b, `,"jti":`...)
	b = appendB64String(b, c.ID)
	if len(c.Audience) > 0 {
		b = append(b, `,"aud":[`...)
		for i, a := range c.Audience {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.String(b, a)
		}
		b = append(b, ']')
	}
	if c.Body != nil {
		body, err := json.Marshal(c.Body)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"st":`...)
		b = append(b, body...)
	}
	return b, nil
}

// appendB64String appends s as a JSON string. The strings a sealer writes
// in the claims (jti, enc) are base64url, with nothing to escape: they are
// copied between quotes after one pass over the alphabet, where
// jsonw.String's general loop cost about 500 instructions a claim under
// valgrind (BenchmarkMRTRTwoRounds, 2026-12-04). Any other string is
// jsonw.String's.
func appendB64String(b []byte, s string) []byte {
	for i := range len(s) {
		if b64Values[s[i]] == 0xff {
			return jsonw.String(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// times returns the state's issue and expiry times (zero when absent).
func (c *stateClaims) times() (issued, expires time.Time) {
	if c.IssuedAtMs != 0 {
		issued = time.UnixMilli(c.IssuedAtMs)
	}
	if c.ExpiresAtMs != 0 {
		expires = time.UnixMilli(c.ExpiresAtMs)
	}
	return issued, expires
}

// The jwt.Claims methods golang-jwt validates with. The three times are
// hidden from it (nil): its validator has one leeway for exp, nbf and iat
// alike, and always checks exp and nbf when they are present, so
// stateValidator checks them by Baton's own rule and golang-jwt only the
// audience.
func (c *stateClaims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }
func (c *stateClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return nil, nil }
func (c *stateClaims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (c *stateClaims) GetIssuer() (string, error)                   { return "", nil }
func (c *stateClaims) GetSubject() (string, error)                  { return "", nil }
func (c *stateClaims) GetAudience() (jwt.ClaimStrings, error)       { return c.Audience, nil }

// stateValidator checks the claims of a token whose signature verified:
// the times by the rule below, then the audience through golang-jwt.
//
// The rule for time, with one reading of the sealer's clock (now):
//
//   - exp is required and exact: the state is accepted while now < exp and
//     refused from exp on, with no leeway. The issuer wrote exp as its iat
//     plus the TTL, so the TTL is the state's whole life by the issuer's
//     clock. An instance whose clock is behind the issuer's by d accepts
//     the state for d longer in real time; that is the skew itself, and no
//     grace is added on top of it (the state is a bearer credential).
//   - iat, and nbf when a token has one, may be up to the leeway ahead of
//     now (now >= iat - leeway): an instance whose clock is behind the
//     issuer's accepts a state issued a moment ago. Further ahead, the
//     state is refused with a reason that names the gap: the fleet's
//     clocks disagree by more than the leeway.
//
// golang-jwt's WithLeeway cannot express this: it widens exp by the same
// leeway as iat and nbf, so every state would live TTL+leeway everywhere.
//
// Seal writes no nbf: it would equal iat, and the iat check already
// refuses a state from the future; a token that carries one (only a key
// holder can make one) is held to it.
type stateValidator struct {
	now    func() time.Time
	leeway time.Duration
	aud    *jwt.Validator // nil when the sealer has no audience
}

// Validate applies the rule; a time failure is a *StateError naming it.
func (v *stateValidator) Validate(c *stateClaims) error {
	if c.badTime != "" {
		return refuse(fmt.Sprintf("malformed token: %s is not a time between 1970 and 9999", c.badTime), jwt.ErrTokenMalformed)
	}
	if c.ExpiresAtMs == 0 {
		return refuse("a required claim is missing: exp", jwt.ErrTokenRequiredClaimMissing)
	}
	now := v.now()
	if exp := time.UnixMilli(c.ExpiresAtMs); !now.Before(exp) {
		return refuse(fmt.Sprintf("expired %v ago by this server's clock", now.Sub(exp).Truncate(time.Millisecond)), jwt.ErrTokenExpired)
	}
	for _, t := range [...]struct {
		ms   int64
		what string
		err  error
	}{
		{c.IssuedAtMs, "issued in the future: its iat", jwt.ErrTokenUsedBeforeIssued},
		{c.NotBeforeMs, "not valid yet: its nbf", jwt.ErrTokenNotValidYet},
	} {
		if t.ms == 0 {
			continue
		}
		if ahead := time.UnixMilli(t.ms).Sub(now); ahead > v.leeway {
			return refuse(fmt.Sprintf("%s is %v ahead of this server's clock, beyond the %v leeway for clock skew; are the fleet's clocks synchronised?",
				t.what, ceilMillisecond(ahead), v.leeway), t.err)
		}
	}
	if v.aud != nil {
		// A copy: golang-jwt takes the claims as an interface, and c
		// itself stays where its caller keeps it (Open's stack).
		cc := *c
		return v.aud.Validate(&cc)
	}
	return nil
}

// ceilMillisecond rounds d up to a whole millisecond, so that a gap just
// over the leeway never prints as equal to it.
func ceilMillisecond(d time.Duration) time.Duration {
	r := d.Truncate(time.Millisecond)
	if r < d {
		r += time.Millisecond
	}
	return r
}

type stateBody struct {
	Method    string          `json:"mth"`
	Target    string          `json:"tgt"`
	Args      string          `json:"arg"`
	Principal string          `json:"sub,omitempty"`
	Issued    []issuedWire    `json:"req,omitempty"`
	Payload   json.RawMessage `json:"pld,omitempty"`
	Answers   []recordedWire  `json:"ans,omitempty"`
	Round     int             `json:"rnd,omitempty"`
	Flow      *flowWire       `json:"flw,omitempty"`
}

// into fills st from the plaintext body.
func (body *stateBody) into(st *State) error {
	st.Binding = Binding{Method: body.Method, Target: body.Target, Principal: body.Principal}
	st.Payload = body.Payload
	if err := decodeDigest(body.Args, &st.Arguments); err != nil {
		return refuse("malformed argument digest", err)
	}
	if len(body.Issued) > 0 {
		st.Issued = make(Issued, 0, len(body.Issued))
		for _, iw := range body.Issued {
			var d Digest
			if err := decodeDigest(iw.Digest, &d); err != nil {
				return refuse("malformed digest for input request "+clip.Quote(iw.Key), err)
			}
			st.Issued = append(st.Issued, IssuedRequest{Key: iw.Key, Digest: d})
		}
	}
	for _, a := range body.Answers {
		r := Recorded{Key: a.Key, Answer: a.Answer}
		if err := decodeDigest(a.Digest, &r.Digest); err != nil || a.Key == "" {
			return refuse("malformed recorded answer", err)
		}
		st.Answers = append(st.Answers, r)
	}
	if body.Round < 0 {
		return refuse("malformed round count", nil)
	}
	st.Round = body.Round
	if err := body.Flow.into(&st.Flow); err != nil {
		return refuse("malformed flow", err)
	}
	return nil
}

type issuedWire struct {
	Key    string `json:"k"`
	Digest string `json:"d"`
}

type recordedWire struct {
	Key    string          `json:"k"`
	Digest string          `json:"d"`
	Answer json.RawMessage `json:"a"`
}

var b64 = base64.RawURLEncoding

// plainBody is the readable JSON form of st (plaintext mode). It copies
// what it keeps of st (strings, the payload, the answers) so that Seal
// does not leak st's contents to the heap: the caller's State and the
// lists it points to can then stay on its stack (round.Suspended builds
// the issued and answered lists there; an allocation fewer per suspended
// round). Plaintext mode is for debugging; its copies cost little.
func plainBody(st *State) *stateBody {
	body := &stateBody{
		Method:    strings.Clone(st.Method),
		Target:    strings.Clone(st.Target),
		Args:      b64.EncodeToString(st.Arguments[:]),
		Principal: strings.Clone(st.Principal),
		Payload:   bytes.Clone(st.Payload),
		Round:     st.Round,
		Flow:      st.Flow.wire(),
	}
	if len(st.Issued) > 0 {
		body.Issued = make([]issuedWire, 0, len(st.Issued))
		for _, is := range st.Issued {
			body.Issued = append(body.Issued, issuedWire{Key: strings.Clone(is.Key), Digest: b64.EncodeToString(is.Digest[:])})
		}
	}
	for _, a := range st.Answers {
		body.Answers = append(body.Answers, recordedWire{Key: strings.Clone(a.Key), Digest: b64.EncodeToString(a.Digest[:]), Answer: bytes.Clone(a.Answer)})
	}
	return body
}

// Seal signs st with the newest key, encrypting its content unless the
// sealer is in plaintext mode. It fills st.ID, st.IssuedAt and st.ExpiresAt.
//
// It is one function (over 100 lines): the record, the ciphertext, the
// claims and the token go through one reused buffer and one random read,
// step by step (the figures are beside the steps); split, the buffer,
// the nonce and the slices into them would cross calls and escape.
func (s *Sealer) Seal(st *State) (string, error) {
	if st.Method == "" || st.Target == "" {
		return "", errors.New("seal state: method and target are required")
	}
	key := s.ring.Load().signing()
	// 96 random bits of id, 128 more for a new flow's id, and the
	// content's nonce, in one read (one call into the kernel's generator
	// per state, not two).
	var rnd [12 + len(FlowID{}) + maxNonce]byte
	m := 12
	newFlow := st.Flow.ID.IsZero()
	if newFlow {
		m += len(FlowID{})
	}
	var nonce []byte
	if n := key.aead.NonceSize(); !s.plaintext && n <= maxNonce {
		nonce = rnd[m : m+n]
	}
	if _, err := rand.Read(rnd[:m+len(nonce)]); err != nil {
		return "", fmt.Errorf("seal state: %w", err)
	}
	id := rnd[:12]
	if newFlow {
		copy(st.Flow.ID[:], rnd[12:m])
	}
	// Times in whole milliseconds (see stateClaims): exp is exactly iat
	// plus the TTL.
	iat := s.now().UnixMilli()
	if iat <= 0 || iat/1000+int64(s.ttl/time.Second) > maxNumericDate {
		return "", fmt.Errorf("seal state: issued at %v with a TTL of %v, the state's times fall outside 1970 to 9999", time.UnixMilli(iat).UTC(), s.ttl)
	}
	exp := iat + s.ttl.Milliseconds()
	// The id is read from sid, not st.ID, below: a read of st's fields
	// into the AEAD would leak st's contents to the heap (see plainBody).
	sid := b64.EncodeToString(id)
	st.ID = sid
	st.IssuedAt = time.UnixMilli(iat)
	st.ExpiresAt = time.UnixMilli(exp)
	c := &stateClaims{ID: sid, IssuedAtMs: iat, ExpiresAtMs: exp}
	if s.aud != "" {
		c.Audience = []string{s.aud}
	}
	// The binary record, its ciphertext and the claims are written into
	// one buffer the sealer reuses: only the token is allocated. They were
	// four allocations (the record, the sealed content, enc's text and the
	// claims), about a fifth of Seal's instructions under valgrind
	// (BenchmarkMRTRTwoRounds, 2026-12-04).
	bp := s.scratch.Get(512)
	buf := (*bp)[:0]
	var ct []byte // the ciphertext, the token's fourth segment (see Open)
	var ntb [48]byte
	var nt []byte // the nonce and the tag, enc's content
	if s.plaintext {
		c.Body = plainBody(st)
	} else {
		buf = appendBinaryState(buf, st)
		plain := len(buf)
		n, tag := key.aead.NonceSize(), key.aead.Overhead()
		buf = slices.Grow(buf, n+plain+tag)
		// The sealed content (nonce, ciphertext, tag) follows the record
		// in the buffer, apart from it: AES-GCM writes it while reading
		// the record.
		sealed := buf[plain : plain+n]
		if len(nonce) == n {
			copy(sealed, nonce)
		} else if _, err := rand.Read(sealed); err != nil {
			return "", fmt.Errorf("seal state: %w", err)
		}
		sealed = key.aead.Seal(sealed, sealed[:n], buf[:plain], readOnly(sid))
		buf = buf[:plain+len(sealed)]
		// The claims carry the nonce and the tag; the ciphertext travels
		// once base64url-encoded after the signature, bound by the tag.
		ct = sealed[n : len(sealed)-tag]
		nt = append(append(ntb[:0], sealed[:n]...), sealed[len(sealed)-tag:]...)
	}
	// The JWS compact form, with the header precomputed per key, signed
	// HS256 with the key's pooled HMAC state (see macs); see verify for
	// why not Token.SignedString.
	from := len(buf)
	buf, err := c.appendMembers(buf)
	if err != nil {
		return "", fmt.Errorf("seal state: %w", err)
	}
	if nt != nil { // enc, written from its bytes (appendJSON writes c.Enc)
		buf = append(buf, `,"enc":"`...)
		buf = appendB64(buf, nt)
		buf = append(buf, '"')
	}
	buf = append(buf, '}')
	claims := buf[from:]
	signing := make([]byte, 0, len(key.header)+1+b64.EncodedLen(len(claims))+1+43+1+b64.EncodedLen(len(ct)))
	signing = append(signing, key.header...)
	signing = append(signing, '.')
	signing = appendB64(signing, claims)
	sig := key.hs256.sum(unsafe.String(unsafe.SliceData(signing), len(signing)))
	signing = append(signing, '.')
	signing = appendB64(signing, sig[:])
	if ct != nil {
		signing = append(signing, '.')
		signing = appendB64(signing, ct)
	}
	s.scratch.Put(bp, buf, maxScratch) // a rare huge state's buffer is not kept
	if len(signing) > s.maxSize {
		return "", fmt.Errorf("seal state: the requestState would be %d bytes, over the %d-byte limit; keep less in the payload and the answers", len(signing), s.maxSize)
	}
	// signing is not written again: the token is its bytes, not a copy
	// (one allocation and a copy of the whole token, which grows with
	// every answer the state carries).
	return unsafe.String(unsafe.SliceData(signing), len(signing)), nil
}

// maxNonce is the longest nonce Seal reads with the state's id (AES-GCM's
// is 12 bytes); a longer one is read on its own.
const maxNonce = 32

// maxScratch is the largest buffer Seal keeps for reuse.
const maxScratch = 64 << 10

// StateError says why a requestState was refused. It becomes a -32602
// error whose message carries the reason.
//
// The reason says enough for an honest client to act (malformed, expired,
// unknown key, signed for another deployment) and nothing of what the state
// was issued for: a state presented with another method, target, arguments
// or principal gets one reason for all four. Detail then says which, for
// the server's log only.
type StateError struct {
	// Reason is what the client reads after "invalid requestState: ".
	Reason string
	// Detail, when set, is the precise reason for the server's log (the
	// server logs it at debug level); it is never sent to the client.
	Detail string
	// Err is the underlying failure, if any.
	Err error
}

// Error returns the reason.
func (e *StateError) Error() string { return "invalid requestState: " + e.Reason }

// Unwrap returns the underlying error, if any.
func (e *StateError) Unwrap() error { return e.Err }

// RPCError converts the error to its wire form.
func (e *StateError) RPCError() *mcp.Error {
	return &mcp.Error{Code: mcp.InvalidParams, Message: e.Error()}
}

func refuse(reason string, err error) *StateError { return &StateError{Reason: reason, Err: err} }

// jwsHeader is the protected header of a requestState token.
type jwsHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

var strictB64 = base64.RawURLEncoding.Strict()

// readOnly returns s's bytes in place, for a callee that only reads them
// (a decoder's input, an AEAD's additional data): a conversion would copy
// them, and allocate once they pass 32 bytes.
func readOnly(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// verify checks a token in the JWS compact form: exactly three segments,
// strict base64url, a header naming HS256 (the only algorithm accepted)
// and a key of the ring, and an HS256 signature (HMAC-SHA256 with the
// key's pooled state, compared in constant time: see macs) that verifies
// with that key; only then are the claims decoded, and stateValidator
// checks exp, iat, nbf and aud.
//
// Why this splits the compact form itself rather than calling golang-jwt's
// Parser (whose signing method, verifier and audience validator it uses):
//   - Trust before work: the Parser decodes the claims, peer-controlled
//     JSON, before it checks the signature; here an unsigned token costs
//     a base64 decode of its header and one HMAC, nothing more.
//   - Cost, measured by BenchmarkVerifyPath on one token (2 vCPUs,
//     2026-12-03): Parser.ParseWithClaims 6.9 µs and 48 allocations,
//     verify 2.5 µs and 19; Token.SignedString 5.0 µs and 34, Seal's
//     signing 2.0 µs and 12. A two-round flow signs once and verifies
//     once: the library would add about 7.4 µs to the 78 µs of server
//     CPU the flow costs in bench/ (about a tenth), which is the margin
//     of the flow's 4x over mcp-go. Since 2026-12-04 verify makes 3
//     allocations (the claims and their two strings), the Parser 48.
//
// A token of encrypted content has a fourth segment after the signature,
// the ciphertext (see Open); it is returned, still base64url, and nothing
// else is done with it here.
func (s *Sealer) verify(token string) (*stateClaims, *derivedKey, string, error) {
	c := new(stateClaims)
	key, ct, _, err := s.verifyInto(token, c, nil)
	if err != nil {
		return nil, nil, "", err
	}
	return c, key, ct, nil
}

// verifyInto is verify, the claims decoded into c, which the caller
// provides: Open's, on its stack, where verify's were an allocation per
// state opened. With nt not nil, a token of four segments whose claims
// are in the form Seal writes has enc (the nonce and the tag) decoded
// into nt, its length returned, after the claims validated, and c.Enc
// left empty: enc is not copied into a string only to be decoded (an
// allocation per state opened; BenchmarkMRTRTwoRounds, 2026-12-04). Any
// other enc, or one that does not decode into nt, is in c.Enc as before
// (length 0), for Open to decode and refuse as it always has.
func (s *Sealer) verifyInto(token string, c *stateClaims, nt *[ntMax]byte) (*derivedKey, string, int, error) {
	h, rest, ok1 := strings.Cut(token, ".")
	payload, rest, ok2 := strings.Cut(rest, ".")
	sig, ct, four := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(ct, ".") || four && ct == "" {
		return nil, "", 0, refuse("malformed token: it needs three dot-separated segments (four with encrypted content)", nil)
	}
	// The header a Sealer writes is fixed per key ({"alg":"HS256","kid":…},
	// precomputed): a token whose header segment is one of them byte for
	// byte names HS256 and that key, with nothing to decode. Any other
	// header is decoded and checked.
	rg := s.ring.Load()
	key, ok := rg.byHeader(h)
	if !ok {
		hb, err := strictB64.DecodeString(h)
		if err != nil {
			return nil, "", 0, refuse("malformed token: the header is not base64url", err)
		}
		var hdr jwsHeader
		if err := strictjson.Unmarshal(hb, &hdr); err != nil {
			return nil, "", 0, refuse("malformed token: the header is not a JSON object", err)
		}
		if hdr.Alg != jwt.SigningMethodHS256.Alg() {
			return nil, "", 0, refuse(fmt.Sprintf("signature does not verify: signing method %s is invalid; only HS256 is accepted", describeAlg(hdr.Alg)), nil)
		}
		if hdr.Kid == "" {
			return nil, "", 0, refuse("cannot be verified: no key id", nil)
		}
		if key, ok = rg.lookup(hdr.Kid); !ok {
			return nil, "", 0, refuse("cannot be verified: unknown key id "+clip.Quote(hdr.Kid), nil)
		}
	}
	var sbuf [sha256.Size + 3]byte // a signature of another length decodes (and fails) here too
	sb, err := appendUnB64Strict(sbuf[:0], readOnly(sig))
	if err != nil {
		return nil, "", 0, refuse("malformed token: the signature is not base64url", err)
	}
	want := key.hs256.sum(token[:len(h)+1+len(payload)])
	if !hmac.Equal(sb, want[:]) {
		return nil, "", 0, refuse("signature does not verify", jwt.ErrSignatureInvalid)
	}
	var pbuf [384]byte // the claims a sealer writes, decoded on the stack
	pb, err := appendUnB64Strict(pbuf[:0], readOnly(payload))
	if err != nil {
		return nil, "", 0, refuse("malformed token: the claims are not base64url", err)
	}
	enc, canonical := readCanonicalClaimsRaw(pb, c)
	if !canonical {
		if err := c.UnmarshalJSON(bytes.Clone(pb)); err != nil { // a copy: the decoder may keep it
			return nil, "", 0, refuse("malformed token: the claims are not a JSON object", err)
		}
	}
	if err := s.validator.Validate(c); err != nil {
		return nil, "", 0, classify(err)
	}
	if canonical {
		if k, ok := decodeNonceTag(enc, nt, ct != ""); ok {
			return key, ct, k, nil
		}
		c.Enc = string(enc)
	}
	return key, ct, 0, nil
}

// ntMax is the most bytes of nonce and tag verifyInto decodes enc into
// (AES-GCM's are 12 and 16).
const ntMax = 48

// decodeNonceTag decodes enc, a token's nonce and tag (four segments),
// into nt when it fits and is base64url, and reports false otherwise
// (no nt, or a token of three segments, whose enc is the whole sealed
// content).
func decodeNonceTag(enc []byte, nt *[ntMax]byte, four bool) (int, bool) {
	if nt == nil || !four || len(enc) == 0 || b64.DecodedLen(len(enc)) > len(nt) {
		return 0, false
	}
	k, err := b64.Decode(nt[:], enc)
	if err != nil || k == 0 {
		return 0, false
	}
	return k, true
}

func describeAlg(alg string) string {
	if alg == "" {
		return "(none given)"
	}
	return clip.String(alg)
}

// Open verifies token and returns the state it carries. It checks, in
// this order and before reading anything the peer controls beyond the
// token: the size, the form, the algorithm (HS256 only), the key id, the
// signature, the expiry, the issue time and the audience; then it decrypts
// the content. It does not compare what the state is bound to: call
// State.Check with the request next. Any failure is a *StateError naming
// the reason: malformed, too large, unknown key, bad signature, wrong
// algorithm, expired, wrong audience or undecryptable.
func (s *Sealer) Open(token string) (*State, error) {
	if len(token) > s.maxSize {
		return nil, refuse(fmt.Sprintf("token is %d bytes, over the %d-byte limit", len(token), s.maxSize), nil)
	}
	var claims stateClaims
	c := &claims
	var ntb [ntMax]byte // the nonce and the tag, decoded on the stack
	key, ct, ntn, err := s.verifyInto(token, c, &ntb)
	if err != nil {
		return nil, err
	}
	st := &State{ID: c.ID}
	switch {
	case (c.Enc != "" || ntn > 0) && c.Body == nil:
		var sealed []byte // nonce, ciphertext, tag
		n := key.aead.NonceSize()
		if ct == "" {
			// A token of an earlier release: enc is the whole sealed
			// content, inside the signed claims.
			sealed, err = b64.DecodeString(c.Enc)
			if err != nil || len(sealed) < n {
				return nil, refuse("malformed encrypted content", err)
			}
		} else {
			// enc is the nonce and the tag, signed; the ciphertext is the
			// fourth segment. AES-GCM authenticates it under the key with
			// that tag, so it is the very ciphertext sealed with the
			// signed claims: another one fails to decrypt, as a changed
			// enc did when the claims held it all. The HMAC then covers
			// a few dozen bytes instead of the whole content, and the
			// content is base64url-encoded once instead of twice (the
			// state carried answers through both, about 103 bytes per
			// answer; see BenchmarkCarried in bench/).
			tag := key.aead.Overhead()
			nt := ntb[:ntn] // decoded by verifyInto, or:
			if ntn == 0 && b64.DecodedLen(len(c.Enc)) <= len(ntb) {
				var k int
				k, err = b64.Decode(ntb[:], readOnly(c.Enc))
				nt = ntb[:k]
			}
			if err != nil || len(nt) != n+tag {
				return nil, refuse("malformed encrypted content", err)
			}
			sealed = make([]byte, n, n+b64.DecodedLen(len(ct))+tag)
			copy(sealed, nt[:n])
			if sealed, err = appendUnB64Strict(sealed, readOnly(ct)); err != nil {
				return nil, refuse("malformed encrypted content", err)
			}
			sealed = append(sealed, nt[n:]...)
		}
		plain, err := key.aead.Open(sealed[n:n], sealed[:n], sealed[n:], readOnly(c.ID))
		if err != nil {
			return nil, refuse("encrypted content does not decrypt", err)
		}
		if err := readBinaryState(plain, st); err != nil {
			return nil, refuse("malformed content: "+err.Error(), err)
		}
	case ct != "":
		return nil, refuse("malformed token: a fourth segment without encrypted content", nil)
	case c.Enc == "" && c.Body != nil:
		if err := c.Body.into(st); err != nil {
			return nil, err
		}
	default:
		return nil, refuse("malformed token: it needs exactly one of st and enc", nil)
	}
	st.IssuedAt, st.ExpiresAt = c.times()
	st.Leeway = s.leeway
	return st, nil
}

// Check checks that st, from Open, was issued for this request: the same
// method, target and principal, compared first, then the same arguments,
// which are canonicalised (ArgumentsDigest) only when the rest matches.
// It returns the digest of args. A mismatch is a *StateError saying which
// part differs; arguments that have no canonical form (invalid JSON, a
// duplicate key) are another error.
func (st *State) Check(method, target, principal string, args json.RawMessage) (Digest, error) {
	if err := st.checkRequest(method, target, principal); err != nil {
		return Digest{}, err
	}
	d, err := ArgumentsDigest(args)
	if err != nil {
		return Digest{}, err
	}
	if err := st.checkArguments(d); err != nil {
		return Digest{}, err
	}
	return d, nil
}

func (st *State) checkRequest(method, target, principal string) error {
	// One reason toward the client for every mismatch: telling them apart
	// would let a holder of someone's state confirm its arguments or
	// principal by guessing, and would echo what it was issued for. The
	// difference goes to Detail, for the server's log.
	var detail string
	switch {
	case st.Method != method:
		detail = fmt.Sprintf("it was issued for %s, not %s", clip.String(st.Method), clip.String(method))
	case st.Target != target:
		detail = fmt.Sprintf("it was issued for %s, not %s", clip.Quote(st.Target), clip.Quote(target))
	case st.Principal != principal:
		detail = fmt.Sprintf("it was issued to principal %s, not %s", clip.Quote(st.Principal), clip.Quote(principal))
	default:
		return nil
	}
	return &StateError{Reason: notThisRequest, Detail: detail}
}

func (st *State) checkArguments(d Digest) error {
	if st.Arguments != d {
		return &StateError{Reason: notThisRequest, Detail: "it was issued for different arguments"}
	}
	return nil
}

// notThisRequest is the reason given for a state bound to another request.
const notThisRequest = "it was not issued for this request (its method, target, arguments and principal must all match)"

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
	var se *StateError
	if errors.As(err, &se) {
		return se // stateValidator's own reasons
	}
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
