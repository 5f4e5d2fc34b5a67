package auth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestLazyDiscovery: with LazyDiscovery, New fetches nothing, so the
// server starts while its authorization server is down (the conformance
// suite's auth-token-audience-validation runs its authorization server
// only while the scenario runs). The first token naming the issuer
// discovers it; a failure refuses the token as not verifiable now and is
// not retried before UnknownKIDRefresh; requests without a token or with
// another issuer's never fetch; once discovered, the issuer is kept.
func TestLazyDiscovery(t *testing.T) {
	key, jwks := rsaJWKS(t)

	var up atomic.Bool
	var metadataFetches atomic.Int64
	var issuerURL string
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			metadataFetches.Add(1)
		}
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": issuerURL, "jwks_uri": issuerURL + "/jwks"})
		case "/jwks":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(jwks)
		default:
			http.NotFound(w, r)
		}
	}))
	defer as.Close()
	issuerURL = as.URL

	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	cfg := Config{Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{issuerURL},
		Now: func() time.Time { return time.Unix(0, clock.Load()) }}

	// Without it, New needs the authorization server.
	if _, err := New(context.Background(), cfg); err == nil {
		t.Fatal("New discovered an authorization server that answers 503")
	}
	metadataFetches.Store(0)

	cfg.LazyDiscovery = true
	rs, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New with LazyDiscovery: %v", err)
	}
	defer rs.Close()
	if n := metadataFetches.Load(); n != 0 {
		t.Fatalf("New fetched metadata %d times, want none", n)
	}

	sign := func(iss, sub string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": iss, "sub": sub,
			"aud": "https://mcp.example.com/mcp", "exp": time.Unix(0, clock.Load()).Add(time.Hour).Unix()})
		tok.Header["kid"] = "k1"
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	h := rs.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	do := func(tok string) int {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := do(""); code != http.StatusUnauthorized {
		t.Fatalf("no token: HTTP %d, want 401", code)
	}
	if code := do(sign("https://other.example.com", "mallory")); code != http.StatusUnauthorized {
		t.Fatalf("another issuer's token: HTTP %d, want 401", code)
	}
	if n := metadataFetches.Load(); n != 0 {
		t.Fatalf("%d metadata fetches for requests that name no configured issuer, want none", n)
	}

	// The authorization server is down: refused, and not asked again
	// before UnknownKIDRefresh.
	_, err = rs.Verify(context.Background(), sign(issuerURL, "alice"))
	if err == nil || !strings.Contains(err.Error(), "could not be verified now") {
		t.Fatalf("issuer down: %v, want the token refused as not verifiable now", err)
	}
	tried := metadataFetches.Load()
	if tried == 0 {
		t.Fatal("no discovery was attempted")
	}
	up.Store(true)
	if code := do(sign(issuerURL, "alice")); code != http.StatusUnauthorized {
		t.Fatalf("within UnknownKIDRefresh of a failure: HTTP %d, want 401", code)
	}
	if n := metadataFetches.Load(); n != tried {
		t.Fatalf("discovery retried within UnknownKIDRefresh (%d fetches, then %d)", tried, n)
	}

	// Past it, the first token discovers the issuer, concurrently.
	clock.Add(int64(defaultUnknownKIDRefresh + time.Second))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			if g, err := rs.Verify(context.Background(), sign(issuerURL, "bob")); err != nil || g.Subject != "bob" {
				t.Errorf("issuer up: %+v %v", g, err)
			}
		})
	}
	wg.Wait()
	discovered := metadataFetches.Load()
	if discovered != tried+1 {
		t.Errorf("%d metadata fetches to discover the issuer, want 1", discovered-tried)
	}

	// Discovered once: kept, even when the metadata goes away.
	up.Store(false)
	if g, err := rs.Verify(context.Background(), sign(issuerURL, "carol")); err != nil || g.Subject != "carol" {
		t.Fatalf("after discovery: %+v %v", g, err)
	}
	if n := metadataFetches.Load(); n != discovered {
		t.Fatalf("metadata fetched again after discovery (%d, then %d)", discovered, n)
	}
}
