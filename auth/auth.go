// Package auth makes an MCP server an OAuth 2.1 resource server, as the
// 2026-07-28 authorization specification asks of every HTTP server that
// needs authorization:
//
//   - it serves the RFC 9728 Protected Resource Metadata document at the
//     path-aware well-known URI and at the root form, with CORS headers;
//   - it verifies each bearer token as issued for this resource (RFC 8707
//     audience), by this authorization server (issuer), in its time
//     (leeway on exp, nbf, iat): JWT access tokens (RFC 9068) with the
//     keys of the authorization server's JWKS, found through its RFC 8414
//     metadata (or OpenID discovery), and opaque tokens by RFC 7662
//     introspection;
//   - it binds what the token grants (subject, scopes, claims) to the
//     request as a server.Grant, the subject as the principal, and answers
//     every refusal with the challenge clients need to discover and step
//     up: 401 with scope and resource_metadata.
//
// Per-tool, per-prompt and per-resource scopes are declared on the server
// (server.RequireScopes) and checked there, from the Mcp-Name header
// before the body is read; a token that lacks one gets 403
// insufficient_scope.
//
// Keys come from MicahParks/keyfunc/v3 (over MicahParks/jwkset): it plugs
// into golang-jwt/v5, which Baton already uses for its requestState, so a
// token is parsed and checked by one JWT library; it caches the JWKS,
// refreshes it in the background, and refreshes it on an unknown "kid" at
// a bounded rate. lestrrat-go/jwx would bring a second JWT stack;
// coreos/go-oidc verifies ID tokens (its audience is the client ID) and
// has no introspection.
package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/baton-mcp/baton/server"
)

// Defaults of Config.
const (
	defaultLeeway            = 30 * time.Second
	defaultFetchTimeout      = 2 * time.Second
	defaultJWKSRefresh       = time.Hour
	defaultUnknownKIDRefresh = 30 * time.Second
	defaultIntrospectionTTL  = time.Minute
	defaultCacheSize         = 10000
	defaultMaxTokenBytes     = 8 << 10
	defaultMaxFetches        = 32
)

