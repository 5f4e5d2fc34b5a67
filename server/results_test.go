package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// catalogServer registers n tools, prompts, resources and templates.
func catalogServer(t *testing.T, opts *Options, n int) *Server {
	t.Helper()
	s := newTestServer(t, opts)
	for i := range n {
		textTool(s, t, fmt.Sprintf("tool%d", i), "hi")
		if err := s.AddPrompt(Prompt{Name: fmt.Sprintf("prompt%d", i)}, func(context.Context, *PromptRequest) (*PromptResult, error) {
			return &PromptResult{Messages: []PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text("p")}}}, nil
		}); err != nil {
			t.Fatal(err)
		}
		uri := fmt.Sprintf("file:///r%d.txt", i)
		if err := s.AddResource(Resource{URI: uri, Name: fmt.Sprintf("r%d", i)}, func(_ context.Context, r *ResourceRequest) (*ResourceResult, error) {
			return &ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(r.URI, "text/plain", "body")}}, nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: fmt.Sprintf("file:///t%d/{name}", i), Name: fmt.Sprintf("t%d", i)}, func(_ context.Context, r *ResourceRequest) (*ResourceResult, error) {
			return &ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(r.URI, "text/plain", r.Params["name"])}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func wantCache(t *testing.T, res map[string]any, ttl float64, scope string) {
	t.Helper()
	if res["ttlMs"] != ttl || res["cacheScope"] != scope {
		t.Errorf("ttlMs %v cacheScope %v, want %v %s", res["ttlMs"], res["cacheScope"], ttl, scope)
	}
}

func TestDiscover(t *testing.T) {
	t.Run("empty server", func(t *testing.T) {
		s := newTestServer(t, &Options{Instructions: "Be nice."})
		c := newClient(t, s, "")
		res := completeResult(t, send(t, c, "server/discover", nil))
		if !reflect.DeepEqual(res["supportedVersions"], []any{testVersion}) {
			t.Errorf("supportedVersions = %v", res["supportedVersions"])
		}
		if !reflect.DeepEqual(res["capabilities"], map[string]any{}) {
			t.Errorf("capabilities = %v, want {}", res["capabilities"])
		}
		if res["instructions"] != "Be nice." {
			t.Errorf("instructions = %v", res["instructions"])
		}
		if _, ok := res["serverInfo"]; ok {
			t.Error("discover has a top-level serverInfo")
		}
		wantCache(t, res, 0, "public")
		for _, m := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list", "completion/complete"} {
			wantError(t, send(t, c, m, nil), http.StatusNotFound, -32601)
		}
	})
	t.Run("tools only", func(t *testing.T) {
		s := newTestServer(t, &Options{ListCache: CachePolicy{TTL: 60000, Scope: "private"}})
		c := newClient(t, s, "")
		textTool(s, t, "hello", "hi")
		res := completeResult(t, send(t, c, "server/discover", nil))
		want := map[string]any{"tools": map[string]any{"listChanged": true}}
		if !reflect.DeepEqual(res["capabilities"], want) {
			t.Errorf("capabilities = %v, want %v", res["capabilities"], want)
		}
		if _, ok := res["instructions"]; ok {
			t.Error("empty instructions are sent")
		}
		wantCache(t, res, 60000, "private")
		wantError(t, send(t, c, "prompts/list", nil), http.StatusNotFound, -32601)
		wantError(t, send(t, c, "prompts/get", map[string]any{"name": "x"}), http.StatusBadRequest, -32602)
		wantError(t, send(t, c, "resources/list", nil), http.StatusNotFound, -32601)
	})
	t.Run("everything", func(t *testing.T) {
		s := catalogServer(t, &Options{Logging: true}, 1)
		c := newClient(t, s, "")
		s.SetCompletion(func(context.Context, *CompletionRequest) (*Completion, error) { return &Completion{}, nil })
		res := completeResult(t, send(t, c, "server/discover", nil))
		want := map[string]any{
			"tools":       map[string]any{"listChanged": true},
			"prompts":     map[string]any{"listChanged": true},
			"resources":   map[string]any{"subscribe": true, "listChanged": true},
			"completions": map[string]any{},
			"logging":     map[string]any{},
		}
		if !reflect.DeepEqual(res["capabilities"], want) {
			t.Errorf("capabilities = %v, want %v", res["capabilities"], want)
		}
	})
	t.Run("capabilities follow removals", func(t *testing.T) {
		s := newTestServer(t, nil)
		c := newClient(t, s, "")
		textTool(s, t, "hello", "hi")
		if !s.RemoveTool("hello") || s.RemoveTool("hello") {
			t.Fatal("RemoveTool reported wrongly")
		}
		res := completeResult(t, send(t, c, "server/discover", nil))
		if !reflect.DeepEqual(res["capabilities"], map[string]any{}) {
			t.Errorf("capabilities = %v", res["capabilities"])
		}
		wantError(t, send(t, c, "tools/list", nil), http.StatusNotFound, -32601)
	})
}

