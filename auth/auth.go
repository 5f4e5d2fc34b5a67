// Package auth authenticates MCP requests with bearer tokens (JWTs verified
// with golang-jwt) as net/http middleware (for echo, wrap it with
// echo.WrapMiddleware; see package mcpecho). The token's subject
// becomes the request's principal (server.ContextWithPrincipal): requestState
// issued to one subject is refused for any other, and a legacy session
// opened by one subject is not found by another.
package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/jsonrpc"
	"github.com/baton-mcp/baton/server"
)

// Config says which bearer tokens are accepted.
type Config struct {
	// Keyfunc returns the key that verifies a token (an HMAC secret, or an
	// RSA, ECDSA or Ed25519 public key, usually chosen by the "kid" header).
	Keyfunc jwt.Keyfunc
	// Methods lists the accepted signing algorithms, for example
	// []string{"RS256"}. It is required: the algorithm is never taken from
	// the token alone.
	Methods []string
	// Issuer, when set, must match the token's iss.
	Issuer string
	// Audience, when set, must be one of the token's aud.
	Audience string
	// Leeway tolerates clock skew on exp, nbf and iat.
	Leeway time.Duration
	// Optional lets requests without an Authorization header through as
	// anonymous; a token that is present must still verify.
	Optional bool
	// ResourceMetadata, if set, is advertised in WWW-Authenticate as the
	// protected resource metadata URL (RFC 9728), as MCP clients expect.
	ResourceMetadata string
}

// Verifier checks bearer tokens. It is safe for concurrent use.
type Verifier struct {
	cfg    Config
	parser *jwt.Parser
}

// New returns a Verifier for cfg.
func New(cfg Config) (*Verifier, error) {
	if cfg.Keyfunc == nil {
		return nil, errors.New("auth: Keyfunc is required")
	}
	if len(cfg.Methods) == 0 {
		return nil, errors.New("auth: Methods is required (for example []string{\"RS256\"})")
	}
	for _, m := range cfg.Methods {
		if strings.EqualFold(m, "none") {
			return nil, errors.New("auth: the none algorithm cannot be accepted")
		}
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods(cfg.Methods), jwt.WithExpirationRequired(), jwt.WithLeeway(cfg.Leeway)}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	return &Verifier{cfg: cfg, parser: jwt.NewParser(opts...)}, nil
}

// Error is an authentication failure.
type Error struct {
	// Reason is safe to show to the client.
	Reason string
	// Err is the underlying failure (from the JWT library, say), for the
	// server's log; it may say more than the client should read.
	Err error
}

// Error returns the reason, prefixed with "auth: ".
func (e *Error) Error() string { return "auth: " + e.Reason }

// Unwrap returns the underlying failure.
func (e *Error) Unwrap() error { return e.Err }

// Subject verifies the request's bearer token and returns its subject. It
// returns "" and no error for an anonymous request when Optional is set.
func (v *Verifier) Subject(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		if v.cfg.Optional {
			return "", nil
		}
		return "", &Error{Reason: "missing bearer token"}
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", &Error{Reason: "the Authorization header must be \"Bearer <token>\""}
	}
	claims := jwt.RegisteredClaims{}
	if _, err := v.parser.ParseWithClaims(strings.TrimSpace(token), &claims, v.cfg.Keyfunc); err != nil {
		return "", &Error{Reason: describe(err), Err: err}
	}
	if claims.Subject == "" {
		return "", &Error{Reason: "the token has no subject"}
	}
	return claims.Subject, nil
}

func describe(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the token has expired"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "the token is for another audience"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "the token is from another issuer"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "the token is not valid yet"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "the token is malformed"
	default:
		return "the token does not verify"
	}
}

func (v *Verifier) challenge(w http.ResponseWriter, e *Error) {
	c := fmt.Sprintf(`Bearer error="invalid_token", error_description=%q`, e.Reason)
	if v.cfg.ResourceMetadata != "" {
		c += fmt.Sprintf(`, resource_metadata=%q`, v.cfg.ResourceMetadata)
	}
	w.Header().Set("WWW-Authenticate", c)
	b, _ := rpcwire.AppendError(nil, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.InvalidRequest, Message: "Unauthorized: " + e.Reason})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(b)
}

// Middleware returns net/http middleware that authenticates each request
// and binds its subject as the principal, or answers 401 with a
// WWW-Authenticate challenge.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub, err := v.Subject(r)
		if err != nil {
			var ae *Error
			errors.As(err, &ae)
			v.challenge(w, ae)
			return
		}
		if sub != "" {
			r = r.WithContext(server.ContextWithPrincipal(r.Context(), sub))
		}
		next.ServeHTTP(w, r)
	})
}