// Config configures a ResourceServer.
type Config struct {
	// Resource is the canonical URL of the MCP endpoint, for example
	// "https://mcp.example.com/mcp": the "resource" of the metadata, and
	// the audience every token must name (RFC 8707). Required.
	Resource string
	// AuthorizationServers are the issuer URLs of the authorization
	// servers whose tokens are accepted (at least one). Each one's RFC 8414
	// metadata (or OpenID configuration) gives its JWKS and introspection
	// endpoint; a token's "iss" must be one of them.
	AuthorizationServers []string
	// ScopesSupported is "scopes_supported" of the metadata: the scopes a
	// client should ask for. "offline_access" is refused (the
	// specification says a resource server should not list it).
	ScopesSupported []string
	// ChallengeScopes is the scope named in a 401 (default
	// ScopesSupported). A request that names an operation with declared
	// scopes (Mcp-Method and Mcp-Name) is challenged with those instead.
	ChallengeScopes []string
	// BearerMethods is "bearer_methods_supported" (default ["header"]).
	// Tokens are read from the Authorization header only.
	BearerMethods []string
	// ResourceName and ResourceDocumentation are the optional
	// "resource_name" and "resource_documentation" of the metadata.
	ResourceName          string
	ResourceDocumentation string

	// Leeway tolerates clock skew on exp, nbf and iat (default 30 s;
	// negative for none).
	Leeway time.Duration
	// Algorithms are the JWT signing algorithms accepted (default: the
	// RSA, RSA-PSS, ECDSA and EdDSA ones). HMAC and "none" are refused:
	// a resource server holds no shared secret, and a key from the JWKS
	// is used only with an algorithm of its own type.
	// The same list bounds the algorithms of DPoP proofs (RFC 9449),
	// advertised as "algs" in DPoP challenges and as
	// dpop_signing_alg_values_supported in the metadata.
	Algorithms []string
	// StrictTokenType refuses JWTs whose "typ" is not "at+jwt" (RFC
	// 9068). By default a "typ" of "JWT" or none is accepted too (many
	// authorization servers send it); any other "typ" is refused.
	StrictTokenType bool

	// JWKS, if set, is the JSON Web Key Set that verifies JWTs of every
	// issuer, given inline instead of discovered (an air-gapped
	// deployment, a test): no metadata is fetched, so opaque tokens
	// cannot be introspected.
	JWKS json.RawMessage

	// IntrospectionClientID and IntrospectionClientSecret authenticate
	// this resource server at the introspection endpoint (client_secret_basic).
	// Without them opaque tokens are refused.
	IntrospectionClientID     string
	IntrospectionClientSecret string
	// IntrospectionTTL bounds how long an introspection answer is reused
	// (default 1 minute); never past the token's exp.
	IntrospectionTTL time.Duration

	// FetchTimeout bounds what one request may wait on an authorization
	// server: a JWKS refresh for an unknown kid, or an introspection
	// (default 2 s). A request whose key or introspection is cached never
	// waits on one.
	FetchTimeout time.Duration
	// JWKSRefresh is how often the JWKS is refreshed in the background
	// (default 1 hour).
	JWKSRefresh time.Duration
	// UnknownKIDRefresh is the least time between two refreshes caused by
	// tokens with an unknown kid (default 30 s), and, with LazyDiscovery,
	// between two attempts to discover an authorization server.
	UnknownKIDRefresh time.Duration
	// LazyDiscovery defers each authorization server's discovery (its
	// metadata, then its JWKS) from New to the first token that needs
	// it: a JWT whose "iss" names it, or an opaque token to introspect.
	// The server can then start before its authorization servers are
	// reachable. A request that finds one unreachable is refused (401,
	// "the token could not be verified now"), and no new attempt is made
	// until UnknownKIDRefresh has passed; requests without a token, or
	// with another issuer's, never cause one.
	LazyDiscovery bool
	// MaxFetches bounds the introspection requests in flight at once
	// (default 32); a request that cannot start one within FetchTimeout
	// is refused.
	MaxFetches int
	// CacheSize bounds the verified tokens remembered (default 10,000),
	// keyed by the SHA-256 of the token, never the token.
	CacheSize int
	// MaxTokenBytes bounds a bearer token (default 8 KiB); a longer one
	// is refused before any other work.
	MaxTokenBytes int

	// DPoPReplay remembers the DPoP proofs accepted (RFC 9449 §11.1),
	// so that each is accepted once: give every instance of a fleet the
	// same one (redisfleet.Fleet.Ledger). Default: in memory, this
	// process only, holding at most 100,000 proofs, each until its iat
	// plus 5 minutes and Leeway; when that many are live, new proofs are
	// refused rather than an old one forgotten.
	DPoPReplay server.Ledger
	// DPoPNonceKey, if set, makes proofs carry a server nonce (RFC 9449
	// §9): a proof without the current one is refused with
	// use_dpop_nonce and a DPoP-Nonce header to retry with. The nonce is
	// an HMAC of the time with this key, rotated every 5 minutes (the
	// previous one still accepted): nothing is stored, and every instance
	// given the same key (at least 32 bytes) accepts the others' nonces.
	DPoPNonceKey []byte

	// Optional lets requests without a token through, anonymous; a token
	// that is present must verify. Operations with declared scopes still
	// refuse anonymous callers (401 with their scopes).
	Optional bool
	// HTTPClient fetches metadata, keys and introspection (default: a
	// client with FetchTimeout).
	HTTPClient *http.Client
	// Logger receives failures to refresh keys (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// ResourceServer verifies bearer tokens for one MCP endpoint and serves
// its protected resource metadata. It is safe for concurrent use.
type ResourceServer struct {
	cfg         Config
	metadataURL string
	metadata    []byte
	issuers     map[string]*issuer
	parser      *jwt.Parser
	cache       *tokenCache
	fetches     chan struct{}
	life        context.Context // until Close
	stop        context.CancelFunc
	htu         string        // Resource, normalised as a proof's htu is
	nonceKey    []byte        // Config.DPoPNonceKey
	replay      server.Ledger // Config.DPoPReplay or the in-memory one
}

// issuer is one authorization server.
type issuer struct {
	name          string
	keys          keyfunc.Keyfunc
	introspection string
	lazy          *lazyIssuer // LazyDiscovery: not discovered yet
}

// lazyIssuer is the discovery of an issuer on first use (LazyDiscovery).
type lazyIssuer struct {
	done  atomic.Pointer[issuer] // the issuer discovered
	turn  chan struct{}          // one discovery at a time
	tried time.Time              // the last failure and its time, held by turn
	err   error
}

// New discovers the authorization servers' metadata and keys and returns
// a ResourceServer; ctx bounds the discovery. The keys are refreshed in
// the background until Close. With Config.LazyDiscovery, New fetches
// nothing: each authorization server is discovered on first use.
func New(ctx context.Context, cfg Config) (*ResourceServer, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	life, stop := context.WithCancel(context.Background())
	rs := &ResourceServer{cfg: cfg, issuers: map[string]*issuer{}, stop: stop, life: life,
		cache: newTokenCache(cfg.CacheSize), fetches: make(chan struct{}, cfg.MaxFetches)}
	rs.htu, _ = normalHTU(cfg.Resource) // defaults checked it
	rs.nonceKey = cfg.DPoPNonceKey
	rs.replay = cfg.DPoPReplay
	if rs.replay == nil {
		rs.replay = newReplayLedger(replayCapacity, cfg.Now)
	}
	var err error
	if rs.metadataURL, err = metadataURLOf(cfg.Resource); err != nil {
		stop()
		return nil, err
	}
	if rs.metadata, err = json.Marshal(rs.metadataDoc()); err != nil {
		stop()
		return nil, fmt.Errorf("auth: encode metadata: %w", err)
	}
	for _, iss := range cfg.AuthorizationServers {
		if cfg.LazyDiscovery {
			if _, err := metadataURLs(iss); err != nil {
				stop()
				return nil, err
			}
			rs.issuers[iss] = &issuer{name: iss, lazy: &lazyIssuer{turn: make(chan struct{}, 1)}}
			continue
		}
		is, err := rs.discover(ctx, life, iss)
		if err != nil {
			stop()
			return nil, err
		}
		rs.issuers[iss] = is
	}
	rs.parser = newParser(cfg)
	return rs, nil
}

// newParser is the JWT parser of cfg: algorithms pinned, exp required,
// the audience, iat, the leeway and the clock.
func newParser(cfg Config) *jwt.Parser {
	opts := []jwt.ParserOption{jwt.WithValidMethods(cfg.Algorithms), jwt.WithExpirationRequired(),
		jwt.WithAudience(cfg.Resource), jwt.WithIssuedAt(), jwt.WithTimeFunc(cfg.Now)}
	if cfg.Leeway > 0 {
		opts = append(opts, jwt.WithLeeway(cfg.Leeway))
	}
	return jwt.NewParser(opts...)
}

func (c *Config) defaults() error {
	if c.Resource == "" {
		return errors.New("auth: Config.Resource (the MCP endpoint's URL) is required")
	}
	if u, err := url.Parse(c.Resource); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Fragment != "" {
		return fmt.Errorf("auth: Config.Resource %q is not an absolute http(s) URL without fragment", c.Resource)
	}
	if c.DPoPNonceKey != nil && len(c.DPoPNonceKey) < 32 {
		return errors.New("auth: Config.DPoPNonceKey must be at least 32 bytes")
	}
	if len(c.AuthorizationServers) == 0 {
		return errors.New("auth: Config.AuthorizationServers needs at least one issuer URL")
	}
	if slices.Contains(c.ScopesSupported, "offline_access") || slices.Contains(c.ChallengeScopes, "offline_access") {
		return errors.New("auth: offline_access must not be listed in scopes_supported or challenges")
	}
	if c.ChallengeScopes == nil {
		c.ChallengeScopes = c.ScopesSupported
	}
	if len(c.BearerMethods) == 0 {
		c.BearerMethods = []string{"header"}
	}
	for _, m := range c.BearerMethods {
		if m != "header" {
			return fmt.Errorf("auth: bearer method %q is not supported (only \"header\")", m)
		}
	}
	if c.Leeway == 0 {
		c.Leeway = defaultLeeway
	}
	if len(c.Algorithms) == 0 {
		c.Algorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
	}
	for _, a := range c.Algorithms {
		if keyTypeOf(a) == "" {
			return fmt.Errorf("auth: algorithm %q cannot be accepted (only asymmetric ones: RS*, PS*, ES*, EdDSA)", a)
		}
	}
	if c.IntrospectionTTL <= 0 {
		c.IntrospectionTTL = defaultIntrospectionTTL
	}
	if c.FetchTimeout <= 0 {
		c.FetchTimeout = defaultFetchTimeout
	}
	if c.JWKSRefresh <= 0 {
		c.JWKSRefresh = defaultJWKSRefresh
	}
	if c.UnknownKIDRefresh <= 0 {
		c.UnknownKIDRefresh = defaultUnknownKIDRefresh
	}
	if c.MaxFetches <= 0 {
		c.MaxFetches = defaultMaxFetches
	}
	if c.CacheSize <= 0 {
		c.CacheSize = defaultCacheSize
	}
	if c.MaxTokenBytes <= 0 {
		c.MaxTokenBytes = defaultMaxTokenBytes
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: c.FetchTimeout}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Close stops refreshing keys.
func (rs *ResourceServer) Close() { rs.stop() }

// keyTypeOf is the key type an algorithm verifies with, "" for the ones
// refused (HMAC, none, unknown).
func keyTypeOf(alg string) string {
	switch alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		return "RSA"
	case "ES256", "ES384", "ES512":
		return "EC"
	case "EdDSA":
		return "OKP"
	}
	return ""
}

// asMetadata is the part of RFC 8414 / OpenID discovery used here.
type asMetadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// metadataURLs are where an issuer's metadata may be: RFC 8414 (path
// inserted), OpenID Connect discovery (path inserted, then appended).
func metadataURLs(iss string) ([]string, error) {
	u, err := url.Parse(iss)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("auth: issuer %q is not an absolute URL", iss)
	}
	p := strings.TrimSuffix(u.Path, "/")
	at := func(path string) string {
		v := *u
		v.Path, v.RawPath = path, ""
		return v.String()
	}
	urls := []string{at("/.well-known/oauth-authorization-server" + p), at("/.well-known/openid-configuration" + p)}
	if p != "" {
		urls = append(urls, at(p+"/.well-known/openid-configuration"))
	}
	return urls, nil
}

