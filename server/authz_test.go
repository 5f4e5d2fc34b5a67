package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcptest"
)

const testMetadata = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"

// grantFromHeader stands for an authentication middleware (package auth
// in production): X-Test-Sub and X-Test-Scopes become the request's
// Grant; X-Test-Anonymous binds an anonymous one; neither binds none.
func grantFromHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("X-Test-Sub") != "":
			g := &Grant{Subject: r.Header.Get("X-Test-Sub"), Scopes: strings.Fields(r.Header.Get("X-Test-Scopes")),
				Claims: map[string]any{"tenant": r.Header.Get("X-Test-Tenant")}, ResourceMetadata: testMetadata}
			r = r.WithContext(ContextWithGrant(r.Context(), g))
		case r.Header.Get("X-Test-Anonymous") != "":
			r = r.WithContext(ContextWithGrant(r.Context(), &Grant{ResourceMetadata: testMetadata}))
		}
		next.ServeHTTP(w, r)
	})
}

func scopedServer(t *testing.T, opts *Options) *Server {
	t.Helper()
	s := newTestServer(t, opts)
	ok := func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		return TextResult("ok " + GrantFromContext(ctx).Subject), nil
	}
	mustAddTool(t, s, Tool{Name: "open"}, ok)
	mustAddTool(t, s, Tool{Name: "read"}, ok, RequireScopes("r"))
	mustAddTool(t, s, Tool{Name: "write"}, ok, RequireScopes("r", "w"))
	prompt := func(ctx context.Context, req *PromptRequest) (*PromptResult, error) { return &PromptResult{}, nil }
	if err := s.AddPrompt(Prompt{Name: "p"}, prompt, RequireScopes("r")); err != nil {
		t.Fatal(err)
	}
	res := func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error) {
		return &ResourceResult{}, nil
	}
	if err := s.AddResource(Resource{URI: "res://x", Name: "x"}, res, RequireScopes("r")); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: "res://t/{id}", Name: "t"}, res, RequireScopes("w")); err != nil {
		t.Fatal(err)
	}
	s.SetCompletion(func(ctx context.Context, req *CompletionRequest) (*Completion, error) {
		return &Completion{Values: []string{"secret-value"}}, nil
	})
	return s
}

