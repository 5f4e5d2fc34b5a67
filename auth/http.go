package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// wellKnownPath is the root form of the RFC 9728 well-known URI.
const wellKnownPath = "/.well-known/oauth-protected-resource"

// resourceMetadata is the RFC 9728 protected resource metadata document.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
	// DPoPSigningAlgValuesSupported are the algorithms accepted for DPoP
	// proofs (RFC 9449 §5.1).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// metadataURLOf returns the path-aware well-known URL of the metadata of
// resource (RFC 9728 §3.1): https://host/.well-known/oauth-protected-resource/<path>,
// the query kept, or the root form when the resource has no path.
func metadataURLOf(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("auth: resource %q is not an absolute URL", resource)
	}
	p := strings.TrimSuffix(u.Path, "/")
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: wellKnownPath + p, RawQuery: u.RawQuery}).String(), nil
}

// metadataDoc returns the metadata document the ResourceServer serves.
func (rs *ResourceServer) metadataDoc() resourceMetadata {
	return resourceMetadata{
		Resource:               rs.cfg.Resource,
		AuthorizationServers:   rs.cfg.AuthorizationServers,
		ScopesSupported:        rs.cfg.ScopesSupported,
		BearerMethodsSupported: rs.cfg.BearerMethods,
		ResourceName:           rs.cfg.ResourceName,
		ResourceDocumentation:  rs.cfg.ResourceDocumentation,

		DPoPSigningAlgValuesSupported: rs.cfg.Algorithms,
	}
}

// MetadataURL returns the URL named as resource_metadata in challenges.
func (rs *ResourceServer) MetadataURL() string { return rs.metadataURL }

// MetadataHandler serves the metadata document (GET and HEAD), with CORS
// headers so browser clients can read it, and answers CORS preflights
// (OPTIONS). Route it at the path of MetadataURL and at the root form,
// /.well-known/oauth-protected-resource (Handler routes both).
func (rs *ResourceServer) MetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, MCP-Protocol-Version")
		h.Set("Access-Control-Max-Age", "86400")
		switch r.Method {
		case http.MethodOptions:
			w.WriteHeader(http.StatusNoContent)
		case http.MethodGet, http.MethodHead:
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "public, max-age=3600")
			w.WriteHeader(http.StatusOK)
			if r.Method == http.MethodGet {
				_, _ = w.Write(rs.metadata)
			}
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
}

// Handler serves the metadata at both well-known paths and everything
// else through Protect(next): the whole HTTP surface of a protected MCP
// server in one http.Handler.
func (rs *ResourceServer) Handler(next http.Handler) http.Handler {
	mux := http.NewServeMux()
	md := rs.MetadataHandler()
	mux.Handle(wellKnownPath, md)
	if u, err := url.Parse(rs.metadataURL); err == nil && u.Path != wellKnownPath {
		mux.Handle(u.Path, md)
	}
	mux.Handle("/", rs.Protect(next))
	return mux
}

// scopeRequirer is what Protect asks the MCP handler for the scopes a
// request names (*server.Server has it).
type scopeRequirer interface {
	RequiredScopes(method, name string) []string
}

// Protect returns middleware that authenticates every request and binds
// its grant (server.ContextWithGrant: the subject as principal, scopes,
// claims), or answers 401 with the challenge: error, scope,
// resource_metadata. When next is a *server.Server, a request that names
// an operation in Mcp-Method and Mcp-Name is challenged with that
// operation's scopes; its scopes are checked by the server, before the
// body is read (403 insufficient_scope).
func (rs *ResourceServer) Protect(next http.Handler) http.Handler {
	req, _ := next.(scopeRequirer)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g, err := rs.authenticate(r)
		if err != nil {
			rs.refuse(w, r, req, err)
			return
		}
		if g == nil {
			g = &server.Grant{ResourceMetadata: rs.metadataURL} // anonymous
		} else if rs.nonceKey != nil && usesDPoP(r) {
			// The nonce to use next (RFC 9449 §8.2): a client that keeps
			// it never meets use_dpop_nonce while it is current.
			w.Header().Set("DPoP-Nonce", rs.nonce(rs.cfg.Now()))
		}
		next.ServeHTTP(w, r.WithContext(server.ContextWithGrant(r.Context(), g)))
	})
}