// discover reads an issuer's metadata and starts its key set.
func (rs *ResourceServer) discover(ctx, life context.Context, iss string) (*issuer, error) {
	if rs.cfg.JWKS != nil {
		kf, err := keyfunc.NewJWKSetJSON(rs.cfg.JWKS)
		if err != nil {
			return nil, fmt.Errorf("auth: Config.JWKS: %w", err)
		}
		return &issuer{name: iss, keys: kf}, nil
	}
	urls, err := metadataURLs(iss)
	if err != nil {
		return nil, err
	}
	var md *asMetadata
	var errs []error
	for _, u := range urls {
		m, err := rs.fetchMetadata(ctx, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if m.Issuer != iss {
			errs = append(errs, fmt.Errorf("%s names issuer %q, not %q", u, m.Issuer, iss))
			continue
		}
		md = m
		break
	}
	if md == nil {
		return nil, fmt.Errorf("auth: no metadata for issuer %q: %w", iss, errors.Join(errs...))
	}
	is := &issuer{name: iss, introspection: md.IntrospectionEndpoint}
	if md.JWKSURI != "" {
		logger := rs.cfg.Logger
		kf, err := keyfunc.NewDefaultOverrideCtx(life, []string{md.JWKSURI}, keyfunc.Override{
			Client:            rs.cfg.HTTPClient,
			HTTPTimeout:       rs.cfg.FetchTimeout,
			RefreshInterval:   rs.cfg.JWKSRefresh,
			RefreshUnknownKID: rate.NewLimiter(rate.Every(rs.cfg.UnknownKIDRefresh), 1),
			// The limiter's wait and the refresh share this bound (and
			// the request's own FetchTimeout): an unknown kid that would
			// wait longer for the limiter fails at once.
			RateLimitWaitMax: rs.cfg.FetchTimeout,
			RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
				return func(_ context.Context, err error) {
					logger.Warn("auth: JWKS refresh failed; the keys cached are kept", "url", u, "err", err)
				}
			},
		})
		if err != nil {
			return nil, fmt.Errorf("auth: JWKS of %q: %w", iss, err)
		}
		is.keys = kf
	}
	return is, nil
}

