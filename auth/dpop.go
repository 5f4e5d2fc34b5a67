package auth

// DPoP at the resource server (RFC 9449, SEP-1932): a token bound to a
// key ("cnf": {"jkt": thumbprint}) is accepted only with the DPoP scheme
// and a proof, signed by that key, for this request.
//
// The proof's JWK, its RFC 7638 thumbprint and its signature are handled
// by github.com/go-jose/go-jose/v4: a maintained JOSE library, already in
// the module graph (zitadel/oidc uses it), whose compact parser takes the
// algorithms allowed and refuses a "jwk" header with private parameters,
// and whose JSONWebKey computes the thumbprint of the key types JWS uses
// (RSA, EC, OKP) as RFC 7638 says, without code of our own for each one.
// golang-jwt, which verifies the access tokens, has no JWK type.
//
// The checks are ordered cost before trust: sizes and counts first, then
// the header and claims as JSON (no crypto), the access token's hash, the
// nonce (an HMAC), then the token (cached), the key's thumbprint, the
// signature, and last the replay ledger (a round trip to Redis for a
// fleet), which only a proof that verified may write to.

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/baton-mcp/baton/server"
)

const (
	// dpopWindow is how far a proof's iat may be from now, either way
	// (SEP-1932: ±5 minutes). It has no leeway of its own: it is one.
	dpopWindow = 5 * time.Minute
	// maxProofBytes bounds a DPoP header: a proof with an RSA-4096 key is
	// about 1.5 KB.
	maxProofBytes = 4 << 10
	// maxJTIBytes bounds a proof's jti (RFC 9449 suggests 96 bits of
	// randomness; a UUID is 36 characters).
	maxJTIBytes = 128
	// nonceRotation is how long a server nonce is current; the previous
	// one is accepted too, so a nonce lives between one and two periods.
	nonceRotation = 5 * time.Minute
	// replayCapacity bounds the proofs the in-memory replay ledger holds.
	// A full ledger of unexpired proofs refuses new ones rather than
	// forget one that could then be replayed.
	replayCapacity = 100000
)

// Codes of DPoP refusals (RFC 9449 §7.1, §9).
const (
	codeInvalidProof = "invalid_dpop_proof"
	codeUseNonce     = "use_dpop_nonce"
)

func invalidProof(reason string, err error) *Error {
	return &Error{Code: codeInvalidProof, Reason: reason, Err: err, dpop: true}
}

// proofHeader is the part of a proof's JOSE header read before the
// signature is checked.
type proofHeader struct {
	Typ string          `json:"typ"`
	Alg string          `json:"alg"`
	JWK json.RawMessage `json:"jwk"`
}

// proofClaims are a proof's claims.
type proofClaims struct {
	JTI   string   `json:"jti"`
	HTM   string   `json:"htm"`
	HTU   string   `json:"htu"`
	IAT   *float64 `json:"iat"`
	ATH   string   `json:"ath"`
	Nonce string   `json:"nonce"`
}

// dpopRequest is what a proof is checked against.
type dpopRequest struct {
	proofs []string // the DPoP header's values
	method string
	token  string
}

// checkedProof is a proof that passed the checks made without crypto.
type checkedProof struct {
	jws    string
	alg    jose.SignatureAlgorithm
	claims proofClaims
}

