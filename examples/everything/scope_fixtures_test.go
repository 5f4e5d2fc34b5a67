package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcptest"
)

// TestScopeChallengeFixtures holds the contract of the conformance suite's
// sep-2350-server-scope-challenge (on its main branch, not in the pinned
// release): the low token gets, for each of the four operations, 403 with
// one Bearer insufficient_scope challenge naming every scope the operation
// needs and the resource metadata URL; the full token gets the result;
// no token gets it too (the other scenarios run unauthenticated).
func TestScopeChallengeFixtures(t *testing.T) {
	srv := exampleServer(t, testKey)
	ts := httptest.NewServer(withScopeFixtures(srv))
	t.Cleanup(ts.Close)
	c, err := mcptest.New(mcptest.URL(ts.URL+"/mcp", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, op := range []struct {
		method string
		params map[string]any
		scopes []string
	}{
		{"tools/call", map[string]any{"name": "test_simple_text", "arguments": map[string]any{}}, simpleTextScopes},
		{"resources/read", map[string]any{"uri": "test://static-text"}, staticTextScopes},
		{"resources/read", map[string]any{"uri": "test://template/123/data"}, templateScopes},
		{"prompts/get", map[string]any{"name": "test_simple_prompt"}, simplePromptScopes},
	} {
		low, err := c.Do(ctx, op.method, op.params, mcptest.WithHeader("Authorization", "Bearer "+scopeLowToken))
		if err != nil {
			t.Fatalf("%s %v: %v", op.method, op.params, err)
		}
		challenge := low.Header.Get("WWW-Authenticate")
		if low.Status != 403 || !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, `error="insufficient_scope"`) ||
			!strings.Contains(challenge, `scope="`+strings.Join(op.scopes, " ")+`"`) ||
			!strings.Contains(challenge, `resource_metadata="`+ts.URL+`/.well-known/oauth-protected-resource/mcp"`) {
			t.Errorf("%s %v with the low token: HTTP %d, WWW-Authenticate %q; want 403 and one insufficient_scope challenge for %v", op.method, op.params, low.Status, challenge, op.scopes)
		}
		for _, tok := range []string{"Bearer " + scopeFullToken, ""} {
			opt := mcptest.WithoutHeader("Authorization")
			if tok != "" {
				opt = mcptest.WithHeader("Authorization", tok)
			}
			res, err := c.Do(ctx, op.method, op.params, opt)
			if err != nil || res.Status != 200 || res.Error != nil || res.Result == nil {
				t.Errorf("%s %v with %q: %v %+v, want a result", op.method, op.params, tok, err, res)
			}
		}
	}
}
