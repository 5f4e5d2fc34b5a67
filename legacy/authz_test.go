package legacy_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/server"
)

// TestScopesCheckedOnEitherDecoding checks that a session's calls are
// authorized from their bodies the same way whether the server decodes
// the body in one pass (the usual request) or on its general path (here
// forced by a name spelled with an escape, which the one-pass decoder
// leaves to it): a call the grant does not cover is refused with 403, a
// WWW-Authenticate challenge and the same JSON-RPC error, and the same
// call with the scope is served, for a tool, a prompt and a resource.
func TestScopesCheckedOnEitherDecoding(t *testing.T) {
	srv := newServer(t)
	if err := srv.AddTool(server.Tool{Name: "read", Description: "read"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("read by " + server.PrincipalFromContext(ctx)), nil
	}, server.RequireScopes("r")); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrompt(server.Prompt{Name: "p"}, func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
		return &server.PromptResult{}, nil
	}, server.RequireScopes("r")); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResource(server.Resource{URI: "res://x", Name: "x"}, func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
		return &server.ResourceResult{}, nil
	}, server.RequireScopes("r")); err != nil {
		t.Fatal(err)
	}
	// The authentication middleware: X-Test-Scopes are alice's scopes for
	// the request.
	f := newFixtureWith(t, srv, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			g := &server.Grant{Subject: "alice", Scopes: strings.Fields(r.Header.Get("X-Test-Scopes"))}
			next.ServeHTTP(w, r.WithContext(server.ContextWithGrant(r.Context(), g)))
		})
	})
	c := connect(t, f, `{}`)

	id := 100
	for _, tc := range []struct {
		method, params, escaped string
	}{
		{"tools/call", `{"name":"read"}`, `{"name":"\u0072ead"}`},
		{"prompts/get", `{"name":"p"}`, `{"name":"\u0070"}`},
		{"resources/read", `{"uri":"res://x"}`, `{"uri":"\u0072es://x"}`},
	} {
		var refusals []string
		for _, params := range []string{tc.params, tc.escaped} {
			id++
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, tc.method, params)
			s := c.do(http.MethodPost, []byte(body), map[string]string{"X-Test-Scopes": "other"})
			if s.status != http.StatusForbidden || s.header.Get("WWW-Authenticate") == "" {
				t.Fatalf("%s without the scope: status %d, WWW-Authenticate %q; want 403 and a challenge", body, s.status, s.header.Get("WWW-Authenticate"))
			}
			e := s.rpcErr(fmt.Sprint(id))
			refusals = append(refusals, fmt.Sprintf("%d %s | %s", e.Code, e.Message, s.header.Get("WWW-Authenticate")))

			id++
			body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, tc.method, params)
			s = c.do(http.MethodPost, []byte(body), map[string]string{"X-Test-Scopes": "r"})
			if s.status != http.StatusOK {
				t.Fatalf("%s with the scope: status %d, want 200", body, s.status)
			}
			res := s.result(fmt.Sprint(id))
			if tc.method == "tools/call" {
				if text, isErr := toolText(t, res); isErr || text != "read by alice" {
					t.Fatalf("%s with the scope: %q (isError %v)", body, text, isErr)
				}
			}
		}
		if refusals[0] != refusals[1] {
			t.Errorf("%s: the two decodings are refused differently:\n%s\n%s", tc.method, refusals[0], refusals[1])
		}
	}
}