// errDiscovery fails a token whose issuer could not be discovered
// (LazyDiscovery).
var errDiscovery = errors.New("the authorization server could not be discovered")

// resolve returns the issuer is, discovered: with LazyDiscovery, on its
// first use, waiting at most ctx for another request's discovery of it.
func (rs *ResourceServer) resolve(ctx context.Context, is *issuer) (*issuer, error) {
	l := is.lazy
	if l == nil {
		return is, nil
	}
	if d := l.done.Load(); d != nil {
		return d, nil
	}
	select {
	case l.turn <- struct{}{}:
		defer func() { <-l.turn }()
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", errDiscovery, ctx.Err())
	}
	if d := l.done.Load(); d != nil {
		return d, nil
	}
	now := rs.cfg.Now()
	if l.err != nil && now.Before(l.tried.Add(rs.cfg.UnknownKIDRefresh)) {
		return nil, l.err
	}
	d, err := rs.discover(ctx, rs.life, is.name)
	if err != nil {
		l.tried, l.err = now, fmt.Errorf("%w: %w", errDiscovery, err)
		rs.cfg.Logger.Warn("auth: discovery of the authorization server failed", "issuer", is.name, "err", err)
		return nil, l.err
	}
	l.err = nil
	l.done.Store(d)
	return d, nil
}

