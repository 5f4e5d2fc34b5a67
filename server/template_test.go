package server

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
)

func TestParseURITemplate(t *testing.T) {
	good := []struct {
		tmpl     string
		literals []string
		vars     []string
	}{
		{"file:///static", []string{"file:///static"}, nil},
		{"file:///{name}", []string{"file:///", ""}, []string{"name"}},
		{"db://{table}/{id}.json", []string{"db://", "/", ".json"}, []string{"table", "id"}},
		{"{scheme}://x", []string{"", "://x"}, []string{"scheme"}},
		{"api://q?user={u}&page={p}", []string{"api://q?user=", "&page=", ""}, []string{"u", "p"}},
		{"x://{a_b-9}", []string{"x://", ""}, []string{"a_b-9"}},
	}
	for _, tt := range good {
		p, err := parseURITemplate(tt.tmpl)
		if err != nil {
			t.Errorf("parse %q: %v", tt.tmpl, err)
			continue
		}
		if !reflect.DeepEqual(p.literals, tt.literals) || !reflect.DeepEqual(p.vars, tt.vars) {
			t.Errorf("parse %q = %q %q, want %q %q", tt.tmpl, p.literals, p.vars, tt.literals, tt.vars)
		}
	}
	bad := []struct{ tmpl, msg string }{
		{"file:///{name", "unmatched '{'"},
		{"file:///name}", "unmatched '}'"},
		{"file:///{}", "only simple {name}"},
		{"file:///{+path}", "only simple {name}"},
		{"file:///{#frag}", "only simple {name}"},
		{"file:///{a,b}", "only simple {name}"},
		{"file:///{a*}", "only simple {name}"},
		{"file:///{a:3}", "only simple {name}"},
		{"file:///{?q}", "only simple {name}"},
		{"file:///{a b}", "only simple {name}"},
		{"file:///{a{b}}", "only simple {name}"},
		{"file:///{a}{b}", "adjacent"},
		{"file:///{a}/x}", "unmatched '}'"},
	}
	for _, tt := range bad {
		if _, err := parseURITemplate(tt.tmpl); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("parse %q: err %v, want one containing %q", tt.tmpl, err, tt.msg)
		}
	}
}

func TestURITemplateMatch(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
		match     bool
	}{
		{"file:///static", "file:///static", nil, true},
		{"file:///static", "file:///static/x", nil, false},
		{"file:///static", "file:///stati", nil, false},
		{"file:///{name}", "file:///readme.md", map[string]string{"name": "readme.md"}, true},
		{"file:///{name}", "file:///a/b", nil, false},
		{"file:///{name}", "file:///", nil, false},
		{"file:///{name}", "file:///a?b", nil, false},
		{"file:///{name}", "file:///a#b", nil, false},
		{"file:///{name}", "file:///hello%20world", map[string]string{"name": "hello world"}, true},
		{"file:///{name}", "file:///caf%C3%A9", map[string]string{"name": "café"}, true},
		{"file:///{name}", "file:///bad%zz", nil, false},
		{"file:///{name}", "file:///a%2Fb", map[string]string{"name": "a/b"}, true},
		{"file:///{name}", "http:///x", nil, false},
		{"db://{table}/{id}.json", "db://users/42.json", map[string]string{"table": "users", "id": "42"}, true},
		{"db://{table}/{id}.json", "db://users/42.xml", nil, false},
		{"db://{table}/{id}.json", "db://users/.json", nil, false},
		{"db://{table}/{id}.json", "db:///42.json", nil, false},
		{"db://{table}/{id}.json", "db://users/42.json/x", nil, false},
		{"db://{table}/{id}.json", "db://users/a.b.json", map[string]string{"table": "users", "id": "a.b"}, true},
		{"api://q?user={u}&page={p}", "api://q?user=ann&page=2", map[string]string{"u": "ann", "p": "2"}, true},
		{"api://q?user={u}&page={p}", "api://q?user=ann&x=1&page=2", nil, false},
		{"api://q?user={u}&page={p}", "api://q?user=&page=2", nil, false},
		{"{scheme}://x", "https://x", map[string]string{"scheme": "https"}, true},
		{"{scheme}://x", "://x", nil, false},
		{"v://{a}-{b}", "v://x-y", map[string]string{"a": "x", "b": "y"}, true},
		{"v://{a}-{b}", "v://x-y-z", map[string]string{"a": "x", "b": "y-z"}, true},
		{"v://{a}-{b}", "v://xy", nil, false},
		{"v://{a}-{b}", "v://x/-y", nil, false},
	}
	for _, tt := range tests {
		p, err := parseURITemplate(tt.tmpl)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.tmpl, err)
		}
		got, ok := p.match(tt.uri)
		if ok != tt.match || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q.match(%q) = %v, %v; want %v, %v", tt.tmpl, tt.uri, got, ok, tt.want, tt.match)
		}
	}
}

func TestResourceTemplates(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	read := func(name string) ResourceHandler {
		return func(_ context.Context, r *ResourceRequest) (*ResourceResult, error) {
			var b strings.Builder
			b.WriteString(name)
			for _, k := range []string{"table", "id", "path"} {
				if v, ok := r.Params[k]; ok {
					b.WriteString(" " + k + "=" + v)
				}
			}
			return &ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(r.URI, "", b.String())}}, nil
		}
	}
	for _, tt := range []ResourceTemplate{
		{URITemplate: "db://{table}/{id}", Name: "row"},
		{URITemplate: "db://{table}/{id}.json", Name: "json"}, // shadowed by the first for any URI it matches
		{URITemplate: "files://{path}", Name: "file"},
	} {
		if err := s.AddResourceTemplate(tt, read(tt.Name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddResource(Resource{URI: "db://users/admin", Name: "admin"}, read("static")); err != nil {
		t.Fatal(err)
	}
	for uri, want := range map[string]string{
		"db://users/admin":   "static",
		"db://users/7":       "row table=users id=7",
		"db://users/7.json":  "row table=users id=7.json",
		"files://notes.txt":  "file path=notes.txt",
		"files://a%20b":      "file path=a b",
		"db://users/7/extra": "",
		"files://a/b":        "",
	} {
		rec := send(t, c, "resources/read", map[string]any{"uri": uri})
		if want == "" {
			wantError(t, rec, http.StatusBadRequest, -32602)
			continue
		}
		res := completeResult(t, rec)
		c := res["contents"].([]any)[0].(map[string]any)
		if c["text"] != want || c["uri"] != uri {
			t.Errorf("%s: contents %v, want text %q", uri, c, want)
		}
	}

	for _, bad := range []struct {
		t   ResourceTemplate
		h   ResourceHandler
		msg string
	}{
		{ResourceTemplate{URITemplate: "x://{a}", Name: ""}, read("x"), "required"},
		{ResourceTemplate{URITemplate: "", Name: "x"}, read("x"), "required"},
		{ResourceTemplate{URITemplate: "x://{a}", Name: "x"}, nil, "nil handler"},
		{ResourceTemplate{URITemplate: "x://{+a}", Name: "x"}, read("x"), "only simple"},
	} {
		if err := s.AddResourceTemplate(bad.t, bad.h); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("AddResourceTemplate(%+v) = %v, want %q", bad.t, err, bad.msg)
		}
	}
	for _, bad := range []Resource{{URI: "x://a"}, {Name: "a"}} {
		if err := s.AddResource(bad, read("x")); err == nil {
			t.Errorf("AddResource(%+v) succeeded", bad)
		}
	}
}
