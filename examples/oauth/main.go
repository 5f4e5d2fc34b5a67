// Command oauth serves an MCP server that is an OAuth 2.1 resource server:
// it publishes its protected resource metadata, accepts only access
// tokens issued for it by its authorization server (JWTs checked with the
// server's JWKS, opaque tokens by introspection), and declares scopes per
// tool, so each caller sees and calls only what its token allows.
//
// Without -issuer it starts a real authorization server on loopback too
// (zitadel/oidc's op package, see package authserver) with two service
// clients for the client credentials grant: "jwt-client" (JWT access
// tokens) and "opaque-client" (opaque tokens), secret "secret", both
// allowed the scopes files:read and files:write. A token request that
// carries a DPoP proof (RFC 9449) gets a token bound to the proof's key
// (token_type "DPoP", "cnf": {"jkt": ...}); the resource server accepts
// such a token only as "Authorization: DPoP <token>" with a proof for
// the request, and bearer tokens as before (see dpop_test.go).
//
//	cd examples && go run ./oauth
//	curl -si http://127.0.0.1:8090/mcp                 # 401 with the challenge
//	curl -s http://127.0.0.1:8090/.well-known/oauth-protected-resource/mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/baton-mcp/baton/auth"
	"github.com/baton-mcp/baton/examples/oauth/authserver"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// The scopes of the example.
const (
	ScopeRead  = "files:read"
	ScopeWrite = "files:write"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// newMCPServer registers three tools: whoami (any token), read_file
// (files:read) and write_file (files:read and files:write).
func newMCPServer() (*server.Server, error) {
	srv, err := server.New(mcp.Implementation{Name: "oauth-example", Version: "1.0.0"},
		&server.Options{Legacy: legacy.New(nil)})
	if err != nil {
		return nil, err
	}
	type FileArgs struct {
		Path string `json:"path" jsonschema:"the file's path"`
	}
	type WriteArgs struct {
		Path    string `json:"path" jsonschema:"the file's path"`
		Content string `json:"content" jsonschema:"what to write"`
	}
	type Who struct {
		Subject string   `json:"subject"`
		Scopes  []string `json:"scopes"`
	}
	err = server.AddTool(srv, server.Tool{Name: "whoami", Description: "Says who the token belongs to and what it grants"},
		func(ctx context.Context, req *server.ToolRequest, _ struct{}) (Who, error) {
			g := server.GrantFromContext(ctx)
			if g == nil {
				return Who{}, fmt.Errorf("no grant")
			}
			return Who{Subject: g.Subject, Scopes: append([]string{}, g.Scopes...)}, nil
		})
	if err != nil {
		return nil, err
	}
	err = server.AddTool(srv, server.Tool{Name: "read_file", Description: "Reads a file"},
		func(ctx context.Context, req *server.ToolRequest, in FileArgs) (*server.ToolResult, error) {
			return server.TextResult("contents of " + in.Path), nil
		}, server.RequireScopes(ScopeRead))
	if err != nil {
		return nil, err
	}
	err = server.AddTool(srv, server.Tool{Name: "write_file", Description: "Writes a file"},
		func(ctx context.Context, req *server.ToolRequest, in WriteArgs) (*server.ToolResult, error) {
			return server.TextResult(fmt.Sprintf("wrote %d bytes to %s", len(in.Content), in.Path)), nil
		}, server.RequireScopes(ScopeRead, ScopeWrite))
	if err != nil {
		return nil, err
	}
	return srv, nil
}

// newResourceServer configures the resource server for resource (the
// MCP endpoint's URL) and the authorization server issuer. DPoP needs no
// option: a token bound to a key is accepted only with the DPoP scheme
// and a proof, an unbound one only as Bearer; the proofs seen are
// remembered in memory (this is one process; a fleet would set
// DPoPReplay), and no server nonce is asked for (DPoPNonceKey unset).
func newResourceServer(ctx context.Context, resource, issuer, introID, introSecret string) (*auth.ResourceServer, error) {
	return auth.New(ctx, auth.Config{
		Resource:                  resource,
		AuthorizationServers:      []string{issuer},
		ScopesSupported:           []string{ScopeRead, ScopeWrite},
		ChallengeScopes:           []string{ScopeRead},
		IntrospectionClientID:     introID,
		IntrospectionClientSecret: introSecret,
	})
}

// handler is the whole HTTP surface: metadata and the protected endpoint.
func handler(rs *auth.ResourceServer, srv *server.Server) http.Handler {
	return rs.Handler(srv)
}

// Demo clients of the bundled authorization server.
var demoClients = []authserver.Client{
	{ID: "jwt-client", Secret: "secret", JWT: true, Scopes: []string{ScopeRead, ScopeWrite}},
	{ID: "opaque-client", Secret: "secret", Scopes: []string{ScopeRead, ScopeWrite}},
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on")
	issuer := flag.String("issuer", "", "the authorization server's issuer URL (default: start one on loopback)")
	introID := flag.String("introspection-client", "baton-rs", "client ID for the introspection endpoint")
	flag.Parse()
	introSecret := os.Getenv("BATON_INTROSPECTION_SECRET")

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	resource := "http://" + ln.Addr().String() + Path
	if *issuer == "" {
		if introSecret == "" {
			introSecret = "rs-secret"
		}
		as, err := authserver.Start(authserver.Options{Resource: resource, Clients: demoClients,
			IntrospectorID: *introID, IntrospectorSecret: introSecret})
		if err != nil {
			log.Fatal(err)
		}
		defer as.Close()
		*issuer = as.Issuer
		log.Printf("authorization server: %s (clients %s, secret \"secret\")", as.Issuer, strings.Join([]string{"jwt-client", "opaque-client"}, ", "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	rs, err := newResourceServer(ctx, resource, *issuer, *introID, introSecret)
	cancel()
	if err != nil {
		log.Fatal(err)
	}
	defer rs.Close()
	srv, err := newMCPServer()
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("MCP endpoint %s, metadata %s", resource, rs.MetadataURL())
	hs := &http.Server{Handler: handler(rs, srv), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	log.Fatal(hs.Serve(ln))
}