// challenge returns the WWW-Authenticate value for a refusal: code is the
// RFC 6750 error ("" when no token was sent), scopes the scopes to ask
// for.
func (rs *ResourceServer) challenge(code, description string, scopes []string) string {
	var parts []string
	if code != "" {
		parts = append(parts, fmt.Sprintf("error=%q", code))
		if description != "" {
			parts = append(parts, fmt.Sprintf("error_description=%q", description))
		}
	}
	if len(scopes) > 0 {
		parts = append(parts, fmt.Sprintf("scope=%q", strings.Join(scopes, " ")))
	}
	parts = append(parts, fmt.Sprintf("resource_metadata=%q", rs.metadataURL))
	return "Bearer " + strings.Join(parts, ", ")
}

// dpopChallenge is the WWW-Authenticate value of a DPoP refusal: the
// Bearer challenge's parameters under the DPoP scheme, and "algs".
func (rs *ResourceServer) dpopChallenge(code, description string, scopes []string) string {
	b := rs.challenge(code, description, scopes)
	return "DPoP " + strings.TrimPrefix(b, "Bearer ") + fmt.Sprintf(", algs=%q", rs.dpopAlgs())
}

// usesDPoP reports whether r's Authorization header has the DPoP scheme.
func usesDPoP(r *http.Request) bool {
	scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.EqualFold(scheme, "DPoP")
}

func (rs *ResourceServer) refuse(w http.ResponseWriter, r *http.Request, req scopeRequirer, err error) {
	var ae *Error
	if !errors.As(err, &ae) {
		ae = invalid("the token does not verify", err)
	}
	scopes := rs.cfg.ChallengeScopes
	if req != nil {
		method, name := r.Header.Get(rpcwire.HeaderMethod), r.Header.Get(rpcwire.HeaderName)
		if need := req.RequiredScopes(method, name); len(need) > 0 {
			scopes = need
		}
	}
	status := http.StatusUnauthorized
	if ae.Code == "invalid_request" {
		status = http.StatusBadRequest
	}
	if ae.dpop {
		// RFC 9449 §7.1: the challenge of the scheme the request used.
		w.Header().Set("WWW-Authenticate", rs.dpopChallenge(ae.Code, ae.Reason, scopes))
		if rs.nonceKey != nil {
			w.Header().Set("DPoP-Nonce", rs.nonce(rs.cfg.Now()))
		}
	} else {
		w.Header().Set("WWW-Authenticate", rs.challenge(ae.Code, ae.Reason, scopes))
		// DPoP is accepted too: say so, and with which algorithms.
		w.Header().Add("WWW-Authenticate", rs.dpopChallenge("", "", nil))
	}
	msg := "Unauthorized: " + ae.Reason
	b, _ := rpcwire.AppendError(nil, mcp.ID{}, &mcp.Error{Code: mcp.InvalidRequest, Message: msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// FromEnvironment is for stdio servers, which take credentials from their
// environment instead of an HTTP header (the specification's advice): it
// verifies the access token in the environment variable name, the same
// way as a bearer token, and returns ctx with its grant bound, to pass to
// Server.ServeStdio. An unset variable is an error unless Optional is
// set. The token is not kept: only its grant.
func (rs *ResourceServer) FromEnvironment(ctx context.Context, name string) (context.Context, error) {
	tok := strings.TrimSpace(os.Getenv(name))
	if tok == "" {
		if rs.cfg.Optional {
			return server.ContextWithGrant(ctx, &server.Grant{ResourceMetadata: rs.metadataURL}), nil
		}
		return nil, fmt.Errorf("auth: environment variable %s holds no access token", name)
	}
	g, err := rs.Verify(ctx, tok)
	if err != nil {
		return nil, fmt.Errorf("auth: the access token in %s: %w", name, err)
	}
	return server.ContextWithGrant(ctx, g), nil
}
