package main

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// authorize_account: URL-mode elicitation in the spirit of the Ruby SDK's
// authorize_github. The tool sends the user to a third party's OAuth
// authorization page through a urlflow link bound to the caller and the
// call; the callback (on any instance) exchanges the code for a token,
// which stays on the server, encrypted per principal; the call then goes
// on (the retry of a 2026-07-28 client, or the parked 2025-11-25 call) and
// answers with the account the third party names for that token.
//
// It is registered only when BATON_OAUTH_ISSUER is set:
//
//	BATON_OAUTH_ISSUER         the third party's issuer (OpenID discovery)
//	BATON_OAUTH_CLIENT_ID      its client id (default "baton")
//	BATON_OAUTH_CLIENT_SECRET  its client secret (default "baton-secret")
//	BATON_PUBLIC_URL           this server's public origin, as browsers
//	                           reach it (behind a proxy, the proxy's);
//	                           links are BATON_PUBLIC_URL/connect/start
//	BATON_DEMO_USER_KEY        HS256 key (32+ bytes) of the demo sign-in:
//	                           MCP requests carry "Authorization: Bearer
//	                           JWT" and browsers the same JWT in the cookie
//	                           baton_demo_user; its sub is the principal
//	BATON_URLFLOW_FALLBACK     "form" or "result": the policy for clients
//	                           without elicitation.url (default: refuse)
//	BATON_URLFLOW_LEGACY_32042 "1": 2025-11-25 clients get -32042
//
// examples/oauthprovider is such a third party; examples/fleet's browser
// test runs the whole flow with headless Chromium.
const authorizeTool = "authorize_account"

// authorizeConfig is the fixture's configuration, read from the
// environment.
type authorizeConfig struct {
	issuer, clientID, secret, public string
	userKey                          []byte
	fallback                         server.URLFallback
	legacy32042                      bool
	redisURL                         string
}

func authorizeConfigFromEnv(getenv func(string) string) (*authorizeConfig, error) {
	c := &authorizeConfig{
		issuer:   getenv("BATON_OAUTH_ISSUER"),
		clientID: getenv("BATON_OAUTH_CLIENT_ID"),
		secret:   getenv("BATON_OAUTH_CLIENT_SECRET"),
		public:   strings.TrimSuffix(getenv("BATON_PUBLIC_URL"), "/"),
		userKey:  []byte(getenv("BATON_DEMO_USER_KEY")),
		redisURL: getenv("BATON_REDIS_URL"),
	}
	if c.issuer == "" {
		return nil, nil
	}
	if c.clientID == "" {
		c.clientID = "baton"
	}
	if c.secret == "" {
		c.secret = "baton-secret"
	}
	if c.public == "" {
		return nil, errors.New("BATON_OAUTH_ISSUER is set: BATON_PUBLIC_URL must be too (this server's origin as browsers reach it)")
	}
	if len(c.userKey) < 32 {
		return nil, errors.New("BATON_OAUTH_ISSUER is set: BATON_DEMO_USER_KEY must be at least 32 bytes (the demo sign-in's key)")
	}
	switch f := getenv("BATON_URLFLOW_FALLBACK"); f {
	case "":
	case "form":
		c.fallback = server.URLFallbackForm
	case "result":
		c.fallback = server.URLFallbackToolResult
	default:
		return nil, fmt.Errorf("BATON_URLFLOW_FALLBACK=%q: want form or result", f)
	}
	c.legacy32042 = getenv("BATON_URLFLOW_LEGACY_32042") == "1"
	return c, nil
}

// authorizer is the fixture: the flow, the demo sign-in and the vault.
type authorizer struct {
	cfg   *authorizeConfig
	flow  *server.URLFlow
	users *demoUsers
	vault *vault
	hc    *http.Client
	log   *slog.Logger

	mu        sync.Mutex
	discovery *oidcEndpoints
}

type oidcEndpoints struct {
	Authorization string `json:"authorization_endpoint"`
	Token         string `json:"token_endpoint"`
	UserInfo      string `json:"userinfo_endpoint"`
}