func clientWith(t *testing.T, s *Server, header http.Header) *mcptest.Client {
	t.Helper()
	c, err := mcptest.New(mcptest.Handler(grantFromHeader(s)), &mcptest.Options{Header: header,
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			return mcptest.Accept(map[string]any{"ok": true})
		}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func names[T any](items []T, name func(T) string) string {
	var out []string
	for _, it := range items {
		out = append(out, name(it))
	}
	return strings.Join(out, " ")
}

// TestListsFollowScopes: each caller sees the tools, prompts, resources
// and templates its scopes allow, discover advertises only what it sees,
// and every such answer is cacheScope "private".
func TestListsFollowScopes(t *testing.T) {
	s := scopedServer(t, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		scopes                          string
		tools, prompts, res, tmpl, caps string
	}{
		{"", "open", "", "", "", "tools"},
		{"r", "open read", "p", "res://x", "", "tools prompts resources"},
		{"r w", "open read write", "p", "res://x", "res://t/{id}", "tools prompts resources"},
		{"w", "open", "", "", "res://t/{id}", "tools resources"},
	} {
		c := clientWith(t, s, http.Header{"X-Test-Sub": {"alice"}, "X-Test-Scopes": {tc.scopes}})
		tools, err := c.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(tools, func(x mcptest.Tool) string { return x.Name }); got != tc.tools {
			t.Errorf("scopes %q: tools %q, want %q", tc.scopes, got, tc.tools)
		}
		prompts, _ := c.ListPrompts(ctx)
		if got := names(prompts, func(x mcptest.Prompt) string { return x.Name }); got != tc.prompts {
			t.Errorf("scopes %q: prompts %q, want %q", tc.scopes, got, tc.prompts)
		}
		res, _ := c.ListResources(ctx)
		if got := names(res, func(x mcptest.Resource) string { return x.URI }); got != tc.res {
			t.Errorf("scopes %q: resources %q, want %q", tc.scopes, got, tc.res)
		}
		tmpl, _ := c.ListResourceTemplates(ctx)
		if got := names(tmpl, func(x mcptest.ResourceTemplate) string { return x.URITemplate }); got != tc.tmpl {
			t.Errorf("scopes %q: templates %q, want %q", tc.scopes, got, tc.tmpl)
		}
		resp, err := c.Do(ctx, "tools/list", nil)
		if err != nil {
			t.Fatal(err)
		}
		var hint struct {
			Scope string `json:"cacheScope"`
		}
		if json.Unmarshal(resp.Result, &hint) != nil || hint.Scope != "private" {
			t.Errorf("tools/list cacheScope %q, want private", hint.Scope)
		}
		resp, err = c.Do(ctx, "server/discover", nil)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
			Scope        string                     `json:"cacheScope"`
		}
		if err := json.Unmarshal(resp.Result, &d); err != nil {
			t.Fatal(err)
		}
		var caps []string
		for _, k := range []string{"tools", "prompts", "resources"} {
			if _, ok := d.Capabilities[k]; ok {
				caps = append(caps, k)
			}
		}
		if got := strings.Join(caps, " "); got != tc.caps || d.Scope != "private" {
			t.Errorf("scopes %q: discover capabilities %q (%s), want %q private", tc.scopes, got, d.Scope, tc.caps)
		}
	}
	// A server without scopes or a hook keeps public lists.
	plain := newTestServer(t, nil)
	textTool(plain, t, "hello", "hi")
	c := clientWith(t, plain, nil)
	resp, err := c.Do(ctx, "tools/list", nil)
	if err != nil || !strings.Contains(string(resp.Result), `"cacheScope":"public"`) {
		t.Fatalf("plain server: %v %s", err, resp.Result)
	}
}

// TestScopeRefusal: the refusal's status and challenge for each kind of
// caller, decided from Mcp-Name before the body is read (a body the
// server could not even parse gets the same answer).
func TestScopeRefusal(t *testing.T) {
	s := scopedServer(t, nil)
	h := grantFromHeader(s)
	for _, tc := range []struct {
		name      string
		header    map[string]string
		body      string
		status    int
		challenge string
	}{
		{"lacks w", map[string]string{"X-Test-Sub": "alice", "X-Test-Scopes": "r"}, "", 403,
			`Bearer error="insufficient_scope", scope="r w", resource_metadata="` + testMetadata + `"`},
		{"lacks w, unparseable body", map[string]string{"X-Test-Sub": "alice", "X-Test-Scopes": "r"}, "{not json", 403,
			`Bearer error="insufficient_scope", scope="r w", resource_metadata="` + testMetadata + `"`},
		{"anonymous", map[string]string{"X-Test-Anonymous": "1"}, "", 401,
			`Bearer scope="r w", resource_metadata="` + testMetadata + `"`},
		{"no authentication at all", nil, "", 401, `Bearer scope="r w"`},
		{"has both", map[string]string{"X-Test-Sub": "alice", "X-Test-Scopes": "w r"}, "", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if body == "" {
				body = string(toolLine(t, 1, "write", nil, nil))
			}
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set(headerProtocolVersion, testVersion)
			req.Header.Set(headerMethod, "tools/call")
			req.Header.Set(headerName, "write")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status || rec.Header().Get("WWW-Authenticate") != tc.challenge {
				t.Fatalf("got %d %q, want %d %q\n%s", rec.Code, rec.Header().Get("WWW-Authenticate"), tc.status, tc.challenge, rec.Body)
			}
		})
	}
	// Prompts and resources (by template) are checked the same way.
	c := clientWith(t, s, http.Header{"X-Test-Sub": {"bob"}, "X-Test-Scopes": {"r"}})
	resp, err := c.Do(context.Background(), "resources/read", map[string]any{"uri": "res://t/7"})
	if err != nil || resp.Status != 403 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="w"`) {
		t.Fatalf("template read: %v %d %v", err, resp.Status, resp.Header)
	}
	if _, err := c.GetPrompt(context.Background(), "p", nil); err != nil {
		t.Fatalf("prompt with r: %v", err)
	}
	// Completing a template's arguments needs the template's scopes.
	resp, err = c.Do(context.Background(), "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/resource", "uri": "res://t/{id}"}, "argument": map[string]any{"name": "id", "value": ""}})
	if err != nil || resp.Status != 403 || strings.Contains(string(resp.Body), "secret-value") {
		t.Fatalf("completion of a template without its scope: %v %d %s", err, resp.Status, resp.Body)
	}
	resp, err = c.Do(context.Background(), "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "x", "value": ""}})
	if err != nil || resp.Status != 200 || !strings.Contains(string(resp.Body), "secret-value") {
		t.Fatalf("completion of a prompt with its scope: %v %d %s", err, resp.Status, resp.Body)
	}
}

// TestScopeRefusalStdio: over stdio the grant comes with the context
// (auth.FromEnvironment), and a refusal is a JSON-RPC error naming the
// scopes.
func TestScopeRefusalStdio(t *testing.T) {
	s := scopedServer(t, nil)
	ctx := ContextWithGrant(context.Background(), &Grant{Subject: "cli", Scopes: []string{"r"}})
	st := startStdio(t, ctx, s)
	st.send(toolLine(t, 1, "read", nil, nil))
	if m := st.next(); m.Error != nil || !strings.Contains(string(m.Result), "ok cli") {
		t.Fatalf("read: %+v %s", m.Error, m.Result)
	}
	st.send(toolLine(t, 2, "write", nil, nil))
	m := st.next()
	if m.Error == nil || !strings.Contains(m.Error.Message, "insufficient scope (needs r w)") {
		t.Fatalf("write: %+v %s", m.Error, m.Result)
	}
}

// TestStateBindsScopes: the requestState of a scoped call is bound to the
// scopes it was checked against. A retry with a token that lost one is
// refused (403); a state issued under one set of scopes does not verify
// under another.
func TestStateBindsScopes(t *testing.T) {
	s := newTestServer(t, nil)
	form, err := elicit.NewForm("Sure?", elicit.Boolean("ok").Required())
	if err != nil {
		t.Fatal(err)
	}
	ask := func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if _, err := req.Elicit(ctx, form); err != nil {
			return nil, err
		}
		return TextResult("done"), nil
	}
	mustAddTool(t, s, Tool{Name: "ask"}, ask, RequireScopes("r"))
	ctx := context.Background()
	first := func() *mcptest.Response {
		c := clientWith(t, s, http.Header{"X-Test-Sub": {"alice"}, "X-Test-Scopes": {"r w"}})
		resp, err := c.Do(ctx, "tools/call", map[string]any{"name": "ask"})
		if err != nil || resp.ResultType() != "input_required" {
			t.Fatalf("round 1: %v %s", err, resp.Body)
		}
		return resp
	}
	retry := func(state json.RawMessage, scopes string) *mcptest.Response {
		c := clientWith(t, s, http.Header{"X-Test-Sub": {"alice"}, "X-Test-Scopes": {scopes}})
		var st string
		_ = json.Unmarshal(state, &st)
		resp, err := c.Do(ctx, "tools/call", map[string]any{"name": "ask", "requestState": st,
			"inputResponses": map[string]any{"baton:0": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	stateOf := func(r *mcptest.Response) json.RawMessage {
		var res struct {
			RequestState json.RawMessage `json:"requestState"`
		}
		_ = json.Unmarshal(r.Result, &res)
		return res.RequestState
	}
	// The same scopes: completes.
	if r := retry(stateOf(first()), "r w"); r.ResultType() != "complete" {
		t.Fatalf("retry: %d %s", r.Status, r.Body)
	}
	// The token lost r: 403 before anything else.
	if r := retry(stateOf(first()), "w"); r.Status != 403 {
		t.Fatalf("retry without r: %d %s", r.Status, r.Body)
	}
	// The tool now needs r and w: the state checked under r alone is
	// refused.
	st := stateOf(first())
	mustAddTool(t, s, Tool{Name: "ask"}, ask, RequireScopes("r", "w"))
	r := retry(st, "r w")
	if r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("state checked under other scopes: %d %s", r.Status, r.Body)
	}
}

// TestVisibleHook: Options.Visible hides what scopes cannot express (a
// tenant): the tool is left out of the list and answered as unknown.
func TestVisibleHook(t *testing.T) {
	s := newTestServer(t, &Options{Visible: func(ctx context.Context, it Item) bool {
		g := GrantFromContext(ctx)
		return it.Name != "acme_report" || (g != nil && g.Claims["tenant"] == "acme")
	}})
	textTool(s, t, "acme_report", "numbers")
	textTool(s, t, "hello", "hi")
	ctx := context.Background()
	for _, tenant := range []string{"acme", "globex"} {
		c := clientWith(t, s, http.Header{"X-Test-Sub": {"u"}, "X-Test-Tenant": {tenant}})
		tools, err := c.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := names(tools, func(x mcptest.Tool) string { return x.Name })
		_, callErr := c.CallTool(ctx, "acme_report", nil)
		var me *mcptest.Error
		switch tenant {
		case "acme":
			if got != "acme_report hello" || callErr != nil {
				t.Fatalf("acme: %q %v", got, callErr)
			}
		default:
			if got != "hello" || !errors.As(callErr, &me) || me.Code != -32602 || !strings.Contains(me.Message, "unknown tool") {
				t.Fatalf("globex: %q %v", got, callErr)
			}
		}
	}
}

func TestRequireScopesChecked(t *testing.T) {
	s := newTestServer(t, nil)
	h := func(ctx context.Context, req *ToolRequest) (*ToolResult, error) { return TextResult(""), nil }
	for _, bad := range []string{"", "a b", `a"b`, "é"} {
		if err := s.AddTool(Tool{Name: "t"}, h, RequireScopes(bad)); err == nil {
			t.Errorf("scope %q accepted", bad)
		}
	}
	if err := s.AddTool(Tool{Name: "t"}, h, RequireScopes("files:read", "files:read")); err != nil {
		t.Fatal(err)
	}
	if got := s.RequiredScopes("tools/call", "t"); !slices.Equal(got, []string{"files:read"}) {
		t.Fatalf("RequiredScopes = %v", got)
	}
}

