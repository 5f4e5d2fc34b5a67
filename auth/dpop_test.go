package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-mcp/baton/server"
)

// The proofs of these tests are minted with go-jose, the library the
// verifier uses for keys and signatures: examples/oauth mints them
// against a real authorization server too, and the conformance suite's
// DPoP scenario (run locally, see docs/authorization.md) with jose (JS).

const testResource = "https://mcp.example.com/mcp"

// dpopKey is a client's DPoP key pair.
type dpopKey struct {
	priv *ecdsa.PrivateKey
	jkt  string
}

func newDPoPKey(t testing.TB) dpopKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwk := jose.JSONWebKey{Key: &k.PublicKey}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return dpopKey{priv: k, jkt: base64.RawURLEncoding.EncodeToString(tp)}
}

// proofSpec says how a test proof differs from a good one.
type proofSpec struct {
	htm, htu, typ string
	token         string // the token whose hash is ath ("" for none)
	ath           *string
	iat           *int64
	nonce         string
	omit          []string // claims or header parameters left out
	privateJWK    bool
}

func ath(token string) string {
	s := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(s[:])
}

// mint returns a proof signed by k.
func (k dpopKey) mint(t testing.TB, s proofSpec) string {
	t.Helper()
	if s.htm == "" {
		s.htm = http.MethodPost
	}
	if s.htu == "" {
		s.htu = testResource
	}
	if s.typ == "" {
		s.typ = "dpop+jwt"
	}
	claims := map[string]any{"jti": newJTI(t), "htm": s.htm, "htu": s.htu, "iat": time.Now().Unix()}
	if s.iat != nil {
		claims["iat"] = *s.iat
	}
	if s.token != "" {
		claims["ath"] = ath(s.token)
	}
	if s.ath != nil {
		claims["ath"] = *s.ath
	}
	if s.nonce != "" {
		claims["nonce"] = s.nonce
	}
	omitted := func(n string) bool {
		for _, o := range s.omit {
			if o == n {
				return true
			}
		}
		return false
	}
	for _, o := range s.omit {
		delete(claims, o)
	}
	opts := &jose.SignerOptions{}
	if !omitted("typ") {
		opts = opts.WithType(jose.ContentType(s.typ))
	}
	switch {
	case omitted("jwk"):
	case s.privateJWK:
		opts = opts.WithHeader("jwk", jose.JSONWebKey{Key: k.priv})
	default:
		opts.EmbedJWK = true
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.priv}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	obj, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newJTI(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// dpopServer is inlineServer's configuration with cfg applied, its
// token signer and a handler that records the grant.
type dpopServer struct {
	rs   *ResourceServer
	key  *rsa.PrivateKey
	h    http.Handler
	seen *server.Grant
}

func newDPoPServer(t *testing.T, mod func(*Config)) *dpopServer {
	t.Helper()
	base, key := inlineServer(t)
	cfg := base.cfg
	cfg.Now = nil
	cfg.ChallengeScopes = nil
	if mod != nil {
		mod(&cfg)
	}
	rs, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.Close)
	d := &dpopServer{rs: rs, key: key}
	d.h = rs.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.seen = server.GrantFromContext(r.Context())
	}))
	return d
}