// precheckProof makes the checks of a proof that need no key: one header,
// its size, the typ, the alg, the claims, htm, htu, iat, ath and the
// nonce. now is the resource server's clock.
func (rs *ResourceServer) precheckProof(req dpopRequest, now time.Time) (*checkedProof, *Error) {
	switch len(req.proofs) {
	case 0:
		return nil, invalidProof("a DPoP proof is required with the DPoP scheme", nil)
	case 1:
	default:
		return nil, invalidProof("more than one DPoP header", nil)
	}
	proof := req.proofs[0]
	if len(proof) > maxProofBytes {
		return nil, invalidProof("the DPoP proof is too long", nil)
	}
	if strings.Count(proof, ".") != 2 {
		return nil, invalidProof("the DPoP proof is not a JWT", nil)
	}
	h64, rest, _ := strings.Cut(proof, ".")
	p64, sig64, _ := strings.Cut(rest, ".")
	if sig64 == "" {
		return nil, invalidProof("the DPoP proof is not signed", nil)
	}
	var h proofHeader
	if err := decodeSegment(h64, &h); err != nil {
		return nil, invalidProof("the DPoP proof's header is malformed", err)
	}
	if !strings.EqualFold(h.Typ, "dpop+jwt") {
		return nil, invalidProof(`the DPoP proof's typ is not "dpop+jwt"`, nil)
	}
	if !rs.proofAlg(h.Alg) {
		return nil, invalidProof("the DPoP proof's algorithm is not accepted", nil)
	}
	if len(h.JWK) == 0 || h.JWK[0] != '{' {
		return nil, invalidProof("the DPoP proof has no jwk", nil)
	}
	var c proofClaims
	if err := decodeSegment(p64, &c); err != nil {
		return nil, invalidProof("the DPoP proof's claims are malformed", err)
	}
	switch {
	case c.JTI == "":
		return nil, invalidProof("the DPoP proof has no jti", nil)
	case len(c.JTI) > maxJTIBytes:
		return nil, invalidProof("the DPoP proof's jti is too long", nil)
	case c.HTM == "":
		return nil, invalidProof("the DPoP proof has no htm", nil)
	case c.HTM != req.method:
		return nil, invalidProof("the DPoP proof is for another HTTP method", nil)
	case c.HTU == "":
		return nil, invalidProof("the DPoP proof has no htu", nil)
	case !sameHTU(c.HTU, rs.htu):
		return nil, invalidProof("the DPoP proof is for another URL", nil)
	case c.IAT == nil || math.IsNaN(*c.IAT) || math.IsInf(*c.IAT, 0):
		return nil, invalidProof("the DPoP proof has no iat", nil)
	}
	// The bound comes before the conversion: a float beyond int64's
	// nanoseconds (about 9.2e9 s) has no defined time.Duration.
	if *c.IAT > 1e9*9 || *c.IAT < 0 {
		return nil, invalidProof("the DPoP proof's iat is not within 5 minutes of now", nil)
	}
	iat := time.Unix(0, 0).Add(time.Duration(*c.IAT * float64(time.Second)))
	if iat.Before(now.Add(-dpopWindow)) || iat.After(now.Add(dpopWindow)) {
		return nil, invalidProof("the DPoP proof's iat is not within 5 minutes of now", nil)
	}
	if c.ATH == "" {
		return nil, invalidProof("the DPoP proof has no ath", nil)
	}
	sum := sha256.Sum256([]byte(req.token))
	if c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) {
		return nil, invalidProof("the DPoP proof's ath is not the access token's hash", nil)
	}
	if rs.nonceKey != nil && !rs.validNonce(c.Nonce, now) {
		reason := "a DPoP nonce is required"
		if c.Nonce != "" {
			reason = "the DPoP nonce is not the server's, or has expired"
		}
		return nil, &Error{Code: codeUseNonce, Reason: reason, dpop: true}
	}
	return &checkedProof{jws: proof, alg: jose.SignatureAlgorithm(h.Alg), claims: c}, nil
}

// verifyProof checks the key and the signature of a prechecked proof:
// the key's thumbprint must be jkt, the token's cnf.jkt. It returns the
// ledger entry that makes the proof single use.
func (rs *ResourceServer) verifyProof(p *checkedProof, jkt string) (string, *Error) {
	jws, err := jose.ParseSignedCompact(p.jws, []jose.SignatureAlgorithm{p.alg})
	if err != nil {
		return "", invalidProof("the DPoP proof is malformed", err)
	}
	if len(jws.Signatures) != 1 {
		return "", invalidProof("the DPoP proof is malformed", nil)
	}
	key := jws.Signatures[0].Protected.JSONWebKey
	if key == nil || !key.Valid() || !key.IsPublic() {
		return "", invalidProof("the DPoP proof's jwk is not a public key", nil)
	}
	if k, ok := key.Key.(*rsa.PublicKey); ok && k.N.BitLen() < 2048 {
		return "", invalidProof("the DPoP proof's RSA key is shorter than 2048 bits", nil)
	}
	tp, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", invalidProof("the DPoP proof's jwk has no thumbprint", err)
	}
	if base64.RawURLEncoding.EncodeToString(tp) != jkt {
		return "", invalid("the token is bound to another DPoP key", nil).asDPoP()
	}
	if _, err := jws.Verify(key.Key); err != nil {
		return "", invalidProof("the DPoP proof's signature does not verify", err)
	}
	id := sha256.Sum256([]byte(jkt + "\x00" + p.claims.JTI))
	return "dpop:" + hex.EncodeToString(id[:16]), nil
}

// authenticateDPoP verifies a token presented with the DPoP scheme and
// the request's proof.
func (rs *ResourceServer) authenticateDPoP(r *http.Request, token string) (*server.Grant, error) {
	now := rs.cfg.Now()
	if token == "" || len(token) > rs.cfg.MaxTokenBytes {
		return nil, invalid("the token is empty or too long", nil).asDPoP()
	}
	p, ae := rs.precheckProof(dpopRequest{proofs: r.Header.Values("DPoP"), method: r.Method, token: token}, now)
	if ae != nil {
		return nil, ae
	}
	g, err := rs.Verify(r.Context(), token)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e.asDPoP()
		}
		return nil, err
	}
	jkt := boundKey(g)
	if jkt == "" {
		return nil, invalid("the token is not bound to a DPoP key", nil).asDPoP()
	}
	id, ae := rs.verifyProof(p, jkt)
	if ae != nil {
		return nil, ae
	}
	iat := time.Unix(0, 0).Add(time.Duration(*p.claims.IAT * float64(time.Second)))
	// The proof is acceptable until iat+window by this clock; an instance
	// whose clock is behind by the leeway still finds the entry.
	until := iat.Add(dpopWindow + rs.cfg.Leeway)
	if err := rs.replay.Redeem(r.Context(), id, until); err != nil {
		if errors.Is(err, server.ErrAlreadyRedeemed) {
			return nil, invalidProof("the DPoP proof was used before", nil)
		}
		return nil, invalidProof("the DPoP proof could not be checked for replay now", fmt.Errorf("DPoP replay ledger: %w", err))
	}
	return g, nil
}

