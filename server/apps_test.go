package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestAddAppChecks(t *testing.T) {
	s := newTestServer(t, nil)
	for _, a := range []App{
		{URI: "https://example.com/app.html", Name: "x", HTML: "<p>x</p>"},
		{URI: "ui://", Name: "x", HTML: "<p>x</p>"},
		{URI: "ui://a b", Name: "x", HTML: "<p>x</p>"},
		{URI: "ui://x/app.html", Name: "x", HTML: "  "},
	} {
		if err := s.AddApp(a); err == nil {
			t.Errorf("AddApp(%q, %q) accepted", a.URI, a.HTML)
		}
	}
	if caps := s.modernCapabilities(); caps.Extensions[AppsExtension] != nil {
		t.Error("apps advertised before any app was registered")
	}
	for _, tc := range []struct {
		uri string
		vis []AppVisibility
	}{
		{"http://x", nil},
		{"ui://x", []AppVisibility{"user"}},
		{"ui://x", []AppVisibility{VisibleToApp, VisibleToApp}},
	} {
		if _, err := AppToolMeta(tc.uri, tc.vis...); err == nil {
			t.Errorf("AppToolMeta(%q, %v) accepted", tc.uri, tc.vis)
		}
	}
}

func TestAppServed(t *testing.T) {
	s := newTestServer(t, nil)
	border := false
	app := App{
		URI: "ui://clock/app.html", Name: "clock", Title: "Clock", HTML: "<!doctype html><p id=t>now</p>",
		CSP:           &AppCSP{ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://cdn.example.com"}},
		Permissions:   &AppPermissions{ClipboardWrite: true},
		PrefersBorder: &border,
	}
	if err := s.AddApp(app); err != nil {
		t.Fatal(err)
	}
	if err := s.AddApp(App{URI: "ui://clock/other.html", Name: "other", HTML: "<p>2</p>"}); err != nil {
		t.Fatalf("a second app: %v", err)
	}
	meta, err := AppToolMeta(app.URI, VisibleToModel, VisibleToApp)
	if err != nil {
		t.Fatal(err)
	}
	mustAddTool(t, s, Tool{Name: "time", Meta: meta}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		return TextResult("12:00"), nil
	})

	// Advertised to both eras, with the settings of the spec.
	c := newClient(t, s, `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`)
	res := wantResult(t, send(t, c, "server/discover", map[string]any{}))
	ext, _ := res["capabilities"].(map[string]any)["extensions"].(map[string]any)
	if got, _ := json.Marshal(ext[AppsExtension]); string(got) != `{"mimeTypes":["text/html;profile=mcp-app"]}` {
		t.Errorf("discover: %s settings = %s", AppsExtension, got)
	}
	if got := string(s.capabilities().Extensions[AppsExtension]); got != `{"mimeTypes":["text/html;profile=mcp-app"]}` {
		t.Errorf("initialize: %s settings = %s", AppsExtension, got)
	}

	// The tool links its page, with its visibility.
	tools := wantResult(t, send(t, c, "tools/list", map[string]any{}))
	tool, _ := json.Marshal(tools["tools"].([]any)[0].(map[string]any)["_meta"])
	if string(tool) != `{"ui":{"resourceUri":"ui://clock/app.html","visibility":["model","app"]}}` {
		t.Errorf("tool _meta = %s", tool)
	}

	// The page: listed and read with the App type and _meta.ui.
	const wantUI = `{"ui":{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com"]},"permissions":{"clipboardWrite":{}},"prefersBorder":false}}`
	list := wantResult(t, send(t, c, "resources/list", map[string]any{}))
	r0 := list["resources"].([]any)[0].(map[string]any)
	if lm, _ := json.Marshal(r0["_meta"]); r0["mimeType"] != AppMIMEType || string(lm) != wantUI {
		t.Errorf("resources/list entry = %v", r0)
	}
	rr, err := c.ReadResource(testContext(t), app.URI)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 {
		t.Fatalf("contents = %+v", rr.Contents)
	}
	got := rr.Contents[0]
	gm, _ := json.Marshal(got.Meta)
	if got.URI != app.URI || got.MimeType != AppMIMEType || got.Text != app.HTML || string(gm) != wantUI {
		t.Errorf("read = %+v (_meta %s)", got, gm)
	}

	// A client without the extension gets the core fallback: the page is
	// an ordinary resource.
	plain, err := newClient(t, s, "").ReadResource(testContext(t), app.URI)
	if err != nil || len(plain.Contents) != 1 || !strings.Contains(plain.Contents[0].Text, "now") {
		t.Errorf("read without the extension: %+v, %v", plain, err)
	}
}
