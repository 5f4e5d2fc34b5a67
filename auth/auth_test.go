package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-mcp/baton/server"
)

// The tests against a real authorization server (zitadel/oidc's op) and
// the official go-sdk client are in examples/oauth, a module of its own,
// so that neither becomes a dependency of this one.

func TestMetadataURL(t *testing.T) {
	for resource, want := range map[string]string{
		"https://mcp.example.com/mcp":        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com/a/b/":       "https://mcp.example.com/.well-known/oauth-protected-resource/a/b",
		"https://mcp.example.com":            "https://mcp.example.com/.well-known/oauth-protected-resource",
		"https://mcp.example.com/":           "https://mcp.example.com/.well-known/oauth-protected-resource",
		"http://127.0.0.1:8080/mcp?tenant=x": "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp?tenant=x",
	} {
		got, err := metadataURLOf(resource)
		if err != nil || got != want {
			t.Errorf("MetadataURL(%q) = %q, %v; want %q", resource, got, err, want)
		}
	}
	if _, err := metadataURLOf("/mcp"); err == nil {
		t.Error("a relative resource was accepted")
	}
}

func TestAuthorizationServerMetadataURLs(t *testing.T) {
	got, err := metadataURLs("https://as.example.com/tenant1")
	if err != nil {
		t.Fatal(err)
	}
	want := "https://as.example.com/.well-known/oauth-authorization-server/tenant1 https://as.example.com/.well-known/openid-configuration/tenant1 https://as.example.com/tenant1/.well-known/openid-configuration"
	if strings.Join(got, " ") != want {
		t.Fatalf("got %v", got)
	}
	got, _ = metadataURLs("https://as.example.com")
	if strings.Join(got, " ") != "https://as.example.com/.well-known/oauth-authorization-server https://as.example.com/.well-known/openid-configuration" {
		t.Fatalf("got %v", got)
	}
}

