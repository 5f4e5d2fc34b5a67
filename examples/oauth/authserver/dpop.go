package authserver

// DPoP at the token endpoint (RFC 9449 §5): a client credentials request
// that carries a DPoP proof gets an access token bound to the proof's key.
//
// zitadel/oidc v3 (v3.52) has DPoP only on the relying party's side
// (OpenID Connect Key Binding of ID tokens, in pkg/client/rp, with
// helpers marked experimental in pkg/oidc); its op package neither reads
// a DPoP header nor binds access tokens. Of the ways
// to add it, the one used here is the extension point zitadel made for
// it: op.LegacyServer embedded in a type of ours (op.ExtendedLegacyServer)
// with one method overridden, ClientCredentialsExchange. That method is
// given the request's method, URL and headers (op.Request) next to the
// parsed form and the authenticated client, and returns the response
// object, so the proof is read where the grant is handled and token_type
// is set on the response itself. The alternatives are hackier: a
// middleware around the token endpoint would have to carry the thumbprint
// to the storage in the request's context and rewrite token_type in a
// response body already written; the storage alone never sees the HTTP
// request. The thumbprint reaches the JWT through the token request
// (tokenRequest.jkt), which zitadel hands to the storage's
// GetPrivateClaimsFromRequest.
//
// The proof is parsed and verified with github.com/go-jose/go-jose/v4
// (zitadel's own JOSE library): its compact parser takes the algorithms
// allowed and refuses a "jwk" header with private parameters, and
// JSONWebKey computes the RFC 7638 thumbprint.

import (
	"context"
	"crypto"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

const (
	// tokenTypeDPoP is the token_type of a DPoP-bound token (RFC 9449 §5).
	tokenTypeDPoP = "DPoP"
	// errInvalidDPoPProof is the error of a token request whose proof is
	// refused (RFC 9449 §5, 400).
	errInvalidDPoPProof = "invalid_dpop_proof"
	// proofWindow is how far a proof's iat may be from now, either way.
	proofWindow = 5 * time.Minute
	// maxProofBytes bounds a DPoP header.
	maxProofBytes = 8 << 10
	// maxJTIBytes bounds a proof's jti.
	maxJTIBytes = 128
	// proofLedgerCapacity bounds the proofs remembered against replay.
	proofLedgerCapacity = 10000
)

// proofAlgs are the algorithms a proof may be signed with: asymmetric
// only (RFC 9449 §4.2).
var proofAlgs = []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512}

// dpopServer is zitadel's LegacyServer whose client credentials grant
// binds tokens to a DPoP key; every other endpoint is the LegacyServer's.
type dpopServer struct {
	*op.LegacyServer
	store  *store
	replay *proofLedger
	now    func() time.Time
}

// ClientCredentialsExchange issues a bearer token as zitadel does when
// the request has no DPoP header, and otherwise a token bound to the key
// of its proof, or refuses the proof.
func (s *dpopServer) ClientCredentialsExchange(ctx context.Context, r *op.ClientRequest[oidc.ClientCredentialsRequest]) (*op.Response, error) {
	proofs := r.Header.Values("DPoP")
	if len(proofs) == 0 {
		return s.LegacyServer.ClientCredentialsExchange(ctx, r)
	}
	htu := s.Endpoints().Token.Absolute(op.IssuerFromContext(ctx))
	jkt, err := s.checkProof(proofs, r.Method, htu)
	if err != nil {
		return nil, &oidc.Error{ErrorType: errInvalidDPoPProof, Description: err.Error()}
	}
	treq, err := s.store.ClientCredentialsTokenRequest(ctx, r.Client.GetID(), r.Data.Scope)
	if err != nil {
		return nil, err
	}
	tr, ok := treq.(*tokenRequest)
	if !ok {
		return nil, oidc.ErrServerError().WithDescription("unexpected token request")
	}
	tr.jkt = jkt
	resp, err := op.CreateClientCredentialsTokenResponse(ctx, tr, s.Provider(), r.Client)
	if err != nil {
		return nil, err
	}
	resp.TokenType = tokenTypeDPoP
	return op.NewResponse(resp), nil
}

// Discovery adds dpop_signing_alg_values_supported (RFC 9449 §5.1) to
// zitadel's metadata.
func (s *dpopServer) Discovery(ctx context.Context, r *op.Request[struct{}]) (*op.Response, error) {
	resp, err := s.LegacyServer.Discovery(ctx, r)
	if err != nil {
		return nil, err
	}
	if d, ok := resp.Data.(*oidc.DiscoveryConfiguration); ok {
		resp.Data = struct {
			*oidc.DiscoveryConfiguration
			DPoPAlgs []jose.SignatureAlgorithm `json:"dpop_signing_alg_values_supported"`
		}{d, proofAlgs}
	}
	return resp, nil
}

