package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// Extensions (SEP-2133).
//
// An extension is advertised in capabilities.extensions, by its id, with a
// settings object: server/discover sends every registered extension, a
// 2025-11-25 initialize those offered to legacy clients too. The id follows
// the rules of _meta keys with a mandatory prefix: a reverse-DNS prefix of
// the vendor's own ("com.example/"), or "io.modelcontextprotocol/" (or any
// other prefix whose second label is modelcontextprotocol or mcp), which is
// reserved for the official extensions this package implements.
//
// An extension may add request methods. They are served like core methods:
// the same envelope, header and version checks, body limits, middleware and
// authorization (whatever wraps the server's handler). A request for an
// extension method from a client that did not declare the extension in its
// capabilities is refused with -32021 (MissingRequiredClientCapability),
// naming the extension; a client that declared it is served. For behaviour
// of core methods that an extension changes, the server falls back to core
// behaviour when the client did not declare the extension (the spec's
// negotiation rule: fall back or refuse).

// AppsExtension is the identifier of MCP Apps (SEP-1865) in
// capabilities.extensions.
const AppsExtension = "io.modelcontextprotocol/ui"

// officialExtensions are the ids under the reserved prefix this package
// may register.
var officialExtensions = []string{mcp.TasksExtension, AppsExtension, SkillsExtension}

// Extension is a protocol extension the server offers, registered with
// [Server.AddExtension].
type Extension struct {
	// ID identifies the extension, for example "com.example/widgets": a
	// prefix of dot-separated labels (each starting with a letter, ending
	// with a letter or digit, with letters, digits and hyphens between) of
	// at least two labels, then '/', then a name that starts and ends with
	// a letter or digit and has letters, digits, '-', '_' and '.' between.
	// Prefixes whose second label is "modelcontextprotocol" or "mcp" are
	// reserved: only the official extensions (TasksExtension,
	// AppsExtension, SkillsExtension) may use them. AddExtension refuses
	// any other id.
	ID string
	// Settings are advertised as the extension's value in
	// capabilities.extensions. They must encode to a JSON object; nil
	// sends {}.
	Settings any
	// Methods are the request methods the extension adds, by method name.
	// A name may not be a core method's or another extension's.
	Methods map[string]ExtensionMethod
	// Notifications are the notification methods the extension may send
	// (server to client), through [ExtensionRequest.Notify].
	Notifications []string
	// Legacy offers the extension to 2025-11-25 clients too: it is
	// advertised in initialize and its methods are served in legacy
	// sessions. Otherwise it exists for 2026-07-28 clients only.
	Legacy bool
}

// ExtensionMethod is one request method of an extension.
type ExtensionMethod struct {
	// Handler serves the method.
	Handler ExtensionHandler
	// NameParam, when set, names the string member of params that the
	// request is about (like a tool's name or a task's id): over HTTP the
	// Mcp-Name header must carry it, and middleware sees it as the
	// MethodRequest's Target.
	NameParam string
}

// ExtensionHandler serves a request of an extension method. Its result
// must encode to a JSON object; the server adds "resultType" (2026-07-28
// clients) and the server-info "_meta" unless the object has them. An
// error that is a *mcp.Error (or chooses its JSON-RPC form, such as a
// *client.MissingCapabilityError) is sent as that error; any other is an
// internal error whose details are only logged.
type ExtensionHandler func(ctx context.Context, req *ExtensionRequest) (any, error)

// ExtensionRequest is a request of an extension method.
type ExtensionRequest struct {
	// Method is the request's method.
	Method string
	// Params are the request's params as sent, _meta included (nil when
	// there were none).
	Params json.RawMessage
	// Meta is the request's envelope (for a legacy request, the session's
	// capabilities).
	Meta RequestMeta
	// Principal is the authenticated caller, "" when anonymous.
	Principal string
	// Legacy is set for a request of a 2025-11-25 session.
	Legacy bool

	notify func(ctx context.Context, method string, params any) error
}

// DecodeParams decodes the request's params into v, strictly: keys match
// struct fields exactly, never case-insensitively. Its error is -32602.
func (r *ExtensionRequest) DecodeParams(v any) error {
	p := bytes.TrimSpace(r.Params)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		p = []byte("{}")
	}
	if err := strictjson.Unmarshal(p, v); err != nil {
		return invalidParams("%v", describeUnmarshal(err))
	}
	return nil
}

// Notify sends one of the extension's notifications on the request's
// response stream (a no-op when the transport has none). method must be
// listed in the extension's Notifications.
func (r *ExtensionRequest) Notify(ctx context.Context, method string, params any) error {
	if r.notify == nil {
		return nil
	}
	return r.notify(ctx, method, params)
}