func TestConfigErrors(t *testing.T) {
	ok := Config{Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://as.example.com"}}
	for name, mod := range map[string]func(*Config){
		"no resource":            func(c *Config) { c.Resource = "" },
		"relative resource":      func(c *Config) { c.Resource = "/mcp" },
		"resource with fragment": func(c *Config) { c.Resource = "https://mcp.example.com/mcp#x" },
		"no issuer":              func(c *Config) { c.AuthorizationServers = nil },
		"offline_access":         func(c *Config) { c.ScopesSupported = []string{"files:read", "offline_access"} },
		"HMAC":                   func(c *Config) { c.Algorithms = []string{"HS256"} },
		"none":                   func(c *Config) { c.Algorithms = []string{"none"} },
		"query bearer method":    func(c *Config) { c.BearerMethods = []string{"query"} },
	} {
		c := ok
		mod(&c)
		if _, err := New(context.Background(), c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestChallenge(t *testing.T) {
	rs := &ResourceServer{metadataURL: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"}
	got := rs.challenge("invalid_token", "the token has expired", []string{"a", "b"})
	want := `Bearer error="invalid_token", error_description="the token has expired", scope="a b", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := rs.challenge("", "", nil); got != `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"` {
		t.Fatalf("no token: %s", got)
	}
}

// countingKeys is a key set (keyfunc.Keyfunc) of one key that counts the
// signatures it is asked to verify.
type countingKeys struct {
	key *rsa.PublicKey
	n   atomic.Int64
}

func (c *countingKeys) Keyfunc(t *jwt.Token) (any, error) {
	return c.KeyfuncCtx(context.Background())(t)
}
func (c *countingKeys) Storage() jwkset.Storage { return nil }
func (c *countingKeys) VerificationKeySet(context.Context) (jwt.VerificationKeySet, error) {
	return jwt.VerificationKeySet{Keys: []jwt.VerificationKey{c.key}}, nil
}
func (c *countingKeys) KeyfuncCtx(context.Context) jwt.Keyfunc {
	return func(*jwt.Token) (any, error) {
		c.n.Add(1)
		return c.key, nil
	}
}

var _ keyfunc.Keyfunc = (*countingKeys)(nil)

// TestVerifiedTokenCached: a token verified once is answered from the
// cache (keyed by its SHA-256) until it expires, and the cache is bounded.
func TestVerifiedTokenCached(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	cfg := Config{Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://as.example.com"},
		CacheSize: 4, Now: func() time.Time { return now }}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	keys := &countingKeys{key: &key.PublicKey}
	rs := &ResourceServer{cfg: cfg, parser: newParser(cfg), cache: newTokenCache(cfg.CacheSize),
		issuers: map[string]*issuer{"https://as.example.com": {name: "https://as.example.com", keys: keys}}}
	sign := func(sub string) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": "https://as.example.com", "sub": sub,
			"aud": "https://mcp.example.com/mcp", "exp": now.Add(time.Minute).Unix(), "scope": "a b"}).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tok := sign("alice")
	for i := 0; i < 3; i++ {
		g, err := rs.Verify(context.Background(), tok)
		if err != nil || g.Subject != "alice" || !g.HasScope("b") {
			t.Fatalf("verify: %+v %v", g, err)
		}
	}
	if n := keys.n.Load(); n != 1 {
		t.Fatalf("verified %d times, want 1", n)
	}
	for k := range rs.cache.m {
		if string(k[:]) == tok {
			t.Fatal("the cache holds the token")
		}
	}
	// Past exp (and the leeway) the cache does not answer, and the token
	// fails.
	now = now.Add(time.Minute + cfg.Leeway + time.Second)
	if _, err := rs.Verify(context.Background(), tok); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("after exp: %v", err)
	}
	now = now.Add(-time.Minute - cfg.Leeway - time.Second)
	for i := 0; i < 10; i++ {
		if _, err := rs.Verify(context.Background(), sign(fmt.Sprint("user", i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(rs.cache.m); n > cfg.CacheSize {
		t.Fatalf("cache holds %d entries, bound %d", n, cfg.CacheSize)
	}
}

// rsaJWKS returns a new RSA key and the JWKS publishing its public half,
// kid "k1".
func rsaJWKS(t *testing.T) (*rsa.PrivateKey, []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := jwkset.NewJWKFromKey(&key.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "k1", USE: jwkset.UseSig}})
	if err != nil {
		t.Fatal(err)
	}
	set := jwkset.NewMemoryStorage()
	if err := set.KeyWrite(context.Background(), jwk); err != nil {
		t.Fatal(err)
	}
	raw, err := set.JSONPublic(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return key, raw
}

// inlineServer is a ResourceServer whose keys are given inline
// (Config.JWKS): one RSA key, kid "k1".
func inlineServer(t *testing.T) (*ResourceServer, *rsa.PrivateKey) {
	t.Helper()
	key, raw := rsaJWKS(t)
	rs, err := New(context.Background(), Config{Resource: "https://mcp.example.com/mcp",
		AuthorizationServers: []string{"https://as.example.com"}, ScopesSupported: []string{"a"}, JWKS: raw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.Close)
	return rs, key
}

// TestInlineKeysAndMiddleware: with keys given inline, Protect binds the
// grant of a good token and refuses the others with the challenge.
func TestInlineKeysAndMiddleware(t *testing.T) {
	rs, key := inlineServer(t)
	sign := func(kid string, c jwt.MapClaims) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
		tok.Header["kid"] = kid
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	claims := func() jwt.MapClaims {
		return jwt.MapClaims{"iss": "https://as.example.com", "sub": "alice", "aud": "https://mcp.example.com/mcp",
			"exp": time.Now().Add(time.Minute).Unix(), "scope": "a"}
	}
	var seen *server.Grant
	h := rs.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = server.GrantFromContext(r.Context())
		if server.PrincipalFromContext(r.Context()) != seen.Subject {
			t.Error("the principal is not the grant's subject")
		}
	}))
	do := func(tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		rec := httptest.NewRecorder()
		seen = nil
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := do(sign("k1", claims())); rec.Code != 200 || seen == nil || seen.Subject != "alice" || !seen.HasScope("a") {
		t.Fatalf("good token: %d %+v", rec.Code, seen)
	}
	// The contract of the suite's auth-token-audience-validation scenario
	// (RFC 8707): another resource's token, one without aud, an expired
	// one and one signed by a key the issuer never published are all 401.
	wrongAud := claims()
	wrongAud["aud"] = "https://mcp.example.com/other"
	noAud := claims()
	delete(noAud, "aud")
	expired := claims()
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	untrusted, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims()).SignedString(other)
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{
		"none":                     "",
		"unknown kid":              sign("k2", claims()),
		"wrong audience":           sign("k1", wrongAud),
		"no audience":              sign("k1", noAud),
		"expired":                  sign("k1", expired),
		"untrusted key":            untrusted,
		"opaque, no introspection": "opaque",
	} {
		rec := do(tok)
		ch := rec.Header().Get("WWW-Authenticate")
		if rec.Code != 401 || seen != nil || !strings.Contains(ch, `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`) ||
			!strings.Contains(ch, `scope="a"`) {
			t.Errorf("%s: %d %q", name, rec.Code, ch)
		}
	}
}

// TestTokenWithoutKID: a JWS need not name its key (RFC 7515 §4.1.4; the
// conformance suite's DPoP scenario mints such tokens). One without "kid"
// is tried against the issuer's keys of its algorithm's type only: an
// RS256 token verifies with the RSA key, and an ES256 one, with no EC key
// in the set, is refused, and so is one signed by another RSA key.
func TestTokenWithoutKID(t *testing.T) {
	rs, key := inlineServer(t)
	claims := jwt.MapClaims{"iss": "https://as.example.com", "sub": "alice", "aud": "https://mcp.example.com/mcp",
		"exp": time.Now().Add(time.Minute).Unix(), "scope": "a"}
	good, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := rs.Verify(context.Background(), good); err != nil || g.Subject != "alice" {
		t.Fatalf("an RS256 token without kid: %v %+v, want alice's grant", err, g)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	wrongType, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(ec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Verify(context.Background(), wrongType); err == nil {
		t.Error("an ES256 token without kid verified against an RSA-only key set")
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Verify(context.Background(), forged); err == nil {
		t.Error("an RS256 token without kid signed by another key verified")
	}
}
