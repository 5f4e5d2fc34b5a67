package server

// Authorization inside the server: the scopes a registration requires
// (RequireScopes), the grant a request carries (Grant, set by an
// authentication middleware such as package auth), the check before a
// call (from the Mcp-Method and Mcp-Name headers before the body is read,
// from the body for 2025-11-25 clients, and again in the dispatch for
// every transport), and what each caller is shown in lists.

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// A Grant is what a request's verified credentials allow: the token's
// subject, the client it was issued to, its scopes, its expiry and the
// claims a handler may read. An authentication middleware (package auth)
// binds it with ContextWithGrant; handlers read it with GrantFromContext.
type Grant struct {
	// Subject is the token's subject ("sub"): the request's principal.
	// Empty for an anonymous request (no token, allowed by the middleware).
	Subject string
	// ClientID is the OAuth client the token was issued to ("client_id",
	// or "azp"), when the token says.
	ClientID string
	// Scopes are the token's scopes ("scope", split on spaces).
	Scopes []string
	// Expiry is when the token expires (zero if it does not say).
	Expiry time.Time
	// Claims are the token's claims as decoded JSON (a JWT's payload, or
	// an introspection response). Never the token itself.
	Claims map[string]any
	// ResourceMetadata is the URL of the RFC 9728 protected resource
	// metadata, named in the WWW-Authenticate challenge of a refusal.
	ResourceMetadata string
}

// HasScope reports whether the grant includes scope.
func (g *Grant) HasScope(scope string) bool {
	return g != nil && slices.Contains(g.Scopes, scope)
}

// covers reports whether the grant includes every scope of need.
func (g *Grant) covers(need []string) bool {
	for _, sc := range need {
		if !g.HasScope(sc) {
			return false
		}
	}
	return true
}

type grantKey struct{}

// ContextWithGrant returns a context carrying g, and g's subject as the
// principal (ContextWithPrincipal) when it has one: requestState,
// tasks and legacy sessions stay bound to the subject.
func ContextWithGrant(ctx context.Context, g *Grant) context.Context {
	ctx = context.WithValue(ctx, grantKey{}, g)
	if g != nil && g.Subject != "" {
		ctx = ContextWithPrincipal(ctx, g.Subject)
	}
	return ctx
}

// GrantFromContext returns the grant bound by ContextWithGrant, or nil
// when no authentication middleware ran.
func GrantFromContext(ctx context.Context) *Grant {
	g, _ := ctx.Value(grantKey{}).(*Grant)
	return g
}

// RequireScopes declares the OAuth scopes a caller's token must carry to
// call a tool, get a prompt or read a resource (or any resource of a
// template). A caller without them does not see the item in lists and is
// refused before the handler runs, and over HTTP before the body is read
// when the request names its target in Mcp-Name: 403 with
// WWW-Authenticate: Bearer error="insufficient_scope", scope="<all of
// them>", resource_metadata="..." (401 with the same scope for a request
// without a token). A request with no grant at all (no authentication
// middleware) is refused too: a declared scope is never silently open.
// It applies to tools, prompts and resources.
func RequireScopes(scopes ...string) Option {
	return anyOption(func(o *regOptions) {
		for _, sc := range scopes {
			if !slices.Contains(o.Scopes, sc) {
				o.Scopes = append(o.Scopes, sc)
			}
		}
	})
}

// checkScopes validates the scopes of a registration: RFC 6749 scope
// tokens (printable ASCII without space, '"' or '\').
func checkScopes(scopes []string) error {
	for _, sc := range scopes {
		if sc == "" {
			return fmt.Errorf("RequireScopes: empty scope")
		}
		for i := 0; i < len(sc); i++ {
			if c := sc[i]; c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return fmt.Errorf("RequireScopes: scope %q is not an RFC 6749 scope token", sc)
			}
		}
	}
	return nil
}

// ItemKind says what an Item is.
type ItemKind string

// The kinds of Item.
const (
	ItemTool             ItemKind = "tool"
	ItemPrompt           ItemKind = "prompt"
	ItemResource         ItemKind = "resource"
	ItemResourceTemplate ItemKind = "resourceTemplate"
	// ItemSkill is a skill (AddSkills), named by its SKILL.md URI; each
	// of its files is seen as the skill.
	ItemSkill ItemKind = "skill"
)

