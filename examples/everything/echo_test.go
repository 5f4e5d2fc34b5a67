package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/labstack/echo/v4"

	"github.com/baton-mcp/baton/auth"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

func whoamiServer(t *testing.T) *server.Server {
	t.Helper()
	srv, err := server.New(mcp.Implementation{Name: "t", Version: "1"}, &server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	err = server.AddTool(srv, server.Tool{Name: "whoami"}, func(ctx context.Context, req *server.ToolRequest, _ struct{}) (*server.ToolResult, error) {
		return server.TextResult("principal=" + req.Principal()), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func whoami(t *testing.T, target mcptest.Target, opts *mcptest.Options) string {
	t.Helper()
	c, err := mcptest.New(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(t.Context(), "whoami", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Text()
}

// mountMCP serves the endpoint at its path, behind the middleware given;
// the server answers GET without a session 405 with a JSON-RPC body; other
// paths and methods are echo's.
func TestEchoMount(t *testing.T) {
	e := echo.New()
	var saw string
	mountMCP(e, "/mcp", whoamiServer(t), func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			saw = c.Request().Header.Get("Mcp-Method")
			return next(c)
		}
	})
	if got := whoami(t, mcptest.HandlerAt("http://localhost/mcp", e), nil); got != "principal=" {
		t.Fatalf("whoami = %q", got)
	}
	if saw != "tools/call" {
		t.Errorf("middleware saw method %q, want tools/call", saw)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		jsonrpc      bool
	}{
		{http.MethodGet, "/mcp", http.StatusMethodNotAllowed, true},
		{http.MethodDelete, "/mcp", http.StatusMethodNotAllowed, true},
		{http.MethodPut, "/mcp", http.StatusMethodNotAllowed, false},
		{http.MethodPost, "/other", http.StatusNotFound, false},
	} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader("{}")))
		if rec.Code != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, rec.Code, tc.status)
		}
		if got := strings.Contains(rec.Body.String(), `"jsonrpc":"2.0"`); got != tc.jsonrpc {
			t.Errorf("%s %s: JSON-RPC body %v, want %v: %s", tc.method, tc.path, got, tc.jsonrpc, rec.Body)
		}
	}
}

// auth's net/http middleware, wrapped by echo.WrapMiddleware, binds the
// token's subject as the principal the server sees, and refuses a request
// without a token before the server runs.
func TestEchoMountWithAuth(t *testing.T) {
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
	keys, err := set.JSONPublic(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.New(context.Background(), auth.Config{
		Resource:             "http://localhost/mcp",
		AuthorizationServers: []string{"https://issuer"},
		JWKS:                 keys, // inline: no authorization server to discover here
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	e := echo.New()
	mountMCP(e, "/mcp", whoamiServer(t), echo.WrapMiddleware(v.Protect))

	signed := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"sub": "alice", "iss": "https://issuer", "aud": "http://localhost/mcp", "exp": time.Now().Add(time.Minute).Unix(),
	})
	signed.Header["kid"] = "k1"
	tok, err := signed.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	got := whoami(t, mcptest.HandlerAt("http://localhost/mcp", e), &mcptest.Options{Header: http.Header{"Authorization": {"Bearer " + tok}}})
	if got != "principal=alice" {
		t.Fatalf("whoami = %q, want principal=alice", got)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" {
		t.Fatalf("without a token: status %d, WWW-Authenticate %q", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
}