func (rs *ResourceServer) fetchMetadata(ctx context.Context, u string) (*asMetadata, error) {
	ctx, cancel := context.WithTimeout(ctx, rs.cfg.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := rs.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
	}
	var m asMetadata
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return &m, nil
}

// Error is a token refused. Status is 401 (or 403 for insufficient scope).
type Error struct {
	// Code is the RFC 6750 error code ("invalid_token"), "" when no token
	// was sent.
	Code string
	// Reason is safe to show to the client.
	Reason string
	// Err is the underlying failure, for the server's log; it may say
	// more than the client should read.
	Err error

	dpop bool // the request used the DPoP scheme: a DPoP challenge
}

// Error returns the reason, prefixed with "auth: ".
func (e *Error) Error() string { return "auth: " + e.Reason }

// Unwrap returns the underlying failure.
func (e *Error) Unwrap() error { return e.Err }

func invalid(reason string, err error) *Error {
	return &Error{Code: "invalid_token", Reason: reason, Err: err}
}

// errNoToken is a request without a bearer token.
func errNoToken() *Error { return &Error{Reason: "a bearer token is required"} }

// authenticate verifies the bearer token of r and returns its grant. It
// returns nil and no error for an anonymous request when Optional is set.
// Errors are *Error.
func (rs *ResourceServer) authenticate(r *http.Request) (*server.Grant, error) {
	h := r.Header.Values("Authorization")
	if len(h) == 0 {
		if rs.cfg.Optional {
			return nil, nil
		}
		return nil, errNoToken()
	}
	if len(h) > 1 {
		return nil, &Error{Code: "invalid_request", Reason: "more than one Authorization header"}
	}
	scheme, tok, ok := strings.Cut(h[0], " ")
	switch {
	case ok && strings.EqualFold(scheme, "DPoP"):
		return rs.authenticateDPoP(r, strings.TrimSpace(tok))
	case !ok || !strings.EqualFold(scheme, "Bearer"):
		return nil, errNoToken()
	}
	g, err := rs.Verify(r.Context(), strings.TrimSpace(tok))
	if err == nil && boundKey(g) != "" {
		// RFC 9449 §7.2: a DPoP-bound token is not a bearer token.
		return nil, invalid("the token is bound to a DPoP key: send it with the DPoP scheme and a proof", nil)
	}
	return g, err
}

