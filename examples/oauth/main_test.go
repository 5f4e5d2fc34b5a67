package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-mcp/baton/auth"
	"github.com/baton-mcp/baton/examples/oauth/authserver"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// gate makes chosen paths of the authorization server slow (held until
// the test ends) or dead (503), while serving everything else.
type gate struct {
	mu      sync.Mutex
	mode    map[string]string // path → "slow" | "dead"
	release chan struct{}
	hits    sync.Map // path → *atomic.Int64
}

func newGate() *gate { return &gate{mode: map[string]string{}, release: make(chan struct{})} }

func (g *gate) set(path, mode string) {
	g.mu.Lock()
	g.mode[path] = mode
	g.mu.Unlock()
}

func (g *gate) count(path string) int64 {
	v, _ := g.hits.LoadOrStore(path, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func (g *gate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := g.hits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
		g.mu.Lock()
		m := g.mode[r.URL.Path]
		g.mu.Unlock()
		switch m {
		case "slow":
			select {
			case <-g.release:
			case <-r.Context().Done():
			}
			return
		case "dead":
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type fixture struct {
	as       *authserver.Server
	rs       *auth.ResourceServer
	srv      *server.Server
	url      string // the MCP endpoint
	gate     *gate
	recorder *recorder
}

// recorder notes the status and challenge of every response of the MCP
// server, in order.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (rec *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		rec.mu.Lock()
		rec.seen = append(rec.seen, fmt.Sprintf("%s %s %d %s", r.Method, r.URL.Path, sw.status, sw.Header().Get("WWW-Authenticate")))
		rec.mu.Unlock()
	})
}

func (rec *recorder) lines() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.seen...)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
	w.ResponseWriter.WriteHeader(s)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// start runs the authorization server, the resource server and the MCP
// server on loopback.
func start(t testing.TB, tune func(*auth.Config)) *fixture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{url: "http://" + ln.Addr().String() + Path, gate: newGate(), recorder: &recorder{}}
	f.as, err = authserver.Start(authserver.Options{Resource: f.url, Clients: append(demoClients,
		authserver.Client{ID: "reader", Secret: "secret", JWT: true, Scopes: []string{ScopeRead}}),
		IntrospectorID: "baton-rs", IntrospectorSecret: "rs-secret", Wrap: f.gate.wrap})
	if err != nil {
		t.Fatal(err)
	}
	cfg := auth.Config{
		Resource:                  f.url,
		AuthorizationServers:      []string{f.as.Issuer},
		ScopesSupported:           []string{ScopeRead, ScopeWrite},
		ChallengeScopes:           []string{ScopeRead},
		IntrospectionClientID:     "baton-rs",
		IntrospectionClientSecret: "rs-secret",
	}
	if tune != nil {
		tune(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if f.rs, err = auth.New(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if f.srv, err = newMCPServer(); err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: f.recorder.wrap(handler(f.rs, f.srv)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() {
		close(f.gate.release)
		_ = hs.Close()
		f.rs.Close()
		_ = f.as.Close()
		_ = f.srv.Close()
	})
	return f
}

// token gets an access token from the authorization server's token
// endpoint with the client credentials grant.
func (f *fixture) token(t testing.TB, client, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}}
	req, _ := http.NewRequest(http.MethodPost, f.as.Issuer+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, "secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil || out.AccessToken == "" {
		t.Fatalf("token endpoint: %d %s", resp.StatusCode, b)
	}
	return out.AccessToken
}

// sign signs claims as the authorization server signs its tokens (its
// key and kid), for the tokens it would not issue.
func (f *fixture) sign(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	kid, key, err := f.as.SigningKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *fixture) claims(mod func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": f.as.Issuer, "sub": "jwt-client", "aud": []string{f.url}, "scope": ScopeRead,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	if mod != nil {
		mod(c)
	}
	return c
}

