// Package authserver runs a real OAuth 2.1 / OpenID Connect authorization
// server for the oauth example and its tests: zitadel/oidc's op package
// (its RFC 8414 / OpenID metadata, JWKS, token and RFC 7662 introspection
// endpoints) over the in-memory storage of zitadel's own example, with
// confidential service clients that use the client credentials grant.
// Tokens it issues name the configured resource as their audience (RFC
// 8707) and carry the scopes granted in "scope". A token request with a
// valid DPoP proof (RFC 9449) gets a token bound to the proof's key:
// "cnf": {"jkt": thumbprint} in the JWT or in its introspection, and
// token_type "DPoP"; an invalid proof is refused with invalid_dpop_proof.
//
// It is a development server: in memory, one process, keys made at start.
package authserver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client is a service client registered at the server.
type Client struct {
	ID, Secret string
	// JWT: the client's access tokens are JWTs (RFC 9068); otherwise
	// opaque, to be introspected.
	JWT bool
	// Scopes are the scopes the client may be granted; others it asks
	// for are dropped.
	Scopes []string
}

// Options configure a Server.
type Options struct {
	// Addr to listen on (default "127.0.0.1:0").
	Addr string
	// Resource is the audience of every access token: the MCP endpoint's
	// URL.
	Resource string
	// Clients that may get tokens with the client credentials grant.
	Clients []Client
	// Introspector is the client ID and secret the resource server uses
	// at the introspection endpoint.
	IntrospectorID, IntrospectorSecret string
	// Wrap, if set, wraps the server's handler (tests use it to make an
	// endpoint slow or unavailable).
	Wrap func(http.Handler) http.Handler
}

// Server is a running authorization server.
type Server struct {
	// Issuer is the issuer URL (http://127.0.0.1:port).
	Issuer string
	store  *store
	hs     *http.Server
}

// Start listens and serves until Close.
func Start(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("authserver: %w", err)
	}
	issuer := "http://" + ln.Addr().String()
	st := &store{
		Storage: storage.NewStorageWithClients(storage.NewUserStore(issuer),
			map[string]*storage.Client{opts.IntrospectorID: storage.WebClient(opts.IntrospectorID, opts.IntrospectorSecret)}),
		audience: []string{opts.Resource, opts.IntrospectorID},
		clients:  map[string]Client{},
		tokens:   map[string]tokenInfo{},
	}
	if err := st.rotate(); err != nil {
		ln.Close()
		return nil, err
	}
	for _, c := range opts.Clients {
		st.clients[c.ID] = c
	}
	cfg := &op.Config{
		CryptoKey:      sha256.Sum256([]byte("baton example authorization server " + issuer)),
		CodeMethodS256: true,
		AuthMethodPost: true,
	}
	provider, err := op.NewOpenIDProvider(issuer, cfg, st, op.WithAllowInsecure())
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("authserver: %w", err)
	}
	// The provider is served through zitadel's Server interface, as a
	// LegacyServer whose client credentials grant is DPoP-aware (see
	// dpopServer): the same endpoints at the same paths.
	ds := &dpopServer{LegacyServer: op.NewLegacyServer(provider, *op.DefaultEndpoints), store: st,
		replay: newProofLedger(proofLedgerCapacity), now: time.Now}
	h := op.RegisterLegacyServer(ds, op.AuthorizeCallbackHandler(provider))
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	s := &Server{Issuer: issuer, store: st, hs: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.hs.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.hs.Close() }

// SigningKey returns the key the server signs access tokens with and its
// kid, for tests that need tokens the server would not issue (expired,
// for another audience): they are signed as the server signs its own.
func (s *Server) SigningKey(ctx context.Context) (string, *rsa.PrivateKey, error) {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	return s.store.keys[0].id, s.store.keys[0].key, nil
}

// RotateKey makes a new signing key, with a new kid, the one tokens are
// signed with from now on; the old keys stay in the JWKS.
func (s *Server) RotateKey() error { return s.store.rotate() }

// rsaKey is a signing key (op.SigningKey) and, through pubKey, its public
// half in the JWKS (op.Key).
type rsaKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *rsaKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *rsaKey) Key() any                                    { return k.key }
func (k *rsaKey) ID() string                                  { return k.id }

type pubKey struct{ k *rsaKey }

func (p pubKey) ID() string                         { return p.k.id }
func (p pubKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (p pubKey) Use() string                        { return "sig" }
func (p pubKey) Key() any                           { return &p.k.key.PublicKey }

func (s *store) rotate() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("authserver: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append([]*rsaKey{{id: fmt.Sprintf("key-%d", len(s.keys)+1), key: key}}, s.keys...)
	return nil
}

// SigningKey, SignatureAlgorithms and KeySet replace the example
// storage's single key with a ring that can rotate.
func (s *store) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[0], nil
}

