package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/mcp"
)

// MCP Apps (SEP-1865, extension AppsExtension): a tool names an HTML page,
// a ui:// resource, that a host renders in a sandboxed frame beside the
// tool's result. The page talks to the host over postMessage (JSON-RPC:
// ui/initialize, tools/call, ui/notifications/tool-input and tool-result,
// ...) and the host relays its tools/call to the server. To the server an
// App is a resource plus a tool's _meta.ui; a client that did not declare
// the extension still sees both as core resources and tools (the core
// fallback).

// AppMIMEType is the media type of an App's HTML page.
const AppMIMEType = "text/html;profile=mcp-app"

// AppSettings are the settings the server advertises for AppsExtension.
type AppSettings struct {
	// MimeTypes are the page types the server serves ("mimeTypes").
	MimeTypes []string `json:"mimeTypes"`
}

// App is the UI resource of an MCP App, registered with [Server.AddApp].
type App struct {
	// URI identifies the page: a ui:// URI, such as "ui://clock/app.html".
	URI string
	// Name is the resource's name, for machines (required).
	Name string
	// Title and Description describe the page for people (optional).
	Title, Description string
	// HTML is the page, one self-contained HTML document.
	HTML string
	// CSP lists the origins the page may reach; nil lets it reach none
	// (the host's default: no network beyond the page).
	CSP *AppCSP
	// Permissions are the browser permissions the page asks the host for.
	Permissions *AppPermissions
	// Domain is the dedicated origin the host should give the page's
	// frame, if any ("domain").
	Domain string
	// PrefersBorder asks the host to draw (true) or not draw (false) a
	// border around the frame; nil leaves it to the host.
	PrefersBorder *bool
}

// AppCSP is an App's content security policy, as origins per directive
// (_meta.ui.csp).
type AppCSP struct {
	// ConnectDomains may be fetched and opened as WebSockets
	// ("connectDomains").
	ConnectDomains []string `json:"connectDomains,omitempty"`
	// ResourceDomains may serve scripts, styles, images, fonts and media
	// ("resourceDomains").
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	// FrameDomains may be framed by the page ("frameDomains").
	FrameDomains []string `json:"frameDomains,omitempty"`
	// BaseURIDomains may be the page's base URI ("baseUriDomains").
	BaseURIDomains []string `json:"baseUriDomains,omitempty"`
}

// AppPermissions are the browser permissions an App asks for
// (_meta.ui.permissions); each one set is sent as an empty object.
type AppPermissions struct {
	Camera, Microphone, Geolocation, ClipboardWrite bool
}

func (p *AppPermissions) wire() map[string]any {
	m := map[string]any{}
	for _, x := range []struct {
		on   bool
		name string
	}{{p.Camera, "camera"}, {p.Microphone, "microphone"}, {p.Geolocation, "geolocation"}, {p.ClipboardWrite, "clipboardWrite"}} {
		if x.on {
			m[x.name] = map[string]any{}
		}
	}
	return m
}

// uiMeta is the resource's _meta.ui.
func (a *App) uiMeta() map[string]any {
	ui := map[string]any{}
	if a.CSP != nil {
		ui["csp"] = a.CSP
	}
	if a.Permissions != nil {
		ui["permissions"] = a.Permissions.wire()
	}
	if a.Domain != "" {
		ui["domain"] = a.Domain
	}
	if a.PrefersBorder != nil {
		ui["prefersBorder"] = *a.PrefersBorder
	}
	return ui
}

// AddApp registers an App's page as a resource served with AppMIMEType
// and the _meta.ui of its CSP and permissions, and offers AppsExtension
// (to clients of both eras) from then on. Link a tool to it with
// [AppToolMeta].
func (s *Server) AddApp(a App) error {
	if err := checkAppURI(a.URI); err != nil {
		return err
	}
	if strings.TrimSpace(a.HTML) == "" {
		return fmt.Errorf("server: app %s has no HTML", clip.Quote(a.URI))
	}
	if err := s.offerApps(); err != nil {
		return err
	}
	meta := map[string]any{"ui": a.uiMeta()}
	html, uri := a.HTML, a.URI
	return s.AddResource(Resource{URI: a.URI, Name: a.Name, Title: a.Title, Description: a.Description, MimeType: AppMIMEType, Meta: meta},
		func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error) {
			rc := mcp.TextContents(uri, AppMIMEType, html)
			rc.Meta = meta
			return &ResourceResult{Contents: []mcp.ResourceContents{rc}}, nil
		})
}

// offerApps registers AppsExtension once.
func (s *Server) offerApps() error {
	s.mu.RLock()
	registered := slices.ContainsFunc(s.exts.list, func(e *extension) bool { return e.ID == AppsExtension })
	s.mu.RUnlock()
	if registered {
		return nil
	}
	ext, err := newExtension(Extension{ID: AppsExtension, Settings: AppSettings{MimeTypes: []string{AppMIMEType}}, Legacy: true})
	if err != nil {
		return err
	}
	if err := s.addExtension(ext, nil); err != nil && !errors.Is(err, errExtensionRegistered) { // a concurrent AddApp won
		return err
	}
	return nil
}

func checkAppURI(uri string) error {
	rest, ok := strings.CutPrefix(uri, "ui://")
	if !ok || rest == "" || strings.ContainsAny(uri, " \t\r\n") {
		return fmt.Errorf("server: app URI %s must be a ui:// URI", clip.Quote(uri))
	}
	return nil
}

// AppVisibility says who may call a tool linked to an App.
type AppVisibility string

// The visibilities of a tool (_meta.ui.visibility).
const (
	// VisibleToModel: the model may call the tool (it is in its tool list).
	VisibleToModel AppVisibility = "model"
	// VisibleToApp: the App's page may call the tool through the host.
	VisibleToApp AppVisibility = "app"
)

// AppToolMeta returns a tool's _meta linking it to the App at
// resourceURI, {"ui": {"resourceUri": ..., "visibility": [...]}}, for
// Tool.Meta. Without visibility the host's default applies (model and
// app); a tool only the page calls is VisibleToApp alone.
func AppToolMeta(resourceURI string, visibility ...AppVisibility) (map[string]any, error) {
	if err := checkAppURI(resourceURI); err != nil {
		return nil, err
	}
	ui := map[string]any{"resourceUri": resourceURI}
	if len(visibility) > 0 {
		var vs []string
		for _, v := range visibility {
			if v != VisibleToModel && v != VisibleToApp {
				return nil, fmt.Errorf("server: tool visibility %s is neither model nor app", clip.Quote(string(v)))
			}
			if slices.Contains(vs, string(v)) {
				return nil, errors.New("server: tool visibility " + string(v) + " is listed twice")
			}
			vs = append(vs, string(v))
		}
		ui["visibility"] = vs
	}
	return map[string]any{"ui": ui}, nil
}
