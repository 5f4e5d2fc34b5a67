package auth

import (
	"context"
	"strings"
	"testing"
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
		got, err := MetadataURL(resource)
		if err != nil || got != want {
			t.Errorf("MetadataURL(%q) = %q, %v; want %q", resource, got, err, want)
		}
	}
	if _, err := MetadataURL("/mcp"); err == nil {
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
	got := rs.Challenge("invalid_token", "the token has expired", []string{"a", "b"})
	want := `Bearer error="invalid_token", error_description="the token has expired", scope="a b", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := rs.Challenge("", "", nil); got != `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"` {
		t.Fatalf("no token: %s", got)
	}
}
