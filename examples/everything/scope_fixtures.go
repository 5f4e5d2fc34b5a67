package main

import (
	"net/http"
	"strings"

	"github.com/baton-mcp/baton/server"
)

// The scope challenge fixtures (SEP-2350, the conformance suite's
// sep-2350-server-scope-challenge): four of the conformance fixtures
// declare the OAuth scopes a caller needs (server.RequireScopes), and two
// opaque tokens stand for an authorization server's:
//
//   - "mcp-conformance-scope-low" grants only mcp:conformance:baseline, so
//     a call of one of the four gets 403 with one Bearer
//     error="insufficient_scope" challenge naming every scope it needs
//     and the resource's RFC 9728 metadata URL;
//   - "mcp-conformance-scope-full" grants every scope below.
//
// Every other request (no Authorization header, or the demo sign-in's)
// gets the full set: the other conformance scenarios call these fixtures
// unauthenticated, and must see them unchanged. A real server binds the
// grant from a verified token instead (package auth does).
const (
	scopeLowToken  = "mcp-conformance-scope-low"
	scopeFullToken = "mcp-conformance-scope-full"
	scopeBaseline  = "mcp:conformance:baseline"
)

// Scopes of the fixtures, by what they are.
var (
	simpleTextScopes   = []string{"mcp:conformance:tools:call", "mcp:conformance:tools:test_simple_text"}
	staticTextScopes   = []string{"mcp:conformance:resources:read", "mcp:conformance:resources:static"}
	templateScopes     = []string{"mcp:conformance:resources:read", "mcp:conformance:resources:template:123"}
	simplePromptScopes = []string{"mcp:conformance:prompts:get", "mcp:conformance:prompts:test_simple_prompt"}
)

// fullScopes is every scope a fixture needs, and the baseline.
func fullScopes() []string {
	all := []string{scopeBaseline}
	for _, set := range [][]string{simpleTextScopes, staticTextScopes, templateScopes, simplePromptScopes} {
		for _, sc := range set {
			if !contains(all, sc) {
				all = append(all, sc)
			}
		}
	}
	return all
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// withScopeFixtures binds the grant of the two fixture tokens, and the
// full one to every other request, then serves h.
func withScopeFixtures(h http.Handler) http.Handler {
	full := fullScopes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := &server.Grant{Scopes: full, ResourceMetadata: resourceMetadataURL(r)}
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			switch strings.TrimSpace(tok) {
			case scopeLowToken:
				g = &server.Grant{Subject: "scope-fixture-low", Scopes: []string{scopeBaseline}, ResourceMetadata: g.ResourceMetadata}
			case scopeFullToken:
				g.Subject = "scope-fixture-full"
			}
		}
		h.ServeHTTP(w, r.WithContext(server.ContextWithGrant(r.Context(), g)))
	})
}

// resourceMetadataURL is the RFC 9728 metadata URL of the resource r
// addresses: its origin, /.well-known/oauth-protected-resource, its path.
func resourceMetadataURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/.well-known/oauth-protected-resource" + r.URL.Path
}