// call sends tools/call name with the token (none when empty) and
// returns the response.
func (f *fixture) call(t *testing.T, token, name string, args any) *mcptest.Response {
	t.Helper()
	c, err := mcptest.New(mcptest.URL(f.url, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	var opts []mcptest.CallOption
	if token != "" {
		opts = append(opts, mcptest.WithHeader("Authorization", "Bearer "+token))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := c.Do(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestTokenCases sends each kind of token the resource server must tell
// apart and checks the status and the challenge.
func TestTokenCases(t *testing.T) {
	f := start(t, nil)
	md := `resource_metadata="` + f.rs.MetadataURL() + `"`
	pub, err := x509.MarshalPKIXPublicKey(must(f.as.SigningKey(context.Background())).Public())
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	_, kid := mustKid(f)
	hmacWithPublicKey := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, f.claims(nil))
		tok.Header["kid"] = kid
		s, err := tok.SignedString(pubPEM)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	algNone := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, f.claims(nil))
		tok.Header["kid"] = kid
		s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	unknownKid := func() string {
		other, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, f.claims(nil))
		tok.Header["kid"] = "not-a-kid-of-the-server"
		s, err := tok.SignedString(other)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	idTokenTyp := func() string {
		kid, key, _ := f.as.SigningKey(context.Background())
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, f.claims(nil))
		tok.Header["kid"], tok.Header["typ"] = kid, "id_token+jwt"
		s, _ := tok.SignedString(key)
		return s
	}
	cases := []struct {
		name, token, tool string
		status            int
		challenge         []string // substrings of WWW-Authenticate ("" = none expected)
	}{
		{"valid JWT from the AS", f.token(t, "jwt-client", ScopeRead), "read_file", 200, nil},
		{"valid opaque token (introspection)", f.token(t, "opaque-client", ScopeRead), "read_file", 200, nil},
		{"no token", "", "whoami", 401, []string{`Bearer scope="files:read"`, md}},
		{"no token, scoped tool", "", "write_file", 401, []string{`scope="files:read files:write"`, md}},
		{"malformed", "not a token", "whoami", 401, []string{`error="invalid_token"`, "malformed", md}},
		{"malformed JWT", "abc.def.ghi", "whoami", 401, []string{`error="invalid_token"`, "malformed", md}},
		{"expired", f.sign(t, f.claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })), "whoami", 401, []string{`error="invalid_token"`, "expired", md}},
		{"not yet valid", f.sign(t, f.claims(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() })), "whoami", 401, []string{`error="invalid_token"`, "not valid yet", md}},
		{"wrong audience", f.sign(t, f.claims(func(c jwt.MapClaims) { c["aud"] = []string{"https://other.example/mcp"} })), "whoami", 401, []string{`error="invalid_token"`, "not for this resource", md}},
		{"wrong issuer", f.sign(t, f.claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })), "whoami", 401, []string{`error="invalid_token"`, "another issuer", md}},
		{"alg none", algNone(), "whoami", 401, []string{`error="invalid_token"`, "algorithm is not accepted", md}},
		{"HMAC with the public key", hmacWithPublicKey(), "whoami", 401, []string{`error="invalid_token"`, "algorithm is not accepted", md}},
		{"unknown kid", unknownKid(), "whoami", 401, []string{`error="invalid_token"`, "key is unknown", md}},
		{"typ of an ID token", idTokenTyp(), "whoami", 401, []string{`error="invalid_token"`, "typ", md}},
		{"opaque token unknown to the AS", "opaque-but-unknown", "whoami", 401, []string{`error="invalid_token"`, "not active", md}},
		{"valid JWT lacking a scope", f.token(t, "reader", ScopeRead+" "+ScopeWrite), "write_file", 403, []string{`error="insufficient_scope"`, `scope="files:read files:write"`, md}},
		{"valid opaque lacking a scope", f.token(t, "opaque-client", ScopeRead), "write_file", 403, []string{`error="insufficient_scope"`, `scope="files:read files:write"`, md}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"path": "a.txt"}
			if tc.tool == "write_file" {
				args["content"] = "x"
			} else if tc.tool == "whoami" {
				args = map[string]any{}
			}
			resp := f.call(t, tc.token, tc.tool, args)
			ch := resp.Header.Get("WWW-Authenticate")
			t.Logf("TABLE | %s | %d | %s", tc.name, resp.Status, ch)
			if resp.Status != tc.status {
				t.Fatalf("status %d, want %d (%s; %s)", resp.Status, tc.status, ch, resp.Body)
			}
			if tc.challenge == nil && ch != "" {
				t.Fatalf("unexpected challenge %q", ch)
			}
			for _, want := range tc.challenge {
				if !strings.Contains(ch, want) {
					t.Fatalf("challenge %q lacks %q", ch, want)
				}
			}
			if strings.Contains(ch, "offline_access") {
				t.Fatalf("challenge names offline_access: %q", ch)
			}
		})
	}
}