// Verify verifies an access token and returns its grant. A token verified
// before is answered from the cache while it is valid. Errors are *Error.
func (rs *ResourceServer) Verify(ctx context.Context, token string) (*server.Grant, error) {
	if token == "" {
		return nil, invalid("the token is empty", nil)
	}
	if len(token) > rs.cfg.MaxTokenBytes {
		return nil, invalid("the token is too long", nil)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= 0x20 || c >= 0x7f {
			return nil, invalid("the token is malformed", nil)
		}
	}
	now := rs.cfg.Now()
	key := sha256.Sum256([]byte(token))
	if g, err, ok := rs.cache.get(key, now); ok {
		return g, err
	}
	ctx, cancel := context.WithTimeout(ctx, rs.cfg.FetchTimeout)
	defer cancel()
	if strings.Count(token, ".") == 2 {
		g, err := rs.verifyJWT(ctx, token)
		if err == nil {
			rs.cache.put(key, g, nil, g.Expiry, now)
		}
		return g, err
	}
	g, cacheFor, err := rs.introspect(ctx, token)
	if cacheFor > 0 {
		until := now.Add(cacheFor)
		if g != nil && !g.Expiry.IsZero() && g.Expiry.Before(until) {
			until = g.Expiry
		}
		rs.cache.put(key, g, err, until, now)
	}
	return g, err
}

// keyTypeMatches reports whether key is of the type want ("RSA", "EC",
// "OKP") names.
func keyTypeMatches(key any, want string) bool {
	switch key.(type) {
	case *rsa.PublicKey:
		return want == "RSA"
	case *ecdsa.PublicKey:
		return want == "EC"
	case ed25519.PublicKey:
		return want == "OKP"
	}
	return false
}

// errIssuer and errKeyType fail a JWT in the key function.
var (
	errIssuer  = errors.New("issuer not accepted")
	errKeyType = errors.New("the algorithm does not match the key's type")
	errNoKeys  = errors.New("the issuer publishes no JWKS")
)

func (rs *ResourceServer) verifyJWT(ctx context.Context, token string) (*server.Grant, error) {
	claims := jwt.MapClaims{}
	_, err := rs.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		iss, _ := claims["iss"].(string)
		is := rs.issuers[iss]
		if is == nil {
			return nil, errIssuer
		}
		is, err := rs.resolve(ctx, is)
		if err != nil {
			return nil, err
		}
		if is.keys == nil {
			return nil, errNoKeys
		}
		key, err := is.keys.KeyfuncCtx(ctx)(t)
		if err != nil {
			return nil, err
		}
		// Pin the algorithm to the key's type: an RSA key verifies RS*
		// and PS* only, never HMAC with the public key as secret.
		want := keyTypeOf(t.Method.Alg())
		if set, ok := key.(jwt.VerificationKeySet); ok {
			// A token that names no key (no "kid": RFC 7515 makes it
			// optional) is tried against the issuer's keys of the
			// algorithm's type only.
			var keys []jwt.VerificationKey
			for _, k := range set.Keys {
				if keyTypeMatches(k, want) {
					keys = append(keys, k)
				}
			}
			if len(keys) == 0 {
				return nil, errKeyType
			}
			return jwt.VerificationKeySet{Keys: keys}, nil
		}
		if !keyTypeMatches(key, want) {
			return nil, errKeyType
		}
		return key, nil
	})
	if err != nil {
		return nil, invalid(describe(err), err)
	}
	// RFC 9068: an access token says so in "typ".
	typ, _ := headerTyp(token)
	switch strings.ToLower(typ) {
	case "at+jwt", "application/at+jwt":
	case "", "jwt":
		if rs.cfg.StrictTokenType {
			return nil, invalid(`the token's typ is not "at+jwt"`, nil)
		}
	default:
		return nil, invalid("the token's typ "+fmt.Sprintf("%q", typ)+" is not an access token's", nil)
	}
	return rs.grant(claims)
}