// An Item is a registered tool, prompt, resource or resource template, as
// Options.Visible sees it.
type Item struct {
	Kind ItemKind
	// Name is the tool or prompt name, the resource URI, or the
	// template's URI template.
	Name string
	// Scopes are the scopes declared with RequireScopes.
	Scopes []string
}

// visible reports whether the caller of ctx may see and use it: it has
// the item's scopes, and Options.Visible (if set) agrees.
func (s *Server) visible(ctx context.Context, it Item) bool {
	if len(it.Scopes) > 0 && !GrantFromContext(ctx).covers(it.Scopes) {
		return false
	}
	return s.opts.Visible == nil || s.opts.Visible(ctx, it)
}

// lookupItem finds the item a call names: a tool or prompt by name, a
// resource by URI (a static resource, else the first template that
// matches). ok is false for another method or an unknown name.
func (s *Server) lookupItem(method, name string) (Item, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch method {
	case "tools/call":
		if e, ok := s.tools.get(name); ok {
			return Item{Kind: ItemTool, Name: name, Scopes: e.opts.Scopes}, true
		}
	case "prompts/get":
		if e, ok := s.prompts.get(name); ok {
			return Item{Kind: ItemPrompt, Name: name, Scopes: e.opts.Scopes}, true
		}
	case "resources/read":
		if e, ok := s.resources.get(name); ok {
			return e.item(), true
		}
		for _, t := range s.templates {
			if _, ok := t.pattern.match(name); ok || t.tmpl.URITemplate == name {
				return Item{Kind: ItemResourceTemplate, Name: t.tmpl.URITemplate, Scopes: t.opts.Scopes}, true
			}
		}
	}
	return Item{}, false
}

// RequiredScopes returns the scopes declared (RequireScopes) for the
// operation a request names: method "tools/call", "prompts/get" or
// "resources/read" and the tool or prompt name or resource URI, as in
// the Mcp-Method and Mcp-Name headers. It is nil for anything else.
func (s *Server) RequiredScopes(method, name string) []string {
	it, _ := s.lookupItem(method, name)
	return it.Scopes
}

// scopeRefusal is a call refused for its scopes, or hidden by Visible.
type scopeRefusal struct {
	need      []string
	anonymous bool   // no verified token: 401
	metadata  string // resource_metadata for the challenge
	hidden    bool   // Options.Visible said no: answered as unknown
	method    string
	name      string
}

// noteScopes marks the server as having an item that declares scopes
// when o does. It is called before the item is registered, so that a
// request which can find the item also sees the mark.
func (s *Server) noteScopes(o regOptions) {
	if len(o.Scopes) > 0 {
		s.scoped.Store(true)
	}
}

// authorizing reports whether authorize has anything to check: some item
// was registered with RequireScopes, or Options.Visible is set.
func (s *Server) authorizing() bool {
	return s.opts.Visible != nil || s.scoped.Load()
}

// authorize checks a call of method on name against the grant of ctx. It
// returns the scopes checked, or the refusal.
//
// On a server where no item was ever registered with RequireScopes and no
// Options.Visible is set there is nothing to check: every item's scopes
// are empty, so authorize would return no scopes and no refusal for
// whatever it found, and it returns that without looking the item up. The
// look-up (the registry's lock and map) cost about 340 instructions, made
// twice a request, from the headers and from the dispatch (valgrind,
// BenchmarkToolsCall, issue 23). A call racing with the registration of
// its target may miss the target's scopes, as it could before: the
// look-up then found nothing ("unknown: the dispatch answers it") while
// the dispatch found the item a moment later.
func (s *Server) authorize(ctx context.Context, method, name string) ([]string, *scopeRefusal) {
	if !s.authorizing() {
		return nil, nil
	}
	it, ok := s.lookupItem(method, name)
	if !ok {
		return nil, nil // unknown: the dispatch answers it
	}
	if len(it.Scopes) > 0 {
		// The grant is looked up only for an item that declares scopes: a
		// walk up the request's context, twice per call (the headers, then
		// the dispatch), that an item without scopes never needs.
		if g := GrantFromContext(ctx); !g.covers(it.Scopes) {
			ref := &scopeRefusal{need: it.Scopes, anonymous: g == nil || g.Subject == "", method: method, name: name}
			if g != nil {
				ref.metadata = g.ResourceMetadata
			}
			return nil, ref
		}
	}
	if s.opts.Visible != nil && !s.opts.Visible(ctx, it) {
		return nil, &scopeRefusal{hidden: true, method: method, name: name}
	}
	return it.Scopes, nil
}