func (s *store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *store) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]op.Key, len(s.keys))
	for i, k := range s.keys {
		keys[i] = pubKey{k}
	}
	return keys, nil
}

// store is zitadel's example storage with service clients of our own,
// tokens for the resource, scopes in JWTs, and introspection of opaque
// tokens issued to service clients.
type store struct {
	*storage.Storage
	audience []string
	clients  map[string]Client

	mu     sync.Mutex
	tokens map[string]tokenInfo
	keys   []*rsaKey // the signing key first
}

type tokenInfo struct {
	subject, client string
	scopes          []string
	expiry          time.Time
	jkt             string // the DPoP key the token is bound to, if any
}

// tokenRequest is the token request of a service client (client
// credentials grant): who, for which audience and scopes, and the
// thumbprint of the DPoP key its token is bound to ("" for a bearer
// token), which dpopServer sets from the request's proof.
type tokenRequest struct {
	client           string
	audience, scopes []string
	jkt              string
}

func (r *tokenRequest) GetSubject() string    { return r.client }
func (r *tokenRequest) GetAudience() []string { return r.audience }
func (r *tokenRequest) GetScopes() []string   { return r.scopes }

// serviceClient is a confidential client for the client credentials grant.
type serviceClient struct {
	op.Client
	c Client
}

func (c serviceClient) GetID() string { return c.c.ID }
func (c serviceClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (c serviceClient) AccessTokenType() op.AccessTokenType {
	if c.c.JWT {
		return op.AccessTokenTypeJWT
	}
	return op.AccessTokenTypeBearer
}

func (s *store) ClientCredentials(ctx context.Context, clientID, clientSecret string) (op.Client, error) {
	c, ok := s.clients[clientID]
	if !ok || c.Secret != clientSecret {
		return nil, errors.New("wrong client id or secret")
	}
	return serviceClient{Client: storage.WebClient(c.ID, c.Secret), c: c}, nil
}

func (s *store) ClientCredentialsTokenRequest(ctx context.Context, clientID string, scopes []string) (op.TokenRequest, error) {
	c, ok := s.clients[clientID]
	if !ok {
		return nil, errors.New("unknown client")
	}
	var granted []string
	for _, sc := range scopes {
		if slices.Contains(c.Scopes, sc) {
			granted = append(granted, sc)
		}
	}
	return &tokenRequest{client: clientID, audience: s.audience, scopes: granted}, nil
}

func (s *store) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, req)
	if err != nil {
		return "", time.Time{}, err
	}
	info := tokenInfo{subject: req.GetSubject(), client: req.GetSubject(), scopes: req.GetScopes(), expiry: exp}
	if tr, ok := req.(*tokenRequest); ok {
		info.jkt = tr.jkt
	}
	s.mu.Lock()
	s.tokens[id] = info
	s.mu.Unlock()
	return id, exp, nil
}

// GetPrivateClaimsFromScopes puts the granted scopes in the JWT's "scope"
// (RFC 9068); zitadel's access token claims leave it to the storage.
func (s *store) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	if len(scopes) == 0 {
		return nil, nil
	}
	return map[string]any{"scope": strings.Join(scopes, " "), "client_id": clientID}, nil
}

// GetPrivateClaimsFromRequest is what zitadel asks, instead of
// GetPrivateClaimsFromScopes, of a storage that has it: it sees the
// token request, so a DPoP-bound request's key goes into "cnf" (RFC 9449
// §6.1) next to the scope claims.
func (s *store) GetPrivateClaimsFromRequest(ctx context.Context, req op.TokenRequest, scopes []string) (map[string]any, error) {
	clientID := req.GetSubject()
	tr, _ := req.(*tokenRequest)
	if tr != nil {
		clientID = tr.client
	}
	claims, err := s.GetPrivateClaimsFromScopes(ctx, req.GetSubject(), clientID, scopes)
	if err != nil || tr == nil || tr.jkt == "" {
		return claims, err
	}
	if claims == nil {
		claims = map[string]any{}
	}
	claims["cnf"] = map[string]any{"jkt": tr.jkt}
	return claims, nil
}

func (s *store) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	t, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok || time.Now().After(t.expiry) || t.subject != subject {
		return errors.New("token is not active")
	}
	if !slices.Contains(s.audience, clientID) {
		return errors.New("the introspecting client is not an audience of the token")
	}
	resp.Subject = t.subject
	resp.ClientID = t.client
	resp.Scope = t.scopes
	resp.Audience = s.audience
	resp.Expiration = oidc.FromTime(t.expiry)
	resp.IssuedAt = oidc.FromTime(t.expiry.Add(-5 * time.Minute))
	resp.TokenType = oidc.BearerToken
	if t.jkt != "" {
		// RFC 9449 §6.2: the key of a DPoP-bound token.
		resp.TokenType = tokenTypeDPoP
		resp.Claims = map[string]any{"cnf": map[string]any{"jkt": t.jkt}}
	}
	return nil
}
