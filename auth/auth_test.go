package auth_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-mcp/baton/auth"
	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func token(t *testing.T, method jwt.SigningMethod, claims jwt.MapClaims) string {
	t.Helper()
	var key any = secret
	if method == jwt.SigningMethodNone {
		key = jwt.UnsafeAllowNoneSignatureType
	}
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claims(sub string, exp time.Duration) jwt.MapClaims {
	return jwt.MapClaims{"sub": sub, "iss": "https://issuer", "aud": "baton", "exp": time.Now().Add(exp).Unix()}
}

func verifier(t *testing.T, optional bool) *auth.Verifier {
	t.Helper()
	v, err := auth.New(auth.Config{
		Keyfunc:          func(*jwt.Token) (any, error) { return secret, nil },
		Methods:          []string{"HS256"},
		Issuer:           "https://issuer",
		Audience:         "baton",
		Optional:         optional,
		ResourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource",
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// whoami echoes the principal the middleware bound.
var whoami = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "principal="+server.PrincipalFromContext(r.Context()))
})

func get(t *testing.T, h http.Handler, authz string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestMiddleware(t *testing.T) {
	h := verifier(t, false).Middleware(whoami)
	for _, tc := range []struct {
		name, authz string
		status      int
		body        string
	}{
		{"valid", "Bearer " + token(t, jwt.SigningMethodHS256, claims("alice", time.Minute)), 200, "principal=alice"},
		{"lower-case scheme", "bearer " + token(t, jwt.SigningMethodHS256, claims("alice", time.Minute)), 200, "principal=alice"},
		{"missing", "", 401, "missing bearer token"},
		{"basic", "Basic YWxpY2U6eA==", 401, "must be"},
		{"expired", "Bearer " + token(t, jwt.SigningMethodHS256, claims("alice", -time.Minute)), 401, "expired"},
		{"alg none", "Bearer " + token(t, jwt.SigningMethodNone, claims("alice", time.Minute)), 401, "does not verify"},
		{"other algorithm", "Bearer " + token(t, jwt.SigningMethodHS512, claims("alice", time.Minute)), 401, "does not verify"},
		{"other audience", "Bearer " + token(t, jwt.SigningMethodHS256, jwt.MapClaims{"sub": "a", "iss": "https://issuer", "aud": "other", "exp": time.Now().Add(time.Minute).Unix()}), 401, "another audience"},
		{"other issuer", "Bearer " + token(t, jwt.SigningMethodHS256, jwt.MapClaims{"sub": "a", "iss": "https://evil", "aud": "baton", "exp": time.Now().Add(time.Minute).Unix()}), 401, "another issuer"},
		{"no subject", "Bearer " + token(t, jwt.SigningMethodHS256, jwt.MapClaims{"iss": "https://issuer", "aud": "baton", "exp": time.Now().Add(time.Minute).Unix()}), 401, "no subject"},
		{"no expiry", "Bearer " + token(t, jwt.SigningMethodHS256, jwt.MapClaims{"sub": "a", "iss": "https://issuer", "aud": "baton"}), 401, "does not verify"},
		{"garbage", "Bearer abc", 401, "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, h, tc.authz)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.body) {
				t.Fatalf("%d %s, want %d with %q", w.Code, w.Body, tc.status, tc.body)
			}
			if tc.status == 401 {
				c := w.Header().Get("WWW-Authenticate")
				if !strings.HasPrefix(c, `Bearer error="invalid_token"`) || !strings.Contains(c, "resource_metadata=") {
					t.Fatalf("WWW-Authenticate = %q", c)
				}
			}
		})
	}
}

func TestOptional(t *testing.T) {
	h := verifier(t, true).Middleware(whoami)
	if w := get(t, h, ""); w.Code != 200 || w.Body.String() != "principal=" {
		t.Fatalf("anonymous: %d %s", w.Code, w.Body)
	}
	if w := get(t, h, "Bearer abc"); w.Code != 401 {
		t.Fatalf("a bad token is refused even when auth is optional: %d", w.Code)
	}
}

func TestConfigErrors(t *testing.T) {
	kf := func(*jwt.Token) (any, error) { return secret, nil }
	for _, c := range []auth.Config{{Methods: []string{"HS256"}}, {Keyfunc: kf}, {Keyfunc: kf, Methods: []string{"none"}}} {
		if _, err := auth.New(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

// A requestState issued to alice is refused when bob presents it: the
// subject is bound into the state. Served on a net/http mux (package
// mcpecho tests the same middleware under echo).
func TestStateBoundToSubject(t *testing.T) {
	srv, err := server.New(server.Implementation{Name: "t", Version: "1"}, &server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	form, err := elicit.NewForm("ok?", elicit.Boolean("ok").Required())
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	err = srv.AddTool(server.Tool{Name: "ask"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		ran++
		if _, err := req.Elicit(ctx, form, server.WithKey("ok")); err != nil {
			return nil, err
		}
		return server.TextResult("done for " + server.PrincipalFromContext(ctx)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", verifier(t, false).Middleware(srv))
	ts := httptest.NewServer(mux)
	defer ts.Close()

	// as returns a client that presents sub's bearer token.
	as := func(sub string) *mcptest.Client {
		c, err := mcptest.New(mcptest.URL(ts.URL+"/mcp", ts.Client()), &mcptest.Options{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
			Header:       http.Header{"Authorization": {"Bearer " + token(t, jwt.SigningMethodHS256, claims(sub, time.Minute))}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := t.Context()
	call := func(c *mcptest.Client, opts ...mcptest.CallOption) *mcptest.Response {
		t.Helper()
		r, err := c.Do(ctx, "tools/call", map[string]any{"name": "ask"}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	alice, bob := as("alice"), as("bob")
	r1 := call(alice)
	var round1 struct {
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(r1.Result, &round1); err != nil || r1.ResultType() != "input_required" || round1.RequestState == "" {
		t.Fatalf("alice's first call: %v %s", err, r1.Body)
	}
	answer := map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}

	ran = 0
	r2 := call(bob, mcptest.Resume(round1.RequestState, answer))
	if e := r2.Error; e == nil || e.Code != -32602 || !strings.Contains(e.Message, "it was not issued for this request") || strings.Contains(e.Message, "alice") {
		t.Fatalf("bob presenting alice's state: %s", r2.Body)
	}
	if ran != 0 {
		t.Fatal("the handler ran for a refused state")
	}
	r3 := call(alice, mcptest.Resume(round1.RequestState, answer))
	if r3.ResultType() != "complete" || !strings.Contains(string(r3.Result), "done for alice") {
		t.Fatalf("alice's own retry: %s", r3.Body)
	}
}
