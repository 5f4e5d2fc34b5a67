package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// logTransport records the requests a client sends and their statuses.
type logTransport struct {
	mu   sync.Mutex
	log  []string
	next http.RoundTripper
}

func (l *logTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	l.mu.Lock()
	l.log = append(l.log, r.Method+" "+r.URL.Path+" "+http.StatusText(status))
	l.mu.Unlock()
	return resp, err
}

func (l *logTransport) lines() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.log, "\n")
}

// TestGoSDKDiscoveryAndStepUp drives the official go-sdk client, with its
// client credentials OAuth handler, against the server: 401 → protected
// resource metadata → authorization server metadata → token → calls; then
// 403 insufficient_scope on a tool that needs more → a token with the
// extra scope → success. Nothing of the client is ours.
func TestGoSDKDiscoveryAndStepUp(t *testing.T) {
	f := start(t, nil)
	lt := &logTransport{next: http.DefaultTransport}
	hc := &http.Client{Transport: lt, Timeout: 30 * time.Second}
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: "jwt-client",
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: "secret"}, Issuer: f.as.Issuer},
		HTTPClient: hc,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.url, OAuthHandler: h, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, lt.lines())
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	// The first token has the challenge's scope (files:read): write_file
	// is not listed.
	if got := strings.Join(names, " "); got != "whoami read_file" {
		t.Fatalf("tools with the first token: %q", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}})
	if err != nil || res.IsError {
		t.Fatalf("read_file: %v %+v", err, res)
	}
	// write_file needs files:write too: 403 insufficient_scope, the
	// handler asks for a token with both scopes, and the call succeeds.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("write_file after step-up: %v %+v\n%s", err, res, lt.lines())
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; txt != "wrote 2 bytes to a.txt" {
		t.Fatalf("write_file: %q", txt)
	}
	log := lt.lines()
	t.Logf("client's requests:\n%s", log)
	t.Logf("server's answers:\n%s", strings.Join(f.recorder.lines(), "\n"))
	// The walk, in order.
	want := []string{
		"POST /mcp Unauthorized",
		"GET /.well-known/oauth-protected-resource/mcp OK",
		"/.well-known/", // the authorization server's metadata (RFC 8414, then OpenID)
		"POST /oauth/token OK",
		"POST /mcp OK",
		"POST /mcp Forbidden",
		"POST /oauth/token OK",
		"POST /mcp OK",
	}
	at := 0
	for _, line := range strings.Split(log, "\n") {
		if at < len(want) && strings.Contains(line, want[at]) {
			at++
		}
	}
	if at != len(want) {
		t.Fatalf("the client's walk lacks %q (in order) in:\n%s", want[at], log)
	}
	var challenged bool
	for _, l := range f.recorder.lines() {
		if strings.Contains(l, " 403 ") && strings.Contains(l, `error="insufficient_scope", scope="files:read files:write", resource_metadata="`+f.rs.MetadataURL()+`"`) {
			challenged = true
		}
	}
	if !challenged {
		t.Fatalf("no 403 with the full challenge in:\n%s", strings.Join(f.recorder.lines(), "\n"))
	}
}
