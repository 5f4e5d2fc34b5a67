package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-mcp/baton/auth"
	"github.com/baton-mcp/baton/mcptest"
)

// dpopClient is what a third-party client holds for DPoP (RFC 9449): an
// ECDSA P-256 key, and a go-jose signer that puts typ dpop+jwt and the
// key's public JWK in the protected header of every proof. Nothing of it
// is Baton's.
type dpopClient struct {
	key    *ecdsa.PrivateKey
	signer jose.Signer
}

func newDPoPClient(t *testing.T) *dpopClient {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		&jose.SignerOptions{EmbedJWK: true, ExtraHeaders: map[jose.HeaderKey]any{jose.HeaderType: "dpop+jwt"}})
	if err != nil {
		t.Fatal(err)
	}
	return &dpopClient{key: key, signer: signer}
}

// jkt is the RFC 7638 SHA-256 thumbprint of the client's key, base64url.
func (c *dpopClient) jkt(t *testing.T) string {
	t.Helper()
	tp, err := (&jose.JSONWebKey{Key: &c.key.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(tp)
}

// proof mints a proof for a request (htm, htu) with a fresh jti and iat;
// a token, when given, is bound by ath (RFC 9449 §4.2). mod edits the
// claims before signing.
func (c *dpopClient) proof(t *testing.T, htm, htu, token string, mod func(map[string]any)) string {
	t.Helper()
	return signProof(t, c.signer, htm, htu, token, mod)
}

func signProof(t *testing.T, signer jose.Signer, htm, htu, token string, mod func(map[string]any)) string {
	t.Helper()
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{"jti": base64.RawURLEncoding.EncodeToString(jti), "htm": htm, "htu": htu, "iat": time.Now().Unix()}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if mod != nil {
		mod(claims)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asMetadata is what the client reads of the authorization server's
// metadata.
type asMetadata struct {
	TokenEndpoint string   `json:"token_endpoint"`
	DPoPAlgs      []string `json:"dpop_signing_alg_values_supported"`
}

// discoverAS reads the authorization server's metadata, as a client
// that knows only its issuer would.
func (f *fixture) discoverAS(t *testing.T) asMetadata {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.as.Issuer+"/.well-known/openid-configuration", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md asMetadata
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil || md.TokenEndpoint == "" {
		t.Fatalf("metadata: %d %v %+v", resp.StatusCode, err, md)
	}
	return md
}

// tokenResponse is a token endpoint's answer, success or error.
type tokenResponse struct {
	status      int
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// dpopToken asks the token endpoint for a token with the client
// credentials grant, each of proofs as a DPoP header (none: a bearer
// token).
func dpopToken(t *testing.T, endpoint, client, scope string, proofs ...string) tokenResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, "secret")
	for _, p := range proofs {
		req.Header.Add("DPoP", p)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	tr := tokenResponse{status: resp.StatusCode}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("token endpoint: %d %s", resp.StatusCode, b)
	}
	return tr
}

// dpopCall sends tools/call whoami to the MCP endpoint with
// "Authorization: <scheme> <token>" and, unless empty, the DPoP header.
func (f *fixture) dpopCall(t *testing.T, scheme, token, proof string) *mcptest.Response {
	t.Helper()
	c, err := mcptest.New(mcptest.URL(f.url, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := []mcptest.CallOption{mcptest.WithHeader("Authorization", scheme+" "+token)}
	if proof != "" {
		opts = append(opts, mcptest.WithHeader("DPoP", proof))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := c.Do(ctx, "tools/call", map[string]any{"name": "whoami", "arguments": map[string]any{}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// cnfJKT is the cnf.jkt of a JWT access token, read without verifying it
// (as the client may: the resource server verifies).
func cnfJKT(t *testing.T, token string) string {
	t.Helper()
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		t.Fatal(err)
	}
	cnf, _ := claims["cnf"].(map[string]any)
	jkt, _ := cnf["jkt"].(string)
	return jkt
}

// wantRefused checks a 401 whose first challenge has the scheme and
// contains each of want.
func wantRefused(t *testing.T, what string, resp *mcptest.Response, scheme string, want ...string) {
	t.Helper()
	ch := resp.Header.Get("WWW-Authenticate")
	t.Logf("%s: %d %s", what, resp.Status, ch)
	if resp.Status != http.StatusUnauthorized || !strings.HasPrefix(ch, scheme+" ") {
		t.Fatalf("%s: %d %q, want 401 with a %s challenge (%s)", what, resp.Status, ch, scheme, resp.Body)
	}
	for _, w := range want {
		if !strings.Contains(ch, w) {
			t.Fatalf("%s: challenge %q lacks %q", what, ch, w)
		}
	}
}

// TestDPoPThirdPartyClient drives DPoP end to end as a third-party client
// would, with proofs minted by go-jose: it discovers the token endpoint,
// gets a JWT access token bound to its key from the real authorization
// server (token_type DPoP, cnf.jkt its key's thumbprint), and calls
// whoami with "Authorization: DPoP" and a proof for the MCP endpoint.
// The resource server refuses the same proof replayed, a proof by another
// key, the bound token as a bearer token, a proof for another URL and
// one whose ath is another token's; a fresh proof still works after them.
func TestDPoPThirdPartyClient(t *testing.T) {
	f := start(t, nil)
	md := f.discoverAS(t)
	if !slices.Contains(md.DPoPAlgs, "ES256") {
		t.Fatalf("the authorization server does not advertise ES256 for DPoP: %v", md.DPoPAlgs)
	}
	client := newDPoPClient(t)
	tr := dpopToken(t, md.TokenEndpoint, "jwt-client", ScopeRead, client.proof(t, http.MethodPost, md.TokenEndpoint, "", nil))
	if tr.status != http.StatusOK || tr.TokenType != "DPoP" || tr.AccessToken == "" {
		t.Fatalf("token with a DPoP proof: %+v", tr)
	}
	if got, want := cnfJKT(t, tr.AccessToken), client.jkt(t); got != want {
		t.Fatalf("cnf.jkt %q, want the thumbprint %q", got, want)
	}
	tok := tr.AccessToken

	proof := client.proof(t, http.MethodPost, f.url, tok, nil)
	resp := f.dpopCall(t, "DPoP", tok, proof)
	if resp.Status != http.StatusOK || resp.Error != nil || !strings.Contains(string(resp.Result), `"subject":"jwt-client"`) {
		t.Fatalf("whoami with DPoP: %d %s", resp.Status, resp.Body)
	}

	wantRefused(t, "the same proof replayed", f.dpopCall(t, "DPoP", tok, proof),
		"DPoP", `error="invalid_dpop_proof"`, "used before")

	other := newDPoPClient(t)
	wantRefused(t, "a proof by another key", f.dpopCall(t, "DPoP", tok, other.proof(t, http.MethodPost, f.url, tok, nil)),
		"DPoP", `error="invalid_token"`, "bound to another DPoP key")

	bearer := f.dpopCall(t, "Bearer", tok, "")
	wantRefused(t, "the bound token as Bearer", bearer, "Bearer", `error="invalid_token"`, "bound to a DPoP key")
	if chs := bearer.Header.Values("WWW-Authenticate"); len(chs) != 2 || !strings.HasPrefix(chs[1], "DPoP ") {
		t.Fatalf("the bearer refusal does not offer DPoP too: %q", chs)
	}

	otherURL := strings.TrimSuffix(f.url, Path) + "/other"
	wantRefused(t, "a proof for another URL", f.dpopCall(t, "DPoP", tok, client.proof(t, http.MethodPost, otherURL, tok, nil)),
		"DPoP", `error="invalid_dpop_proof"`, "another URL")

	otherTok := dpopToken(t, md.TokenEndpoint, "jwt-client", ScopeRead, client.proof(t, http.MethodPost, md.TokenEndpoint, "", nil)).AccessToken
	wantRefused(t, "a proof whose ath is another token's", f.dpopCall(t, "DPoP", tok, client.proof(t, http.MethodPost, f.url, otherTok, nil)),
		"DPoP", `error="invalid_dpop_proof"`, "ath")

	wantRefused(t, "the DPoP scheme without a proof", f.dpopCall(t, "DPoP", tok, ""),
		"DPoP", `error="invalid_dpop_proof"`)

	if resp := f.dpopCall(t, "DPoP", tok, client.proof(t, http.MethodPost, f.url, tok, nil)); resp.Status != http.StatusOK {
		t.Fatalf("a fresh proof after the refusals: %d %s", resp.Status, resp.Body)
	}
}

// TestDPoPOpaqueToken: an opaque token issued with a DPoP proof is bound
// too, through introspection (cnf.jkt in the answer): accepted with the
// DPoP scheme and a proof of the key, refused as a bearer token.
func TestDPoPOpaqueToken(t *testing.T) {
	f := start(t, nil)
	md := f.discoverAS(t)
	client := newDPoPClient(t)
	tr := dpopToken(t, md.TokenEndpoint, "opaque-client", ScopeRead, client.proof(t, http.MethodPost, md.TokenEndpoint, "", nil))
	if tr.status != http.StatusOK || tr.TokenType != "DPoP" || strings.Count(tr.AccessToken, ".") == 2 {
		t.Fatalf("opaque token with a DPoP proof: %+v", tr)
	}
	resp := f.dpopCall(t, "DPoP", tr.AccessToken, client.proof(t, http.MethodPost, f.url, tr.AccessToken, nil))
	if resp.Status != http.StatusOK || !strings.Contains(string(resp.Result), `"subject":"opaque-client"`) {
		t.Fatalf("whoami with a DPoP-bound opaque token: %d %s", resp.Status, resp.Body)
	}
	wantRefused(t, "the bound opaque token as Bearer", f.dpopCall(t, "Bearer", tr.AccessToken, ""),
		"Bearer", `error="invalid_token"`, "bound to a DPoP key")
	other := newDPoPClient(t)
	wantRefused(t, "a proof by another key", f.dpopCall(t, "DPoP", tr.AccessToken, other.proof(t, http.MethodPost, f.url, tr.AccessToken, nil)),
		"DPoP", "bound to another DPoP key")
}

// TestDPoPTokenEndpoint: the authorization server issues bearer tokens
// as before to requests without a proof (token_type Bearer, no cnf), and
// refuses each kind of invalid proof with 400 invalid_dpop_proof.
func TestDPoPTokenEndpoint(t *testing.T) {
	f := start(t, nil)
	md := f.discoverAS(t)
	endpoint := md.TokenEndpoint
	if bt := dpopToken(t, endpoint, "jwt-client", ScopeRead); bt.status != http.StatusOK || bt.TokenType != "Bearer" || cnfJKT(t, bt.AccessToken) != "" {
		t.Fatalf("token without a proof: %+v", bt)
	}
	client := newDPoPClient(t)
	other := newDPoPClient(t)
	// A proof whose header names the client's key but is signed by another.
	forged, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: other.key},
		&jose.SignerOptions{ExtraHeaders: map[jose.HeaderKey]any{jose.HeaderType: "dpop+jwt", "jwk": jose.JSONWebKey{Key: &client.key.PublicKey}}})
	if err != nil {
		t.Fatal(err)
	}
	wrongTyp, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: client.key},
		&jose.SignerOptions{EmbedJWK: true, ExtraHeaders: map[jose.HeaderKey]any{jose.HeaderType: "JWT"}})
	if err != nil {
		t.Fatal(err)
	}
	replayed := client.proof(t, http.MethodPost, endpoint, "", nil)
	if tr := dpopToken(t, endpoint, "jwt-client", ScopeRead, replayed); tr.status != http.StatusOK || tr.TokenType != "DPoP" {
		t.Fatalf("first use of a proof: %+v", tr)
	}
	for _, tc := range []struct {
		name   string
		proofs []string
		want   string // in error_description
	}{
		{"replayed", []string{replayed}, "used before"},
		{"htu of another URL", []string{client.proof(t, http.MethodPost, f.url, "", nil)}, "htu"},
		{"htm GET", []string{client.proof(t, http.MethodGet, endpoint, "", nil)}, "htm"},
		{"iat ten minutes ago", []string{client.proof(t, http.MethodPost, endpoint, "", func(c map[string]any) { c["iat"] = time.Now().Add(-10 * time.Minute).Unix() })}, "iat"},
		{"no jti", []string{client.proof(t, http.MethodPost, endpoint, "", func(c map[string]any) { delete(c, "jti") })}, "jti"},
		{"typ JWT", []string{signProof(t, wrongTyp, http.MethodPost, endpoint, "", nil)}, "typ"},
		{"signed by another key than its jwk", []string{signProof(t, forged, http.MethodPost, endpoint, "", nil)}, "signature"},
		{"not a JWS", []string{"not.a.proof"}, "JWS"},
		{"two DPoP headers", []string{client.proof(t, http.MethodPost, endpoint, "", nil), client.proof(t, http.MethodPost, endpoint, "", nil)}, "more than one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := dpopToken(t, endpoint, "jwt-client", ScopeRead, tc.proofs...)
			t.Logf("%d %s: %s", tr.status, tr.Error, tr.Description)
			if tr.status != http.StatusBadRequest || tr.Error != "invalid_dpop_proof" || tr.AccessToken != "" || !strings.Contains(tr.Description, tc.want) {
				t.Fatalf("%+v, want 400 invalid_dpop_proof about %q", tr, tc.want)
			}
		})
	}
}

// TestDPoPNonce: with auth.Config.DPoPNonceKey the resource server wants
// its nonce in proofs (RFC 9449 §9): a proof without it is refused with
// use_dpop_nonce and a DPoP-Nonce header; the client retries with that
// nonce and succeeds, and the success carries the nonce to use next.
func TestDPoPNonce(t *testing.T) {
	f := start(t, func(c *auth.Config) { c.DPoPNonceKey = []byte("a nonce key of the oauth example, 32 bytes or more") })
	md := f.discoverAS(t)
	client := newDPoPClient(t)
	tok := dpopToken(t, md.TokenEndpoint, "jwt-client", ScopeRead, client.proof(t, http.MethodPost, md.TokenEndpoint, "", nil)).AccessToken
	first := f.dpopCall(t, "DPoP", tok, client.proof(t, http.MethodPost, f.url, tok, nil))
	wantRefused(t, "a proof without the nonce", first, "DPoP", `error="use_dpop_nonce"`)
	nonce := first.Header.Get("DPoP-Nonce")
	if nonce == "" {
		t.Fatal("no DPoP-Nonce with use_dpop_nonce")
	}
	withNonce := func(c map[string]any) { c["nonce"] = nonce }
	resp := f.dpopCall(t, "DPoP", tok, client.proof(t, http.MethodPost, f.url, tok, withNonce))
	if resp.Status != http.StatusOK || !strings.Contains(string(resp.Result), `"subject":"jwt-client"`) {
		t.Fatalf("retry with the nonce: %d %s", resp.Status, resp.Body)
	}
	if resp.Header.Get("DPoP-Nonce") == "" {
		t.Fatal("a success does not carry the next nonce")
	}
	wantRefused(t, "a nonce not the server's", f.dpopCall(t, "DPoP", tok, client.proof(t, http.MethodPost, f.url, tok, func(c map[string]any) { c["nonce"] = "made-up" })),
		"DPoP", `error="use_dpop_nonce"`)
}