func must[T any](_ string, v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func mustKid(f *fixture) (*rsa.PrivateKey, string) {
	kid, key, err := f.as.SigningKey(context.Background())
	if err != nil {
		panic(err)
	}
	return key, kid
}

// TestMetadata reads the metadata document at both well-known URIs, with
// its CORS headers, and the preflight.
func TestMetadata(t *testing.T) {
	f := start(t, nil)
	base := strings.TrimSuffix(f.url, Path)
	for _, u := range []string{base + "/.well-known/oauth-protected-resource" + Path, base + "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var md struct {
			Resource               string   `json:"resource"`
			AuthorizationServers   []string `json:"authorization_servers"`
			ScopesSupported        []string `json:"scopes_supported"`
			BearerMethodsSupported []string `json:"bearer_methods_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", u, resp.StatusCode, err)
		}
		if md.Resource != f.url || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != f.as.Issuer ||
			strings.Join(md.ScopesSupported, " ") != "files:read files:write" || strings.Join(md.BearerMethodsSupported, " ") != "header" {
			t.Fatalf("%s: %+v", u, md)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s: no CORS header", u)
		}
		req, _ := http.NewRequest(http.MethodOptions, u, nil)
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		pre, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		pre.Body.Close()
		if pre.StatusCode != http.StatusNoContent || !strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "GET") {
			t.Fatalf("preflight %s: %d %v", u, pre.StatusCode, pre.Header)
		}
	}
	if _, err := auth.New(context.Background(), auth.Config{Resource: f.url, AuthorizationServers: []string{f.as.Issuer}, ScopesSupported: []string{"offline_access"}}); err == nil {
		t.Fatal("offline_access accepted in scopes_supported")
	}
}

// TestListsPerCaller: each token sees the tools it may call, and the list
// says it is private to the caller.
func TestListsPerCaller(t *testing.T) {
	f := start(t, nil)
	for _, tc := range []struct {
		client, scope string
		want          string
	}{
		{"reader", ScopeRead, "whoami read_file"},
		{"jwt-client", ScopeRead + " " + ScopeWrite, "whoami read_file write_file"},
		{"jwt-client", "", "whoami"},
	} {
		tok := f.token(t, tc.client, tc.scope)
		c, err := mcptest.New(mcptest.URL(f.url, nil), &mcptest.Options{Header: http.Header{"Authorization": {"Bearer " + tok}}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(context.Background(), "tools/list", nil)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			CacheScope string `json:"cacheScope"`
		}
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if got := strings.Join(names, " "); got != tc.want || res.CacheScope != "private" {
			t.Fatalf("%s with %q sees %q (cacheScope %q), want %q private", tc.client, tc.scope, got, res.CacheScope, tc.want)
		}
	}
}

// TestIntrospectionCached: an opaque token is introspected once while it
// is valid, and the grant reaches the handler.
func TestIntrospectionCached(t *testing.T) {
	f := start(t, nil)
	tok := f.token(t, "opaque-client", ScopeRead)
	before := f.gate.count("/oauth/introspect")
	for i := 0; i < 5; i++ {
		resp := f.call(t, tok, "whoami", map[string]any{})
		if resp.Status != 200 || !strings.Contains(string(resp.Result), `"subject":"opaque-client"`) || !strings.Contains(string(resp.Result), ScopeRead) {
			t.Fatalf("%d %s", resp.Status, resp.Body)
		}
	}
	if n := f.gate.count("/oauth/introspect") - before; n != 1 {
		t.Fatalf("introspected %d times, want 1", n)
	}
}

// TestSlowAndDeadEndpoints: a JWKS or introspection endpoint that hangs
// or fails never stalls a request whose key or token is cached, never
// lets an unverified token through, and costs a request at most
// FetchTimeout.
func TestSlowAndDeadEndpoints(t *testing.T) {
	const fetch = 2 * time.Second
	f := start(t, func(c *auth.Config) { c.FetchTimeout = fetch; c.UnknownKIDRefresh = time.Millisecond })
	opaque := f.token(t, "opaque-client", ScopeRead)
	if r := f.call(t, opaque, "whoami", map[string]any{}); r.Status != 200 {
		t.Fatalf("warm-up: %d", r.Status)
	}
	for _, mode := range []string{"slow", "dead"} {
		t.Run(mode, func(t *testing.T) {
			f.gate.set("/keys", mode)
			f.gate.set("/oauth/introspect", mode)
			defer f.gate.set("/keys", "")
			defer f.gate.set("/oauth/introspect", "")

			// An unknown kid makes the server refresh the JWKS: refused,
			// within the bound, and while that refresh hangs, requests
			// whose key or token is cached do not wait for it.
			other, _ := rsa.GenerateKey(rand.Reader, 2048)
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, f.claims(nil))
			tok.Header["kid"] = "kid-" + mode
			s, _ := tok.SignedString(other)
			keysBefore := f.gate.count("/keys")
			type outcome struct {
				status int
				took   time.Duration
			}
			done := make(chan outcome, 1)
			go func() {
				start := time.Now()
				r := f.call(t, s, "whoami", map[string]any{})
				done <- outcome{r.Status, time.Since(start)}
			}()
			for deadline := time.Now().Add(20 * time.Second); f.gate.count("/keys") == keysBefore; {
				if time.Now().After(deadline) {
					t.Fatal("an unknown kid did not try to refresh the JWKS")
				}
				time.Sleep(5 * time.Millisecond)
			}
			// A JWT never seen, whose key is cached: no wait on the AS.
			fresh := f.token(t, "jwt-client", ScopeRead)
			start := time.Now()
			if r := f.call(t, fresh, "read_file", map[string]any{"path": "a"}); r.Status != 200 {
				t.Fatalf("cached key: %d %s", r.Status, r.Body)
			}
			if d := time.Since(start); d >= fetch {
				t.Fatalf("a request with a cached key waited %v", d)
			}
			// An opaque token introspected before: answered from the cache.
			start = time.Now()
			if r := f.call(t, opaque, "whoami", map[string]any{}); r.Status != 200 {
				t.Fatalf("cached introspection: %d", r.Status)
			}
			if d := time.Since(start); d >= fetch {
				t.Fatalf("a cached opaque token waited %v", d)
			}
			o := <-done
			if o.status != 401 {
				t.Fatalf("unknown kid: %d", o.status)
			}
			if o.took > fetch+10*time.Second {
				t.Fatalf("unknown kid waited %v, bound %v", o.took, fetch)
			}
			t.Logf("%s JWKS: unknown kid refused in %v", mode, o.took)
			// A new opaque token: refused, within the bound.
			newOpaque := f.token(t, "opaque-client", ScopeRead)
			start = time.Now()
			if r := f.call(t, newOpaque, "whoami", map[string]any{}); r.Status != 401 {
				t.Fatalf("new opaque token with introspection %s: %d", mode, r.Status)
			}
			if d := time.Since(start); d > fetch+10*time.Second {
				t.Fatalf("introspection waited %v, bound %v", d, fetch)
			} else {
				t.Logf("%s introspection: new opaque token refused in %v", mode, d)
			}
		})
	}
	// Once the endpoints are back, a new opaque token verifies (failures
	// to ask were not cached).
	if r := f.call(t, f.token(t, "opaque-client", ScopeRead), "whoami", map[string]any{}); r.Status != 200 {
		t.Fatalf("after recovery: %d", r.Status)
	}
}

// TestKeyRotation: a token signed with a key the server has not seen (the
// authorization server rotated) makes it refresh the JWKS once and
// verifies; a second unknown kid within UnknownKIDRefresh is refused at
// once, without asking the authorization server again.
func TestKeyRotation(t *testing.T) {
	f := start(t, func(c *auth.Config) { c.UnknownKIDRefresh = time.Hour })
	if r := f.call(t, f.token(t, "jwt-client", ScopeRead), "read_file", map[string]any{"path": "a"}); r.Status != 200 {
		t.Fatalf("before rotation: %d", r.Status)
	}
	if err := f.as.RotateKey(); err != nil {
		t.Fatal(err)
	}
	keys := f.gate.count("/keys")
	if r := f.call(t, f.token(t, "jwt-client", ScopeRead), "read_file", map[string]any{"path": "a"}); r.Status != 200 {
		t.Fatalf("after rotation: %d %s", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	if n := f.gate.count("/keys") - keys; n != 1 {
		t.Fatalf("the JWKS was fetched %d times for one new kid, want 1", n)
	}
	if err := f.as.RotateKey(); err != nil {
		t.Fatal(err)
	}
	keys = f.gate.count("/keys")
	r := f.call(t, f.token(t, "jwt-client", ScopeRead), "read_file", map[string]any{"path": "a"})
	if r.Status != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), "key is unknown") {
		t.Fatalf("second new kid within the refresh interval: %d %s", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	if n := f.gate.count("/keys") - keys; n != 0 {
		t.Fatalf("the JWKS was fetched %d times within the refresh interval", n)
	}
}