// checkExtensionID reports whether id is a valid extension identifier
// (Extension.ID says the rules).
func checkExtensionID(id string) error {
	prefix, name, ok := strings.Cut(id, "/")
	if !ok || prefix == "" {
		return fmt.Errorf("server: extension id %s needs a prefix such as com.example/", clip.Quote(id))
	}
	labels := strings.Split(prefix, ".")
	if len(labels) < 2 {
		return fmt.Errorf("server: extension id %s needs a reverse-DNS prefix (com.example/), not %s", clip.Quote(id), clip.Quote(prefix+"/"))
	}
	for _, l := range labels {
		if !validLabel(l) {
			return fmt.Errorf("server: extension id %s: prefix label %s is not a DNS label", clip.Quote(id), clip.Quote(l))
		}
	}
	if !validExtName(name) {
		return fmt.Errorf("server: extension id %s: name %s must start and end with a letter or digit, with only letters, digits, '-', '_' and '.' between", clip.Quote(id), clip.Quote(name))
	}
	if l := strings.ToLower(labels[1]); (l == "modelcontextprotocol" || l == "mcp") && !slices.Contains(officialExtensions, id) {
		return fmt.Errorf("server: extension id %s: the prefix %s is reserved for official MCP extensions", clip.Quote(id), clip.Quote(prefix+"/"))
	}
	return nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }
func validLabel(l string) bool {
	if l == "" || !isAlpha(l[0]) || !isAlnum(l[len(l)-1]) {
		return false
	}
	for i := 0; i < len(l); i++ {
		if !isAlnum(l[i]) && l[i] != '-' {
			return false
		}
	}
	return true
}

func validExtName(n string) bool {
	if n == "" || !isAlnum(n[0]) || !isAlnum(n[len(n)-1]) {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// coreMethods are the methods an extension may not take.
var coreMethods = []string{
	"initialize", "ping", "server/discover", "subscriptions/listen",
	"tools/list", "tools/call", "prompts/list", "prompts/get",
	"resources/list", "resources/templates/list", "resources/read",
	"resources/subscribe", "resources/unsubscribe",
	"completion/complete", "logging/setLevel",
	"elicitation/create", "sampling/createMessage", "roots/list",
}

// errExtensionRegistered refuses a second registration of an id.
var errExtensionRegistered = errors.New("already registered")

// extension is a registered extension.
type extension struct {
	Extension
	settings json.RawMessage
	// active reports whether the extension is offered now; nil: always.
	active func() bool
	// undeclared serves its methods to clients that do not declare the
	// extension (Skills: the specification defines no client side).
	undeclared bool
}

func (e *extension) offered() bool { return e.active == nil || e.active() }

// extMethod is a registered extension method.
type extMethod struct {
	ext *extension
	ExtensionMethod
	// serve, for the extensions built into this package, replaces Handler
	// and works on the decoded request.
	serve func(ctx context.Context, r *request, n notifier) (json.RawMessage, *mcp.Error)
	// target, for built-in methods, reads the target from the decoded
	// params.
	target func(r *request) (string, bool)
}

// extensionSet is the server's registered extensions; guarded by
// Server.mu.
type extensionSet struct {
	list    []*extension
	methods map[string]*extMethod
}

// AddExtension registers an extension: it is advertised from now on, and
// its methods are served. It is an error to register an invalid id, the
// same id twice, settings that do not encode to an object, or a method
// that a core method or another extension already has.
func (s *Server) AddExtension(e Extension) error {
	ext, err := newExtension(e)
	if err != nil {
		return err
	}
	for name, m := range e.Methods {
		if m.Handler == nil {
			return fmt.Errorf("server: extension %s: method %s has no handler", e.ID, clip.Quote(name))
		}
	}
	return s.addExtension(ext, nil)
}

func newExtension(e Extension) (*extension, error) {
	if err := checkExtensionID(e.ID); err != nil {
		return nil, err
	}
	settings := json.RawMessage("{}")
	if e.Settings != nil {
		b, err := json.Marshal(e.Settings)
		if err != nil {
			return nil, fmt.Errorf("server: extension %s: encode settings: %w", e.ID, err)
		}
		if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
			return nil, fmt.Errorf("server: extension %s: settings must encode to a JSON object, got %s", e.ID, clip.String(string(b)))
		}
		settings = b
	}
	e.Methods = maps.Clone(e.Methods)
	e.Notifications = slices.Clone(e.Notifications)
	for _, n := range e.Notifications {
		if !strings.HasPrefix(n, "notifications/") {
			return nil, fmt.Errorf("server: extension %s: notification %s must start with notifications/", e.ID, clip.Quote(n))
		}
	}
	return &extension{Extension: e, settings: settings}, nil
}

// addExtension registers ext; builtin supplies the internal serving of
// methods of extensions built into this package.
func (s *Server) addExtension(ext *extension, builtin map[string]*extMethod) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.exts.list {
		if x.ID == ext.ID {
			return fmt.Errorf("server: extension %s: %w", ext.ID, errExtensionRegistered)
		}
	}
	add := map[string]*extMethod{}
	for name, m := range ext.Methods {
		em := &extMethod{ext: ext, ExtensionMethod: m}
		if b := builtin[name]; b != nil {
			em.serve, em.target = b.serve, b.target
		}
		add[name] = em
	}
	for name := range add {
		if name == "" || slices.Contains(coreMethods, name) || strings.HasPrefix(name, "notifications/") {
			return fmt.Errorf("server: extension %s: method %s is reserved", ext.ID, clip.Quote(name))
		}
		if o := s.exts.methods[name]; o != nil {
			return fmt.Errorf("server: extension %s: method %s belongs to extension %s", ext.ID, clip.Quote(name), o.ext.ID)
		}
	}
	if s.exts.methods == nil {
		s.exts.methods = map[string]*extMethod{}
	}
	maps.Copy(s.exts.methods, add)
	s.exts.list = append(s.exts.list, ext)
	return nil
}