// proofClaims are the claims of a proof read at the token endpoint.
type proofClaims struct {
	JTI string   `json:"jti"`
	HTM string   `json:"htm"`
	HTU string   `json:"htu"`
	IAT *float64 `json:"iat"`
}

// checkProof checks the DPoP proof of a token request (RFC 9449 §4.3):
// one header; a JWS of typ dpop+jwt with an asymmetric alg, signed by the
// public jwk of its header; htm the request's method and htu the token
// endpoint's URL; iat within the window; its jti not seen before. It
// returns the base64url RFC 7638 SHA-256 thumbprint of the key.
func (s *dpopServer) checkProof(proofs []string, method, htu string) (string, error) {
	if len(proofs) != 1 {
		return "", errors.New("more than one DPoP header")
	}
	if len(proofs[0]) > maxProofBytes {
		return "", errors.New("the DPoP proof is too long")
	}
	jws, err := jose.ParseSignedCompact(proofs[0], proofAlgs)
	if err != nil {
		return "", errors.New("the DPoP proof is not a JWS of an accepted algorithm")
	}
	if len(jws.Signatures) != 1 {
		return "", errors.New("the DPoP proof is not a JWS of an accepted algorithm")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, "dpop+jwt") {
		return "", errors.New(`the DPoP proof's typ is not "dpop+jwt"`)
	}
	key := h.JSONWebKey
	if key == nil || !key.Valid() || !key.IsPublic() {
		return "", errors.New("the DPoP proof has no public jwk")
	}
	if k, ok := key.Key.(*rsa.PublicKey); ok && k.N.BitLen() < 2048 {
		return "", errors.New("the DPoP proof's RSA key is shorter than 2048 bits")
	}
	payload, err := jws.Verify(key.Key)
	if err != nil {
		return "", errors.New("the DPoP proof's signature does not verify with its jwk")
	}
	var c proofClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return "", errors.New("the DPoP proof's claims are malformed")
	}
	now := s.now()
	switch {
	case c.JTI == "" || len(c.JTI) > maxJTIBytes:
		return "", errors.New("the DPoP proof has no jti, or a too long one")
	case c.HTM != method:
		return "", errors.New("the DPoP proof's htm is not the request's method")
	case !sameURL(c.HTU, htu):
		return "", fmt.Errorf("the DPoP proof's htu is not %s", htu)
	case c.IAT == nil || math.IsNaN(*c.IAT) || math.Abs(*c.IAT-float64(now.Unix())) > proofWindow.Seconds():
		return "", errors.New("the DPoP proof's iat is not within 5 minutes of now")
	}
	tp, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", errors.New("the DPoP proof's jwk has no thumbprint")
	}
	jkt := base64.RawURLEncoding.EncodeToString(tp)
	iat := time.Unix(int64(*c.IAT), 0)
	if err := s.replay.redeem(jkt+" "+c.JTI, iat.Add(proofWindow), now); err != nil {
		return "", err
	}
	return jkt, nil
}

// sameURL reports whether a proof's htu names the URL want: compared
// without query and fragment (RFC 9449 §4.3), scheme and host in any
// case, a default port the same as none.
func sameURL(htu, want string) bool {
	norm := func(s string) (string, bool) {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || u.User != nil {
			return "", false
		}
		scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
		if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
			port = ""
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		if port != "" {
			host += ":" + port
		}
		path := u.EscapedPath()
		if path == "" {
			path = "/"
		}
		return scheme + "://" + host + path, true
	}
	a, ok1 := norm(htu)
	b, ok2 := norm(want)
	return ok1 && ok2 && a == b
}

// proofLedger remembers the proofs accepted, each until it could no
// longer be accepted, so that each is accepted once (RFC 9449 §11.1). It
// is bounded: when full of live proofs it refuses new ones rather than
// forget one.
type proofLedger struct {
	mu  sync.Mutex
	max int
	m   map[string]time.Time
}

func newProofLedger(max int) *proofLedger {
	return &proofLedger{max: max, m: map[string]time.Time{}}
}

func (l *proofLedger) redeem(id string, until, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if exp, ok := l.m[id]; ok && now.Before(exp) {
		return errors.New("the DPoP proof was used before")
	}
	if len(l.m) >= l.max {
		for k, exp := range l.m {
			if !now.Before(exp) {
				delete(l.m, k)
			}
		}
		if len(l.m) >= l.max {
			return errors.New("too many DPoP proofs at once; retry later")
		}
	}
	l.m[id] = until
	return nil
}