// headerTyp reads "typ" of a JWT's header (already verified).
func headerTyp(token string) (string, error) {
	t, _, err := jwt.NewParser().ParseUnverified(token, jwt.MapClaims{})
	if err != nil {
		return "", err
	}
	typ, _ := t.Header["typ"].(string)
	return typ, nil
}

// grant builds the grant of verified claims.
func (rs *ResourceServer) grant(claims map[string]any) (*server.Grant, error) {
	g := &server.Grant{Claims: claims, ResourceMetadata: rs.metadataURL}
	g.Subject, _ = claims["sub"].(string)
	if g.Subject == "" {
		return nil, invalid("the token has no subject", nil)
	}
	if g.ClientID, _ = claims["client_id"].(string); g.ClientID == "" {
		g.ClientID, _ = claims["azp"].(string)
	}
	switch sc := claims["scope"].(type) {
	case string:
		g.Scopes = strings.Fields(sc)
	case []any:
		for _, s := range sc {
			if s, ok := s.(string); ok {
				g.Scopes = append(g.Scopes, s)
			}
		}
	}
	if scp, ok := claims["scp"].([]any); ok && g.Scopes == nil {
		for _, s := range scp {
			if s, ok := s.(string); ok {
				g.Scopes = append(g.Scopes, s)
			}
		}
	}
	if exp, ok := claims["exp"].(float64); ok {
		g.Expiry = time.Unix(int64(exp), 0)
	} else if n, ok := claims["exp"].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			g.Expiry = time.Unix(v, 0)
		}
	}
	return g, nil
}

func describe(err error) string {
	switch {
	case errors.Is(err, errDiscovery):
		return "the token could not be verified now"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the token has expired"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "the token is not for this resource"
	case errors.Is(err, errIssuer):
		return "the token is from another issuer"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "the token is not valid yet"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "the token is malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid) && strings.Contains(err.Error(), "signing method"):
		return "the token's algorithm is not accepted"
	case errors.Is(err, keyfunc.ErrKeyfunc):
		return "the token's key is unknown"
	default:
		return "the token does not verify"
	}
}

// introspection is the part of an RFC 7662 response used here.
type introspection struct {
	Active    bool            `json:"active"`
	Scope     string          `json:"scope"`
	ClientID  string          `json:"client_id"`
	Subject   string          `json:"sub"`
	Issuer    string          `json:"iss"`
	Audience  json.RawMessage `json:"aud"`
	Expiry    int64           `json:"exp"`
	NotBefore int64           `json:"nbf"`
	// Confirmation binds the token to a key (RFC 7800; "jkt": DPoP).
	Confirmation map[string]any `json:"cnf,omitempty"`
}