// rpcError is the refusal as a JSON-RPC error, for transports without
// HTTP statuses (stdio) and as the body of the HTTP refusal.
func (ref *scopeRefusal) rpcError() *mcp.Error {
	if ref.hidden {
		if ref.method == "resources/read" {
			return ResourceNotFound(ref.name)
		}
		what := "tool"
		if ref.method == "prompts/get" {
			what = "prompt"
		}
		return invalidParams("unknown %s %q", what, ref.name)
	}
	msg := "Forbidden: insufficient scope"
	if ref.anonymous {
		msg = "Unauthorized: a bearer token is required"
	}
	return &mcp.Error{Code: mcp.InvalidRequest, Message: msg + " (needs " + strings.Join(ref.need, " ") + ")",
		Data: map[string]any{"requiredScopes": ref.need}}
}

// challenge is the WWW-Authenticate value of the refusal (RFC 6750 §3).
func (ref *scopeRefusal) challenge() string {
	var b strings.Builder
	b.WriteString("Bearer ")
	if !ref.anonymous {
		b.WriteString(`error="insufficient_scope", `)
	}
	fmt.Fprintf(&b, `scope="%s"`, strings.Join(ref.need, " "))
	if ref.metadata != "" {
		fmt.Fprintf(&b, `, resource_metadata="%s"`, ref.metadata)
	}
	return b.String()
}

// writeRefusal answers an HTTP request refused by authorize.
func writeRefusal(w http.ResponseWriter, id mcp.ID, ref *scopeRefusal) {
	e := ref.rpcError()
	if ref.hidden {
		writeError(w, rpcwire.HTTPStatus(e.Code), id, e)
		return
	}
	w.Header().Set("WWW-Authenticate", ref.challenge())
	status := http.StatusForbidden
	if ref.anonymous {
		status = http.StatusUnauthorized
	}
	writeError(w, status, id, e)
}

// authorizeHeaders checks the call a request names in its Mcp-Method and
// Mcp-Name headers, before the body is read. It reports whether the
// request may go on (the body is compared with the headers later, so a
// header that names another operation than the body is refused there).
func (s *Server) authorizeHeaders(w http.ResponseWriter, r *http.Request, hs *callHeaders) bool {
	if !s.authorizing() {
		return true // nothing to check (see authorize): the headers are not read
	}
	hs.load()
	method := hs.method
	if !method.ok || method.err != nil {
		return true
	}
	switch method.v {
	case "tools/call", "prompts/get", "resources/read":
	default:
		return true
	}
	name := hs.name
	if !name.ok || name.err != nil {
		return true
	}
	if _, ref := s.authorize(r.Context(), method.v, name.v); ref != nil {
		if ref.hidden {
			// Answered as unknown, by the dispatch's check: with the
			// request's id, which a refusal here has not read (a null id
			// would tell a hidden item from an unknown one).
			return true
		}
		writeRefusal(w, mcp.ID{}, ref)
		return false
	}
	return true
}

// authorizeMessage checks a decoded message's call from its body (the
// 2025-11-25 era, which has no Mcp-Name header). It reports whether the
// request may go on.
func (s *Server) authorizeMessage(w http.ResponseWriter, r *http.Request, msg *rpcwire.Message) bool {
	switch msg.Method {
	case "tools/call", "prompts/get", "resources/read":
	default:
		return true
	}
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if strictjson.Unmarshal(msg.Params, &p) != nil {
		return true // the dispatch refuses malformed params
	}
	name := p.Name
	if msg.Method == "resources/read" {
		name = p.URI
	}
	if _, ref := s.authorize(r.Context(), msg.Method, name); ref != nil {
		writeRefusal(w, msg.ID, ref)
		return false
	}
	return true
}