// setupAuthorize registers authorize_account on srv when the environment
// configures it, and returns what to mount on the echo router (nil when
// not configured).
func setupAuthorize(srv *server.Server, keys *mrtr.KeyRing, getenv func(string) string, log *slog.Logger) (func(*echo.Echo), error) {
	cfg, err := authorizeConfigFromEnv(getenv)
	if err != nil || cfg == nil {
		return nil, err
	}
	if keys == nil {
		// One process: a random ring is enough (links and tokens do not
		// outlive it).
		k, err := mrtr.RandomKey()
		if err != nil {
			return nil, err
		}
		if keys, err = mrtr.NewKeyRing(k); err != nil {
			return nil, err
		}
	}
	a := &authorizer{cfg: cfg, hc: &http.Client{Timeout: 10 * time.Second}, log: log}
	a.users = &demoUsers{key: cfg.userKey}
	var store server.URLFlowStore
	var rdb *redis.Client
	if cfg.redisURL != "" {
		opts, err := redis.ParseURL(cfg.redisURL)
		if err != nil {
			return nil, fmt.Errorf("BATON_REDIS_URL: %w", err)
		}
		rdb = redis.NewClient(opts)
		store = redisfleet.New(rdb, redisfleet.Options{Prefix: "baton:"}).URLFlow()
	}
	if a.vault, err = newVault(keys, rdb); err != nil {
		return nil, err
	}
	a.flow, err = server.NewURLFlow(server.URLFlowConfig{
		Keys:                keys,
		Store:               store,
		BaseURL:             cfg.public + "/connect",
		Identify:            a.identify,
		Begin:               a.begin,
		Complete:            a.complete,
		Fallback:            cfg.fallback,
		LegacyRequiredError: cfg.legacy32042,
		Logger:              log,
	})
	if err != nil {
		return nil, err
	}
	type account struct {
		Account string `json:"account"`
		Issuer  string `json:"issuer"`
	}
	err = server.AddTool(srv, server.Tool{Name: authorizeTool, Description: "Connects your account at the third party (an OAuth sign-in in your browser) and says which account it is"},
		func(ctx context.Context, req *server.ToolRequest, _ struct{}) (account, error) {
			if req.Principal() == "" {
				return account{}, errors.New("sign in first: this tool connects an account to your identity")
			}
			out, err := a.flow.AwaitTool(ctx, req, "Sign in at the third party to connect your account.", "oauth")
			if err != nil {
				return account{}, err
			}
			if !out.OK {
				return account{}, errors.New("the account was not connected: " + out.Error)
			}
			// The token never left the server: read it back from the
			// vault and ask the third party who it belongs to.
			tok, err := a.vault.get(ctx, req.Principal())
			if err != nil {
				return account{}, fmt.Errorf("the token of this connection is not available: %w", err)
			}
			name, err := a.whoami(ctx, tok)
			if err != nil {
				return account{}, fmt.Errorf("the third party did not answer: %w", err)
			}
			return account{Account: name, Issuer: cfg.issuer}, nil
		})
	if err != nil {
		return nil, err
	}
	log.Info("authorize_account", "issuer", cfg.issuer, "callback", a.flow.CallbackURL())
	return func(e *echo.Echo) {
		e.Use(echo.WrapMiddleware(a.users.Middleware))
		h := echo.WrapHandler(a.flow.Handler())
		e.GET("/connect/start", h)
		e.GET("/connect/callback", h)
	}, nil
}

// identify is the demo sign-in of browsers: the JWT in the cookie
// baton_demo_user, verified like a bearer token.
func (a *authorizer) identify(r *http.Request) (string, error) {
	c, err := r.Cookie("baton_demo_user")
	if err != nil {
		return "", nil
	}
	return a.users.subject(c.Value)
}

// demoUsers is the demo's sign-in: HS256 JWTs under one shared key, as
// bearer tokens on MCP requests and as the browser's cookie. A real
// deployment signs users in with its identity provider and verifies
// access tokens with package auth (an OAuth resource server, which
// accepts no shared-secret tokens).
type demoUsers struct{ key []byte }

// subject verifies a demo token and returns its subject.
func (u *demoUsers) subject(token string) (string, error) {
	claims := new(jwt.RegisteredClaims)
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return u.key, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithLeeway(30*time.Second), jwt.WithExpirationRequired())
	if err != nil {
		return "", fmt.Errorf("demo sign-in: %w", err)
	}
	if claims.Subject == "" {
		return "", errors.New("demo sign-in: the token has no subject")
	}
	return claims.Subject, nil
}

// Middleware binds the subject of a demo bearer token as the principal;
// requests without one pass anonymous, and a bad token gets 401.
func (u *demoUsers) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		sub, err := u.subject(tok)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "invalid token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(server.ContextWithPrincipal(r.Context(), sub)))
	})
}

func (a *authorizer) endpoints(ctx context.Context) (*oidcEndpoints, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.discovery != nil {
		return a.discovery, nil
	}
	var d oidcEndpoints
	if err := a.getJSON(ctx, strings.TrimSuffix(a.cfg.issuer, "/")+"/.well-known/openid-configuration", "", &d); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if d.Authorization == "" || d.Token == "" || d.UserInfo == "" {
		return nil, errors.New("discovery: endpoints missing")
	}
	a.discovery = &d
	return &d, nil
}

func (a *authorizer) begin(ctx context.Context, l *server.URLLink) (string, error) {
	d, err := a.endpoints(ctx)
	if err != nil {
		return "", err
	}
	q := url.Values{
		"response_type": {"code"},
		"client_id":     {a.cfg.clientID},
		"redirect_uri":  {a.flow.CallbackURL()},
		"scope":         {"openid profile email"},
		"state":         {l.State()},
	}
	return d.Authorization + "?" + q.Encode(), nil
}