// introspect asks the authorization server about an opaque token. It
// returns the grant or the error, and how long the answer may be reused
// (0: not at all, for a failure to ask).
func (rs *ResourceServer) introspect(ctx context.Context, token string) (*server.Grant, time.Duration, error) {
	if rs.cfg.IntrospectionClientID == "" {
		return nil, rs.cfg.IntrospectionTTL, invalid("the token is malformed", nil)
	}
	var is *issuer
	var errs []error
	for _, iss := range rs.cfg.AuthorizationServers {
		d, err := rs.resolve(ctx, rs.issuers[iss])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d.introspection != "" {
			is = d
			break
		}
	}
	if is == nil {
		if len(errs) > 0 {
			// Not known yet whether an introspection endpoint exists.
			return nil, 0, invalid("the token could not be verified now", errors.Join(errs...))
		}
		return nil, rs.cfg.IntrospectionTTL, invalid("the token is malformed", nil)
	}
	select {
	case rs.fetches <- struct{}{}:
		defer func() { <-rs.fetches }()
	case <-ctx.Done():
		return nil, 0, invalid("the token could not be verified now", ctx.Err())
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, is.introspection, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, 0, invalid("the token could not be verified now", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(rs.cfg.IntrospectionClientID), url.QueryEscape(rs.cfg.IntrospectionClientSecret))
	resp, err := rs.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, 0, invalid("the token could not be verified now", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, invalid("the token could not be verified now", fmt.Errorf("introspection: HTTP %d", resp.StatusCode))
	}
	var in introspection
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&in); err != nil {
		return nil, 0, invalid("the token could not be verified now", fmt.Errorf("introspection: %w", err))
	}
	now := rs.cfg.Now()
	negative := min(rs.cfg.IntrospectionTTL, 10*time.Second)
	switch {
	case !in.Active:
		return nil, negative, invalid("the token is not active", nil)
	case in.Expiry == 0:
		return nil, negative, invalid("the token has no expiry", nil)
	case now.After(time.Unix(in.Expiry, 0).Add(rs.cfg.Leeway)):
		return nil, negative, invalid("the token has expired", nil)
	case in.NotBefore != 0 && now.Add(rs.cfg.Leeway).Before(time.Unix(in.NotBefore, 0)):
		return nil, 0, invalid("the token is not valid yet", nil)
	case in.Issuer != "" && in.Issuer != is.name:
		return nil, negative, invalid("the token is from another issuer", nil)
	case !audienceNames(in.Audience, rs.cfg.Resource):
		return nil, negative, invalid("the token is not for this resource", nil)
	}
	var claims map[string]any
	_ = json.Unmarshal(mustJSON(in), &claims)
	g := &server.Grant{Subject: in.Subject, ClientID: in.ClientID, Scopes: strings.Fields(in.Scope),
		Expiry: time.Unix(in.Expiry, 0), Claims: claims, ResourceMetadata: rs.metadataURL}
	if g.Subject == "" {
		g.Subject = in.ClientID
	}
	if g.Subject == "" {
		return nil, negative, invalid("the token has no subject", nil)
	}
	return g, rs.cfg.IntrospectionTTL, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// audienceNames reports whether aud (a string or an array of strings)
// names resource.
func audienceNames(aud json.RawMessage, resource string) bool {
	var one string
	if json.Unmarshal(aud, &one) == nil {
		return one == resource
	}
	var many []string
	if json.Unmarshal(aud, &many) == nil {
		return slices.Contains(many, resource)
	}
	return false
}

// tokenCache remembers verified tokens (and, briefly, refused opaque
// ones) by the SHA-256 of the token, until an expiry. It holds at most
// max entries: when full, expired entries go first, then arbitrary ones.
type tokenCache struct {
	mu  sync.Mutex
	max int
	m   map[[32]byte]cached
}

type cached struct {
	g     *server.Grant
	err   error
	until time.Time
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, m: make(map[[32]byte]cached)}
}

func (c *tokenCache) get(k [32]byte, now time.Time) (*server.Grant, error, bool) {
	c.mu.Lock()
	e, ok := c.m[k]
	if ok && !now.Before(e.until) {
		delete(c.m, k)
		ok = false
	}
	c.mu.Unlock()
	return e.g, e.err, ok
}

func (c *tokenCache) put(k [32]byte, g *server.Grant, err error, until, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for key, e := range c.m {
			if !now.Before(e.until) {
				delete(c.m, key)
			}
		}
		for key := range c.m {
			if len(c.m) < c.max*7/8 {
				break
			}
			delete(c.m, key)
		}
	}
	c.m[k] = cached{g: g, err: err, until: until}
}