// token signs an access token bound to jkt ("" for an unbound one).
func (d *dpopServer) token(t testing.TB, jkt string, mod func(jwt.MapClaims)) string {
	t.Helper()
	c := jwt.MapClaims{"iss": "https://as.example.com", "sub": "alice", "aud": testResource,
		"exp": time.Now().Add(time.Hour).Unix(), "scope": "a"}
	if jkt != "" {
		c["cnf"] = map[string]any{"jkt": jkt}
	}
	if mod != nil {
		mod(c)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	tok.Header["kid"] = "k1"
	tok.Header["typ"] = "at+jwt"
	s, err := tok.SignedString(d.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do sends a POST to the protected endpoint with the Authorization value
// and the DPoP header values.
func (d *dpopServer) do(authz string, proofs ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, testResource, nil)
	req.Header.Set("Authorization", authz)
	for _, p := range proofs {
		req.Header.Add("DPoP", p)
	}
	rec := httptest.NewRecorder()
	d.seen = nil
	d.h.ServeHTTP(rec, req)
	return rec
}

func ptr[T any](v T) *T { return &v }

// TestDPoPProofs is the contract of the conformance scenario
// auth/dpop-server-validation (SEP-1932): a valid bound token and proof
// are accepted; each defect, one at a time, is refused with 401 and a
// DPoP challenge naming the algorithms.
func TestDPoPProofs(t *testing.T) {
	d := newDPoPServer(t, nil)
	k := newDPoPKey(t)
	tok := d.token(t, k.jkt, nil)
	if rec := d.do("DPoP "+tok, k.mint(t, proofSpec{token: tok})); rec.Code != 200 || d.seen == nil || d.seen.Subject != "alice" {
		t.Fatalf("valid proof: %d %s", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	foreign := newDPoPKey(t)
	now := time.Now().Unix()
	hs := func() string {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: make([]byte, 32)},
			(&jose.SignerOptions{}).WithType("dpop+jwt").WithHeader("jwk", jose.JSONWebKey{Key: &k.priv.PublicKey}))
		if err != nil {
			t.Fatal(err)
		}
		obj, _ := signer.Sign([]byte(fmt.Sprintf(`{"jti":"x","htm":"POST","htu":%q,"iat":%d,"ath":%q}`, testResource, now, ath(tok))))
		s, _ := obj.CompactSerialize()
		return s
	}
	none := func() string {
		jwk, _ := json.Marshal(jose.JSONWebKey{Key: &k.priv.PublicKey})
		h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"dpop+jwt","jwk":` + string(jwk) + `}`))
		p := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"jti":"y","htm":"POST","htu":%q,"iat":%d,"ath":%q}`, testResource, now, ath(tok))))
		return h + "." + p + "."
	}
	tampered := func() string {
		p := k.mint(t, proofSpec{token: tok})
		i := strings.LastIndexByte(p, '.') + 1
		c := byte('A')
		if p[i] == 'A' {
			c = 'B'
		}
		return p[:i] + string(c) + p[i+1:]
	}
	wrongAud := d.token(t, k.jkt, func(c jwt.MapClaims) { c["aud"] = "https://not-this-server.example.com/mcp" })
	mismatch := d.token(t, foreign.jkt, nil)
	unbound := d.token(t, "", nil)
	for _, c := range []struct {
		name, authz string
		proofs      []string
		reason      string
	}{
		{"tampered signature", "DPoP " + tok, []string{tampered()}, "signature does not verify"},
		{"missing jti", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, omit: []string{"jti"}})}, "no jti"},
		{"wrong typ", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, typ: "jwt"})}, "typ"},
		{"missing typ", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, omit: []string{"typ"}})}, "typ"},
		{"htu mismatch", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, htu: "https://wrong.example.com/mcp"})}, "another URL"},
		{"htm mismatch", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, htm: "GET"})}, "another HTTP method"},
		{"private key in jwk", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, privateJWK: true})}, "malformed"},
		{"wrong ath", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, ath: ptr("not-the-right-hash")})}, "ath"},
		{"duplicate header", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok}), k.mint(t, proofSpec{token: tok})}, "more than one"},
		{"no header", "DPoP " + tok, nil, "proof is required"},
		{"missing htm", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, omit: []string{"htm"}})}, "no htm"},
		{"missing htu", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, omit: []string{"htu"}})}, "no htu"},
		{"missing iat", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, omit: []string{"iat"}})}, "no iat"},
		{"missing jwk", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, omit: []string{"jwk"}})}, "no jwk"},
		{"ath absent", "DPoP " + tok, []string{k.mint(t, proofSpec{})}, "no ath"},
		{"not a JWT", "DPoP " + tok, []string{"this-is-not-a-jwt"}, "not a JWT"},
		{"cnf.jkt mismatch", "DPoP " + mismatch, []string{k.mint(t, proofSpec{token: mismatch})}, "another DPoP key"},
		{"stale iat", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, iat: ptr(now - 303)})}, "iat"},
		{"future iat", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, iat: ptr(now + 303)})}, "iat"},
		{"iat past int64 nanoseconds", "DPoP " + tok, []string{k.mint(t, proofSpec{token: tok, iat: ptr(int64(1) << 40)})}, "iat"},
		{"alg none", "DPoP " + tok, []string{none()}, "not signed"},
		{"alg HS256", "DPoP " + tok, []string{hs()}, "algorithm"},
		{"wrong audience", "DPoP " + wrongAud, []string{k.mint(t, proofSpec{token: wrongAud})}, "not for this resource"},
		{"unbound token", "DPoP " + unbound, []string{k.mint(t, proofSpec{token: unbound})}, "not bound"},
	} {
		rec := d.do(c.authz, c.proofs...)
		ch := rec.Header().Get("WWW-Authenticate")
		if rec.Code != 401 || d.seen != nil || !strings.HasPrefix(ch, "DPoP ") || !strings.Contains(ch, `algs="RS256`) ||
			!strings.Contains(ch, c.reason) || !strings.Contains(rec.Body.String(), c.reason) {
			t.Errorf("%s: %d %q %s", c.name, rec.Code, ch, rec.Body)
		}
	}
	// A bound token under the Bearer scheme is refused (RFC 9449 §7.2),
	// with or without a proof.
	for _, proofs := range [][]string{nil, {k.mint(t, proofSpec{token: tok})}} {
		if rec := d.do("Bearer "+tok, proofs...); rec.Code != 401 || d.seen != nil ||
			!strings.Contains(rec.Header().Get("WWW-Authenticate"), "bound to a DPoP key") {
			t.Errorf("bearer scheme: %d %q", rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
	}
	// Within the window either way, the proof is accepted.
	for _, iat := range []int64{now - 290, now + 290} {
		if rec := d.do("DPoP "+tok, k.mint(t, proofSpec{token: tok, iat: ptr(iat)})); rec.Code != 200 {
			t.Errorf("iat %+d s: %d %s", iat-now, rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
	}
	// A request without a token is challenged with both schemes.
	req := httptest.NewRequest(http.MethodPost, testResource, nil)
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, req)
	if v := rec.Header().Values("WWW-Authenticate"); rec.Code != 401 || len(v) != 2 || !strings.HasPrefix(v[0], "Bearer ") || !strings.HasPrefix(v[1], "DPoP ") {
		t.Errorf("no token: %d %q", rec.Code, v)
	}
	if md := d.rs.metadataDoc(); len(md.DPoPSigningAlgValuesSupported) == 0 || md.DPoPSigningAlgValuesSupported[0] != "RS256" {
		t.Errorf("metadata: %+v", md)
	}
}

// TestDPoPReplay: a proof is accepted once, here and (with a shared
// ledger) on another instance.
func TestDPoPReplay(t *testing.T) {
	shared := server.NewMemoryLedger(nil)
	a := newDPoPServer(t, func(c *Config) { c.DPoPReplay = shared })
	b := newDPoPServer(t, func(c *Config) { c.DPoPReplay = shared; c.JWKS = a.rs.cfg.JWKS })
	b.key = a.key
	k := newDPoPKey(t)
	tok := a.token(t, k.jkt, nil)
	p := k.mint(t, proofSpec{token: tok})
	if rec := a.do("DPoP "+tok, p); rec.Code != 200 {
		t.Fatalf("first use: %d %s", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	for name, d := range map[string]*dpopServer{"same instance": a, "another instance": b} {
		if rec := d.do("DPoP "+tok, p); rec.Code != 401 || !strings.Contains(rec.Header().Get("WWW-Authenticate"), "used before") {
			t.Errorf("%s: replay %d %s", name, rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
	}
	if rec := b.do("DPoP "+tok, k.mint(t, proofSpec{token: tok})); rec.Code != 200 {
		t.Fatalf("a fresh proof on the other instance: %d %s", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
}

// TestReplayLedgerBounded: the in-memory ledger refuses a replay until the
// entry expires, holds at most its capacity, and frees expired entries.
func TestReplayLedgerBounded(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newReplayLedger(3, func() time.Time { return now })
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if err := l.Redeem(ctx, fmt.Sprint(i), now.Add(time.Duration(i+1)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Redeem(ctx, "0", now.Add(time.Hour)); !errors.Is(err, server.ErrAlreadyRedeemed) {
		t.Fatalf("replay: %v", err)
	}
	if err := l.Redeem(ctx, "3", now.Add(time.Hour)); !errors.Is(err, errReplayFull) {
		t.Fatalf("full of live entries: %v", err)
	}
	now = now.Add(90 * time.Second) // "0" expired
	if err := l.Redeem(ctx, "3", now.Add(time.Hour)); err != nil {
		t.Fatalf("after an expiry: %v", err)
	}
	if err := l.Redeem(ctx, "0", now.Add(time.Hour)); !errors.Is(err, errReplayFull) {
		t.Fatalf("full again: %v", err)
	}
	if len(l.m) != 3 {
		t.Fatalf("holds %d", len(l.m))
	}
}

// TestDPoPNonce is the optional nonce flow of the scenario: without a
// nonce, 401 use_dpop_nonce and DPoP-Nonce; the retry with it passes (and
// carries the next one); a wrong nonce is refused; the previous period's
// nonce is accepted, an older one is not; another instance with the same
// key accepts this one's nonces.
func TestDPoPNonce(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	now := time.Now()
	clock := func() time.Time { return now }
	d := newDPoPServer(t, func(c *Config) { c.DPoPNonceKey = key; c.Now = clock })
	k := newDPoPKey(t)
	tok := d.token(t, k.jkt, nil)
	rec := d.do("DPoP "+tok, k.mint(t, proofSpec{token: tok}))
	nonce := rec.Header().Get("DPoP-Nonce")
	if rec.Code != 401 || nonce == "" || !strings.Contains(rec.Header().Get("WWW-Authenticate"), `error="use_dpop_nonce"`) {
		t.Fatalf("no nonce: %d %q %q", rec.Code, rec.Header().Get("WWW-Authenticate"), nonce)
	}
	rec = d.do("DPoP "+tok, k.mint(t, proofSpec{token: tok, nonce: nonce}))
	if rec.Code != 200 || rec.Header().Get("DPoP-Nonce") == "" {
		t.Fatalf("with the nonce: %d %s", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	if rec := d.do("DPoP "+tok, k.mint(t, proofSpec{token: tok, nonce: "definitely-not-the-server-nonce"})); rec.Code != 401 ||
		!strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "DPoP ") {
		t.Fatalf("wrong nonce: %d", rec.Code)
	}
	other := newDPoPServer(t, func(c *Config) { c.DPoPNonceKey = key; c.Now = clock; c.JWKS = d.rs.cfg.JWKS })
	if rec := other.do("DPoP "+tok, k.mint(t, proofSpec{token: tok, nonce: nonce})); rec.Code != 200 {
		t.Fatalf("another instance: %d %s", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	if !d.rs.validNonce(d.rs.nonce(now.Add(-nonceRotation)), now) || d.rs.validNonce(d.rs.nonce(now.Add(-2*nonceRotation)), now) {
		t.Fatal("a nonce must live for the current and the previous period only")
	}
	otherKey := newDPoPServer(t, func(c *Config) { c.DPoPNonceKey = []byte(strings.Repeat("x", 32)) })
	if otherKey.rs.validNonce(nonce, now) {
		t.Fatal("a nonce of another key was accepted")
	}
	if _, err := New(context.Background(), Config{Resource: testResource, AuthorizationServers: []string{"https://as.example.com"},
		JWKS: d.rs.cfg.JWKS, DPoPNonceKey: []byte("short")}); err == nil {
		t.Fatal("a short nonce key was accepted")
	}
}

func TestNormalHTU(t *testing.T) {
	want, _ := normalHTU("https://mcp.example.com/mcp")
	for _, s := range []string{"https://mcp.example.com/mcp", "HTTPS://MCP.Example.com/mcp", "https://mcp.example.com:443/mcp",
		"https://mcp.example.com/mcp?x=1", "https://mcp.example.com/mcp#f", "https://mcp.example.com/%6Dcp"} {
		if !sameHTU(s, want) {
			t.Errorf("%q should name %q", s, want)
		}
	}
	for _, s := range []string{"http://mcp.example.com/mcp", "https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp/",
		"https://mcp.example.com/MCP", "https://other.example.com/mcp", "mcp.example.com/mcp", "/mcp", "https://u@mcp.example.com/mcp"} {
		if sameHTU(s, want) {
			t.Errorf("%q should not name %q", s, want)
		}
	}
	if got, _ := normalHTU("http://h"); got != "http://h/" {
		t.Errorf("empty path: %q", got)
	}
	if got, _ := normalHTU("http://h/a%2fb"); got != "http://h/a%2Fb" {
		t.Errorf("escapes: %q", got)
	}
}