func TestListsAndCaching(t *testing.T) {
	s := catalogServer(t, &Options{ListCache: CachePolicy{TTL: 1000}, ReadCache: CachePolicy{TTL: 5, Scope: "private"}}, 2)
	c := newClient(t, s, "")
	lists := map[string]string{
		"tools/list":               "tools",
		"prompts/list":             "prompts",
		"resources/list":           "resources",
		"resources/templates/list": "resourceTemplates",
	}
	for method, field := range lists {
		t.Run(method, func(t *testing.T) {
			res := completeResult(t, send(t, c, method, nil))
			wantCache(t, res, 1000, "public")
			items, _ := res[field].([]any)
			if len(items) != 2 {
				t.Errorf("%s has %d items, want 2: %v", field, len(items), res)
			}
			if _, ok := res["nextCursor"]; ok {
				t.Error("nextCursor without a page size")
			}
		})
	}
	t.Run("resources/read uses ReadCache", func(t *testing.T) {
		res := completeResult(t, send(t, c, "resources/read", map[string]any{"uri": "file:///r1.txt"}))
		wantCache(t, res, 5, "private")
		want := []any{map[string]any{"uri": "file:///r1.txt", "mimeType": "text/plain", "text": "body"}}
		if !reflect.DeepEqual(res["contents"], want) {
			t.Errorf("contents = %v", res["contents"])
		}
	})
	t.Run("resources/read through a template", func(t *testing.T) {
		res := completeResult(t, send(t, c, "resources/read", map[string]any{"uri": "file:///t1/hello%20world"}))
		contents, _ := res["contents"].([]any)
		if len(contents) != 1 || contents[0].(map[string]any)["text"] != "hello world" {
			t.Errorf("contents = %v", res["contents"])
		}
		wantCache(t, res, 5, "private")
	})
	t.Run("unknown resource", func(t *testing.T) {
		e := wantError(t, send(t, c, "resources/read", map[string]any{"uri": "file:///nope"}), http.StatusBadRequest, -32602)
		if string(e.Data) != `{"uri":"file:///nope"}` {
			t.Errorf("data = %s", e.Data)
		}
	})
}