// TestScopesNotedEveryKind: authorize skips the look-up while no item
// declares scopes (and no Visible hook is set), so each kind of
// registration must mark the server when it declares them, a server that
// is already serving included: the item registered later is refused
// without a grant, and the unscoped one registered before it still goes.
func TestScopesNotedEveryKind(t *testing.T) {
	tool := func(ctx context.Context, req *ToolRequest) (*ToolResult, error) { return TextResult(""), nil }
	prompt := func(ctx context.Context, req *PromptRequest) (*PromptResult, error) { return &PromptResult{}, nil }
	res := func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error) {
		return &ResourceResult{}, nil
	}
	for _, tc := range []struct {
		method, open, name string
		add                func(s *Server, name string, opts ...Option) error
	}{
		{"tools/call", "o", "x", func(s *Server, name string, opts ...Option) error {
			o := make([]ToolOption, len(opts))
			for i := range opts {
				o[i] = opts[i]
			}
			return s.AddTool(Tool{Name: name}, tool, o...)
		}},
		{"prompts/get", "o", "x", func(s *Server, name string, opts ...Option) error {
			o := make([]PromptOption, len(opts))
			for i := range opts {
				o[i] = opts[i]
			}
			return s.AddPrompt(Prompt{Name: name}, prompt, o...)
		}},
		{"resources/read", "res://o", "res://x", func(s *Server, name string, opts ...Option) error {
			o := make([]ResourceOption, len(opts))
			for i := range opts {
				o[i] = opts[i]
			}
			return s.AddResource(Resource{URI: name, Name: "n"}, res, o...)
		}},
		{"resources/read", "res://o/{id}", "res://x/{id}", func(s *Server, name string, opts ...Option) error {
			o := make([]ResourceOption, len(opts))
			for i := range opts {
				o[i] = opts[i]
			}
			return s.AddResourceTemplate(ResourceTemplate{URITemplate: name, Name: "n"}, res, o...)
		}},
	} {
		s := newTestServer(t, nil)
		if err := tc.add(s, tc.open); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if sc, ref := s.authorize(ctx, tc.method, tc.open); sc != nil || ref != nil {
			t.Fatalf("%s %s before any scope: %v %+v", tc.method, tc.open, sc, ref)
		}
		if err := tc.add(s, tc.name, RequireScopes("w")); err != nil {
			t.Fatal(err)
		}
		if _, ref := s.authorize(ctx, tc.method, tc.name); ref == nil || !ref.anonymous || !slices.Equal(ref.need, []string{"w"}) {
			t.Errorf("%s %s with a scope, no grant: %+v, want refused for w", tc.method, tc.name, ref)
		}
		if sc, ref := s.authorize(ctx, tc.method, tc.open); sc != nil || ref != nil {
			t.Errorf("%s %s after a scoped item: %v %+v", tc.method, tc.open, sc, ref)
		}
	}
}