// advertised returns capabilities.extensions: every offered extension
// (legacy: those offered to 2025-11-25 clients), or nil.
func (s *Server) advertised(legacy bool) map[string]json.RawMessage {
	s.mu.RLock()
	list := slices.Clone(s.exts.list)
	s.mu.RUnlock()
	var m map[string]json.RawMessage
	for _, e := range list {
		if (legacy && !e.Legacy) || !e.offered() {
			continue
		}
		if m == nil {
			m = map[string]json.RawMessage{}
		}
		m[e.ID] = e.settings
	}
	return m
}

// extensionMethod returns the registered method, or nil.
func (s *Server) extensionMethod(method string) *extMethod {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.exts.methods[method]
}

// extensionTarget returns the target of an extension method's request:
// what Mcp-Name must carry and middleware shows as Target.
func (s *Server) extensionTarget(r *request) (string, bool) {
	m := s.extensionMethod(r.method)
	if m == nil {
		return "", false
	}
	if m.target != nil {
		return m.target(r)
	}
	if m.NameParam == "" || len(r.raw) == 0 {
		return "", false
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(r.raw, &p) != nil {
		return "", false
	}
	var v string
	if json.Unmarshal(p[m.NameParam], &v) != nil {
		return "", false
	}
	return v, true
}

// serveExtension routes a request to an extension method, or reports that
// the method is not an extension's.
func (s *Server) serveExtension(ctx context.Context, r *request, n notifier) (json.RawMessage, *mcp.Error, bool) {
	m := s.extensionMethod(r.method)
	if m == nil {
		return nil, nil, false
	}
	if (r.legacy && !m.ext.Legacy) || !m.ext.offered() {
		return nil, methodNotFound(r.method), true
	}
	if !m.ext.undeclared {
		if err := r.meta.ClientCapabilities.RequireExtension(r.method, m.ext.ID); err != nil {
			re, _ := asRPCError(err)
			return nil, re, true
		}
	}
	if m.serve != nil {
		res, e := m.serve(ctx, r, n)
		return res, e, true
	}
	req := &ExtensionRequest{
		Method:    r.method,
		Params:    bytes.Clone(r.raw), // the handler may keep it
		Meta:      r.meta,
		Principal: PrincipalFromContext(ctx),
		Legacy:    r.legacy,
	}
	if n != nil {
		req.notify = func(ctx context.Context, method string, params any) error {
			if !slices.Contains(m.ext.Notifications, method) {
				return fmt.Errorf("server: extension %s does not declare notification %s", m.ext.ID, clip.Quote(method))
			}
			return n.Notify(ctx, method, params)
		}
	}
	v, err := m.Handler(ctx, req)
	if err != nil {
		if re, ok := asRPCError(err); ok {
			return nil, re, true
		}
		return nil, &mcp.Error{Code: mcp.InternalError, Message: s.internalText(r.method, err)}, true
	}
	res, e := s.extensionResult(r, v)
	return res, e, true
}

// extensionResult encodes a handler's result as an object with
// resultType (modern) and the server-info _meta.
func (s *Server) extensionResult(r *request, v any) (json.RawMessage, *mcp.Error) {
	var b []byte
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case nil:
		b = []byte("{}")
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, &mcp.Error{Code: mcp.InternalError, Message: s.internalText(r.method, fmt.Errorf("encode result: %w", err))}
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return nil, &mcp.Error{Code: mcp.InternalError, Message: s.internalText(r.method, errors.New("the result is not a JSON object"))}
	}
	if _, ok := obj["resultType"]; !ok && !r.legacy {
		obj["resultType"] = json.RawMessage(`"complete"`)
	}
	if _, ok := obj["_meta"]; !ok {
		if meta := s.resultMeta(r, nil); meta != nil {
			obj["_meta"] = meta
		}
	}
	return s.encode(obj)
}

// onePass reports whether a method's request is decoded in one pass,
// without keeping its params as sent: the core methods, and the built-in
// tasks methods.
func onePass(method string) bool {
	switch method {
	case "server/discover", "subscriptions/listen", "tools/list", "tools/call", "prompts/list", "prompts/get",
		"resources/list", "resources/templates/list", "resources/read", "completion/complete",
		"tasks/get", "tasks/update", "tasks/cancel":
		return true
	}
	return false
}