func (a *authorizer) complete(ctx context.Context, l *server.URLLink, r *http.Request) (server.URLOutcome, error) {
	code := r.URL.Query().Get("code")
	if code == "" || len(code) > 2048 {
		return server.URLOutcome{}, errors.New("the callback carries no usable code")
	}
	d, err := a.endpoints(ctx)
	if err != nil {
		return server.URLOutcome{}, err
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {a.flow.CallbackURL()}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Token, strings.NewReader(form.Encode()))
	if err != nil {
		return server.URLOutcome{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(a.cfg.clientID), url.QueryEscape(a.cfg.secret))
	resp, err := a.hc.Do(req)
	if err != nil {
		return server.URLOutcome{}, fmt.Errorf("token endpoint: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &e) // only the error code is logged, never the body
		return server.URLOutcome{}, fmt.Errorf("token endpoint answered %d %s", resp.StatusCode, e.Error)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		return server.URLOutcome{}, errors.New("token endpoint: no access_token in the answer")
	}
	name, err := a.whoami(ctx, tok.AccessToken)
	if err != nil {
		return server.URLOutcome{}, err
	}
	if err := a.vault.put(ctx, l.Principal, tok.AccessToken); err != nil {
		return server.URLOutcome{}, err
	}
	return server.URLOutcome{Detail: "connected as " + name}, nil
}

// whoami asks the third party's userinfo endpoint whose token it is.
func (a *authorizer) whoami(ctx context.Context, token string) (string, error) {
	d, err := a.endpoints(ctx)
	if err != nil {
		return "", err
	}
	var info struct {
		Sub               string `json:"sub"`
		PreferredUsername string `json:"preferred_username"`
	}
	if err := a.getJSON(ctx, d.UserInfo, token, &info); err != nil {
		return "", fmt.Errorf("userinfo: %w", err)
	}
	if info.PreferredUsername != "" {
		return info.PreferredUsername, nil
	}
	if info.Sub == "" {
		return "", errors.New("userinfo: no subject")
	}
	return info.Sub, nil
}

func (a *authorizer) getJSON(ctx context.Context, u, bearer string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", req.URL.Path, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(v)
}

// vault keeps third-party tokens on the server, encrypted per principal
// (AES-256-GCM under a key derived from the state key and the principal),
// in Redis when the fleet shares one, else in this process's memory.
type vault struct {
	secret []byte
	rdb    *redis.Client
	mu     sync.Mutex
	mem    map[string][]byte
}

const vaultTTL = time.Hour

func newVault(keys *mrtr.KeyRing, rdb *redis.Client) (*vault, error) {
	k := keys.Keys()[0] // the vault is re-filled by the next sign-in after a rotation
	secret, err := hkdf.Key(sha256.New, k.Secret, nil, "baton example token vault", 32)
	if err != nil {
		return nil, err
	}
	return &vault{secret: secret, rdb: rdb, mem: map[string][]byte{}}, nil
}

func (v *vault) aead(principal string) (cipher.AEAD, string, error) {
	key, err := hkdf.Key(sha256.New, v.secret, nil, "principal\x00"+principal, 32)
	if err != nil {
		return nil, "", err
	}
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, "", err
	}
	g, err := cipher.NewGCM(blk)
	sum := sha256.Sum256([]byte(principal))
	return g, "baton:vault:" + hex.EncodeToString(sum[:16]), err
}

func (v *vault) put(ctx context.Context, principal, token string) error {
	g, name, err := v.aead(principal)
	if err != nil {
		return err
	}
	nonce := make([]byte, g.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	sealed := g.Seal(nonce, nonce, []byte(token), []byte(name))
	if v.rdb == nil {
		v.mu.Lock()
		v.mem[name] = sealed
		v.mu.Unlock()
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := v.rdb.Set(sctx, name, sealed, vaultTTL).Err(); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	return nil
}

func (v *vault) get(ctx context.Context, principal string) (string, error) {
	g, name, err := v.aead(principal)
	if err != nil {
		return "", err
	}
	var sealed []byte
	if v.rdb == nil {
		v.mu.Lock()
		sealed = v.mem[name]
		v.mu.Unlock()
	} else {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		sealed, err = v.rdb.Get(sctx, name).Bytes()
		if err != nil && !errors.Is(err, redis.Nil) {
			return "", fmt.Errorf("vault: %w", err)
		}
	}
	if len(sealed) < g.NonceSize() {
		return "", errors.New("no token kept for this principal")
	}
	plain, err := g.Open(nil, sealed[:g.NonceSize()], sealed[g.NonceSize():], []byte(name))
	if err != nil {
		return "", errors.New("vault: the kept token does not decrypt")
	}
	return string(plain), nil
}