// authorizeTarget checks the operation a decoded request names: a call
// (tools/call, prompts/get, resources/read) or the completion of a
// prompt's or a template's arguments, which needs what using it needs.
func (s *Server) authorizeTarget(ctx context.Context, r *request) ([]string, *scopeRefusal) {
	method := r.method
	name, ok := mcpName(r)
	if method == "completion/complete" && r.p.Ref != nil {
		switch r.p.Ref.Type {
		case "ref/prompt":
			method, name, ok = "prompts/get", r.p.Ref.Name, true
		case "ref/resource":
			method, name, ok = "resources/read", r.p.Ref.URI, true
		}
	}
	if !ok {
		return nil, nil
	}
	return s.authorize(ctx, method, name)
}

// authorizeDecoded answers an HTTP request refused by authorizeTarget
// (what the headers could not name: a completion). It reports whether
// the request may go on.
func (s *Server) authorizeDecoded(w http.ResponseWriter, r *http.Request, req *request) bool {
	if _, ref := s.authorizeTarget(r.Context(), req); ref != nil {
		writeRefusal(w, req.id, ref)
		return false
	}
	return true
}

// authorizeRequest is the dispatch's check, for every transport: it
// records the scopes checked on r (they are bound into the requestState)
// or returns the refusal as a JSON-RPC error.
func (s *Server) authorizeRequest(ctx context.Context, r *request) *mcp.Error {
	checked, ref := s.authorizeTarget(ctx, r)
	if ref != nil {
		return ref.rpcError()
	}
	r.scopes = checked
	return nil
}

// stateSubject is what a requestState is bound to: the principal, and the
// scopes the call was checked against, so that a state issued under one
// check is refused under another.
func stateSubject(principal string, scopes []string) string {
	if len(scopes) == 0 {
		return principal
	}
	sorted := slices.Clone(scopes)
	slices.Sort(sorted)
	return principal + "\x00scopes:" + strings.Join(sorted, " ")
}

// listPrivate reports whether lists depend on the caller: a visibility
// hook is set, or an item of the list declares scopes. Such lists are
// sent with cacheScope "private".
func (s *Server) listPrivate(scoped bool) bool {
	return scoped || s.opts.Visible != nil
}

// callerCapabilities removes from c the tools, prompts and resources
// capabilities of which the caller of ctx may see nothing, and reports
// whether the answer depends on the caller.
func (s *Server) callerCapabilities(ctx context.Context, c era.ServerCapabilities) (era.ServerCapabilities, bool) {
	s.mu.RLock()
	var tools, prompts, resources []Item
	for i := 0; i < s.tools.len(); i++ {
		e := s.tools.at(i)
		tools = append(tools, Item{Kind: ItemTool, Name: e.tool.Name, Scopes: e.opts.Scopes})
	}
	for i := 0; i < s.prompts.len(); i++ {
		e := s.prompts.at(i)
		prompts = append(prompts, Item{Kind: ItemPrompt, Name: e.prompt.Name, Scopes: e.opts.Scopes})
	}
	for i := 0; i < s.resources.len(); i++ {
		e := s.resources.at(i)
		resources = append(resources, e.item())
	}
	for _, e := range s.templates {
		resources = append(resources, Item{Kind: ItemResourceTemplate, Name: e.tmpl.URITemplate, Scopes: e.opts.Scopes})
	}
	skills := make([]Item, len(s.skills.list))
	for i, sk := range s.skills.list {
		skills[i] = sk.item()
	}
	s.mu.RUnlock()
	// The checks run outside the lock: Options.Visible is user code.
	private := s.opts.Visible != nil
	for _, list := range [][]Item{tools, prompts, resources} {
		for _, it := range list {
			private = private || len(it.Scopes) > 0
		}
	}
	if !private {
		return c, false
	}
	seesAny := func(list []Item) bool {
		return slices.ContainsFunc(list, func(it Item) bool { return s.visible(ctx, it) })
	}
	if !seesAny(tools) {
		c.Tools = nil
	}
	if !seesAny(prompts) {
		c.Prompts = nil
	}
	if !seesAny(resources) {
		c.Resources = nil
	}
	// The Skills extension, for a caller who may see no skill: its
	// existence is the skills', and it needs the resources capability.
	if _, ok := c.Extensions[SkillsExtension]; ok && !seesAny(skills) {
		c.Extensions = maps.Clone(c.Extensions)
		delete(c.Extensions, SkillsExtension)
		if len(c.Extensions) == 0 {
			c.Extensions = nil
		}
	}
	return c, true
}