// boundKey is the cnf.jkt of a grant's token, "" when it is not bound.
func boundKey(g *server.Grant) string {
	cnf, _ := g.Claims["cnf"].(map[string]any)
	jkt, _ := cnf["jkt"].(string)
	return jkt
}

// asDPoP marks a refusal of a request made with the DPoP scheme: its
// challenge is a DPoP one.
func (e *Error) asDPoP() *Error {
	c := *e
	c.dpop = true
	return &c
}

// decodeSegment decodes a base64url JSON segment of at most
// maxProofBytes into v.
func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// proofAlg reports whether alg may sign a proof: one of Config.Algorithms
// (asymmetric only, as for access tokens).
func (rs *ResourceServer) proofAlg(alg string) bool {
	for _, a := range rs.cfg.Algorithms {
		if a == alg {
			return true
		}
	}
	return false
}

// normalHTU is a URL as htu is compared (RFC 9449 §4.3: without query and
// fragment, RFC 3986 §6.2.2 and §6.2.3 normalisation): scheme and host in
// lower case, the default port dropped, an empty path as "/", and
// percent-encoding normalised. ok is false for what is not an absolute
// http(s) URL.
func normalHTU(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" || u.User != nil {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + normalEscapes(path), true
}

// normalEscapes decodes the percent-encoded unreserved characters of an
// escaped path and writes the other escapes' hex digits in upper case
// (RFC 3986 §6.2.2.1, §6.2.2.2).
func normalEscapes(p string) string {
	if !strings.Contains(p, "%") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' || i+2 >= len(p) {
			b.WriteByte(p[i])
			continue
		}
		hi, lo := unhex(p[i+1]), unhex(p[i+2])
		if hi < 0 || lo < 0 {
			b.WriteByte(p[i])
			continue
		}
		c := byte(hi<<4 | lo)
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
		i += 2
	}
	return b.String()
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// sameHTU reports whether a proof's htu names the URL want (normalised).
func sameHTU(htu, want string) bool {
	got, ok := normalHTU(htu)
	return ok && got == want
}

// nonce returns the server nonce current at now: the period's number and
// an HMAC of it, base64url. Any instance with the same key makes and
// checks the same nonces: nothing is stored.
func (rs *ResourceServer) nonce(now time.Time) string {
	return rs.nonceFor(now.Unix() / int64(nonceRotation/time.Second))
}

func (rs *ResourceServer) nonceFor(period int64) string {
	var b [8 + 16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(period))
	m := hmac.New(sha256.New, rs.nonceKey)
	m.Write([]byte("baton dpop nonce\x00"))
	m.Write(b[:8])
	copy(b[8:], m.Sum(nil))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// validNonce reports whether n is the nonce of the current or the
// previous period.
func (rs *ResourceServer) validNonce(n string, now time.Time) bool {
	if len(n) != base64.RawURLEncoding.EncodedLen(24) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(n)
	if err != nil {
		return false
	}
	period := int64(binary.BigEndian.Uint64(b[:8]))
	cur := now.Unix() / int64(nonceRotation/time.Second)
	if period != cur && period != cur-1 {
		return false
	}
	return hmac.Equal([]byte(rs.nonceFor(period)), []byte(n))
}

// dpopAlgs is the algs parameter of a DPoP challenge.
func (rs *ResourceServer) dpopAlgs() string { return strings.Join(rs.cfg.Algorithms, " ") }

// replayLedger is the in-memory DPoP replay ledger: bounded, expiring.
type replayLedger struct {
	mu   sync.Mutex
	max  int
	m    map[string]time.Time
	now  func() time.Time
	next time.Time // the earliest expiry at the last sweep
}

func newReplayLedger(max int, now func() time.Time) *replayLedger {
	return &replayLedger{max: max, m: make(map[string]time.Time), now: now}
}

var errReplayFull = errors.New("the in-memory DPoP replay ledger is full")

// Redeem implements server.Ledger.
func (l *replayLedger) Redeem(ctx context.Context, id string, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if exp, ok := l.m[id]; ok && now.Before(exp) {
		return server.ErrAlreadyRedeemed
	}
	if len(l.m) >= l.max && !now.Before(l.next) {
		// Sweep only when something may have expired since the last
		// sweep: a full ledger of live entries is not swept per request.
		l.next = time.Time{}
		for k, exp := range l.m {
			if !now.Before(exp) {
				delete(l.m, k)
			} else if l.next.IsZero() || exp.Before(l.next) {
				l.next = exp
			}
		}
	}
	if len(l.m) >= l.max {
		return errReplayFull
	}
	l.m[id] = until
	return nil
}