func TestReadCacheOverride(t *testing.T) {
	s := newTestServer(t, nil)
	add := func(uri string, c *CachePolicy) {
		if err := s.AddResource(Resource{URI: uri, Name: uri}, func(_ context.Context, r *ResourceRequest) (*ResourceResult, error) {
			return &ResourceResult{Contents: []mcp.ResourceContents{mcp.BlobContents(r.URI, "application/octet-stream", []byte{1, 2})}, Cache: c}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	add("mem://default", nil)
	add("mem://override", &CachePolicy{TTL: 42, Scope: "private"})
	add("mem://scope-defaulted", &CachePolicy{TTL: 7})
	add("mem://bad", &CachePolicy{TTL: -1})

	c := newClient(t, s, "")
	read := func(uri string) *mcptest.Response { return send(t, c, "resources/read", map[string]any{"uri": uri}) }
	res := completeResult(t, read("mem://default"))
	wantCache(t, res, 0, "public")
	if c := res["contents"].([]any)[0].(map[string]any); c["blob"] != "AQI=" {
		t.Errorf("contents = %v", c)
	}
	wantCache(t, completeResult(t, read("mem://override")), 42, "private")
	wantCache(t, completeResult(t, read("mem://scope-defaulted")), 7, "public")
	e := wantError(t, read("mem://bad"), http.StatusOK, -32603)
	if !strings.Contains(e.Message, "negative cache TTL") {
		t.Errorf("message %q", e.Message)
	}
}

func TestPagination(t *testing.T) {
	s := catalogServer(t, &Options{PageSize: 2}, 5)
	c := newClient(t, s, "")
	for method, field := range map[string]string{"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"} {
		t.Run(method, func(t *testing.T) {
			var (
				names  []string
				cursor string
				pages  int
			)
			for {
				params := map[string]any{}
				if cursor != "" {
					params["cursor"] = cursor
				}
				res := completeResult(t, send(t, c, method, params))
				wantCache(t, res, 0, "public")
				items, _ := res[field].([]any)
				pages++
				for _, it := range items {
					m := it.(map[string]any)
					names = append(names, m["name"].(string))
				}
				next, ok := res["nextCursor"].(string)
				if !ok {
					break
				}
				if len(items) != 2 {
					t.Errorf("page %d has %d items", pages, len(items))
				}
				cursor = next
				if pages > 5 {
					t.Fatal("pagination does not end")
				}
			}
			if pages != 3 || len(names) != 5 {
				t.Errorf("%d pages, names %v", pages, names)
			}
			for i := 1; i < len(names); i++ {
				if names[i] <= names[i-1] {
					t.Errorf("names out of order or repeated: %v", names)
				}
			}
		})
	}
	t.Run("invalid cursors", func(t *testing.T) {
		for _, cursor := range []string{"!!!", base64.RawURLEncoding.EncodeToString([]byte("-1")), base64.RawURLEncoding.EncodeToString([]byte("6")), base64.RawURLEncoding.EncodeToString([]byte("two")), "MQ=="} {
			e := wantError(t, send(t, c, "tools/list", map[string]any{"cursor": cursor}), http.StatusBadRequest, -32602)
			if !strings.Contains(e.Message, "invalid cursor") {
				t.Errorf("cursor %q: message %q", cursor, e.Message)
			}
		}
		wantError(t, send(t, c, "tools/list", map[string]any{"cursor": 2}), http.StatusBadRequest, -32602)
	})
}

func TestResultMeta(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	mustAddTool(t, s, Tool{Name: "meta"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return &ToolResult{Content: nil, StructuredContent: map[string]int{"n": 1}, Meta: map[string]any{"x/y": "z"}}, nil
	})
	res := completeResult(t, sendTool(t, c, "meta", nil))
	if !reflect.DeepEqual(res["content"], []any{}) {
		t.Errorf("content = %v, want []", res["content"])
	}
	if !reflect.DeepEqual(res["structuredContent"], map[string]any{"n": float64(1)}) {
		t.Errorf("structuredContent = %v", res["structuredContent"])
	}
	if m := res["_meta"].(map[string]any); m["x/y"] != "z" {
		t.Errorf("_meta = %v", m)
	}
	if _, ok := res["isError"]; ok {
		t.Error("isError false is sent")
	}
}

func TestNewOptionsValidation(t *testing.T) {
	ring := testRing(t)
	for _, o := range []Options{
		{StateKeys: ring, ListCache: CachePolicy{TTL: -1}},
		{StateKeys: ring, ReadCache: CachePolicy{Scope: "shared"}},
		{StateKeys: ring, PageSize: -1},
		{StateKeys: ring, StateTTL: -1},
	} {
		if _, err := New(testInfo, &o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
	if _, err := New(mcp.Implementation{Name: "x"}, &Options{StateKeys: ring}); err == nil {
		t.Error("New without a version succeeded")
	}
}

func TestCompletion(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	var seen *CompletionRequest
	s.SetCompletion(func(ctx context.Context, req *CompletionRequest) (*Completion, error) {
		seen = req
		if req.Argument.Value == "many" {
			vals := make([]string, 150)
			for i := range vals {
				vals[i] = fmt.Sprint(i)
			}
			total := 150
			return &Completion{Values: vals, Total: &total}, nil
		}
		if req.Argument.Value == "none" {
			return nil, nil
		}
		return &Completion{Values: []string{req.Argument.Value + "1"}}, nil
	})
	complete := func(ref map[string]any, value string) *mcptest.Response {
		return send(t, c, "completion/complete", map[string]any{
			"ref":      ref,
			"argument": map[string]any{"name": "city", "value": value},
			"context":  map[string]any{"arguments": map[string]any{"country": "fr"}},
		})
	}
	res := completeResult(t, complete(map[string]any{"type": "ref/prompt", "name": "p"}, "par"))
	if !jsonEqual(res["completion"], map[string]any{"values": []string{"par1"}}) {
		t.Errorf("completion = %v", res["completion"])
	}
	if seen.Ref.Name != "p" || seen.Argument.Name != "city" || seen.Context["country"] != "fr" || seen.Round() != 0 {
		t.Errorf("request = %+v", seen)
	}
	res = completeResult(t, complete(map[string]any{"type": "ref/resource", "uri": "file:///{x}"}, "many"))
	comp := res["completion"].(map[string]any)
	if len(comp["values"].([]any)) != 100 || comp["hasMore"] != true || comp["total"] != float64(150) {
		t.Errorf("completion has %d values, hasMore %v, total %v", len(comp["values"].([]any)), comp["hasMore"], comp["total"])
	}
	res = completeResult(t, complete(map[string]any{"type": "ref/prompt", "name": "p"}, "none"))
	if !jsonEqual(res["completion"], map[string]any{"values": []string{}}) {
		t.Errorf("completion = %v", res["completion"])
	}
	for _, ref := range []map[string]any{{"type": "ref/prompt"}, {"type": "ref/resource"}, {"type": "ref/tool", "name": "x"}} {
		wantError(t, complete(ref, "x"), http.StatusBadRequest, -32602)
	}
	wantError(t, send(t, c, "completion/complete", nil), http.StatusBadRequest, -32602)
}
