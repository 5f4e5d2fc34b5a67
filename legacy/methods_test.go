package legacy_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

func TestPingAndSetLevel(t *testing.T) {
	f := newFixture(t, newServer(t))
	c := connect(t, f, `{}`)

	for i, p := range []any{nil, map[string]any{}} {
		s := c.request(i+1, "ping", p)
		if s.status != http.StatusOK || s.ctype != "application/json" {
			t.Errorf("ping: HTTP %d %s", s.status, s.ctype)
		}
		if got := s.result(string(mustJSON(t, i+1))); string(got) != "{}" {
			t.Errorf("ping result = %s, want exactly {}", got)
		}
	}
	for _, level := range []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"} {
		if got := c.call("lvl", "logging/setLevel", map[string]any{"level": level}); string(got) != "{}" {
			t.Errorf("setLevel %s = %s, want exactly {}", level, got)
		}
	}
	for _, p := range []any{nil, map[string]any{}, map[string]any{"level": "verbose"}, map[string]any{"level": "DEBUG"}, map[string]any{"level": 3}} {
		s := c.request("bad", "logging/setLevel", p)
		if s.status != http.StatusOK {
			t.Errorf("setLevel %v: HTTP %d, want 200 (legacy errors ride a 200)", p, s.status)
		}
		if e := s.rpcErr(`"bad"`); e.Code != -32602 {
			t.Errorf("setLevel %v: code %d, want -32602", p, e.Code)
		}
	}
}

func TestSetLevelWithoutLoggingCapability(t *testing.T) {
	srv := newServerWith(t, func(o *server.Options) { o.Logging = false })
	f := newFixture(t, srv)
	c := connect(t, f, `{}`)
	if e := c.request(1, "logging/setLevel", map[string]any{"level": "debug"}).rpcErr("1"); e.Code != -32601 {
		t.Errorf("code %d, want -32601", e.Code)
	}
	if e := c.request(2, "resources/subscribe", map[string]any{"uri": "test://x"}).rpcErr("2"); e.Code != -32601 {
		t.Errorf("subscribe without resources: code %d, want -32601", e.Code)
	}
	if e := c.request(3, "tools/list", nil).rpcErr("3"); e.Code != -32601 {
		t.Errorf("tools/list without tools: code %d, want -32601", e.Code)
	}
	if e := c.request(4, "no/such", nil).rpcErr("4"); e.Code != -32601 {
		t.Errorf("unknown method: code %d, want -32601", e.Code)
	}
}

func TestLogLevelFiltersToolLogs(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "chatty", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		for _, l := range []struct {
			level slog.Level
			name  string
		}{{slog.LevelDebug, "debug"}, {slog.LevelInfo, "info"}, {slog.LevelWarn, "warning"}} {
			if err := req.Log(ctx, l.level, "chatty", "at "+l.name); err != nil {
				return nil, err
			}
		}
		return server.TextResult("logged"), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{}`)

	// logs returns the levels of the notifications/message that precede the
	// result on the tools/call stream.
	logs := func(id int) []string {
		t.Helper()
		s := c.request(id, "tools/call", toolCall("chatty", nil))
		var levels []string
		for {
			m := s.next()
			if m.IsResponse() {
				if string(m.ID) != string(mustJSON(t, id)) || m.Error != nil {
					t.Fatalf("response = %s", m.Raw)
				}
				legacyShape(t, "tools/call", m.Result)
				break
			}
			if m.Method != "notifications/message" {
				t.Fatalf("unexpected message %s", m.Raw)
			}
			p := params(t, m)
			if p["logger"] != "chatty" || p["data"] != "at "+p["level"].(string) {
				t.Errorf("log params = %s", m.Params)
			}
			levels = append(levels, p["level"].(string))
		}
		if s.ctype != "text/event-stream" {
			t.Errorf("Content-Type = %q, want text/event-stream", s.ctype)
		}
		return levels
	}
	if got := strings.Join(logs(1), ","); got != "info,warning" {
		t.Errorf("default level: logs %q, want info,warning", got)
	}
	c.call(2, "logging/setLevel", map[string]any{"level": "debug"})
	if got := strings.Join(logs(3), ","); got != "debug,info,warning" {
		t.Errorf("after setLevel debug: logs %q, want debug,info,warning", got)
	}
	c.call(4, "logging/setLevel", map[string]any{"level": "warning"})
	if got := strings.Join(logs(5), ","); got != "warning" {
		t.Errorf("after setLevel warning: logs %q, want warning", got)
	}

	// The level belongs to the session.
	other := connect(t, f, `{}`)
	s := other.request(6, "tools/call", toolCall("chatty", nil))
	var levels []string
	for m := s.next(); !m.IsResponse(); m = s.next() {
		levels = append(levels, params(t, m)["level"].(string))
	}
	if got := strings.Join(levels, ","); got != "info,warning" {
		t.Errorf("another session: logs %q, want info,warning", got)
	}
}

func TestResultsHaveLegacyShape(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "hello", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return &server.ToolResult{Content: []mcp.Block{mcp.Text("hello")}, StructuredContent: map[string]any{"n": 1}}, nil
	})
	addTool(t, srv, "broken", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.ErrorResult("it broke"), nil
	})
	textResource(t, srv, "test://static", "static text")
	if err := srv.AddResourceTemplate(server.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item"}, func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
		return &server.ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(req.URI, "text/plain", "item "+req.Params["id"])}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrompt(server.Prompt{Name: "greet", Description: "greets", Arguments: []server.PromptArgument{{Name: "who", Required: true}}}, func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
		return &server.PromptResult{Messages: []server.PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text("hi " + req.Arguments["who"])}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	srv.SetCompletion(func(ctx context.Context, req *server.CompletionRequest) (*server.Completion, error) {
		return &server.Completion{Values: []string{req.Argument.Value + "1"}}, nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{}`)

	init := newClient(t, f)
	res := legacyShape(t, "initialize", init.call(0, "initialize", initParams(legacyVersion, `{}`)))
	caps := res["capabilities"].(map[string]any)
	for _, k := range []string{"tools", "prompts", "resources", "completions", "logging"} {
		if _, ok := caps[k]; !ok {
			t.Errorf("capabilities lack %s: %v", k, caps)
		}
	}
	if r, _ := caps["resources"].(map[string]any); r["subscribe"] != true || r["listChanged"] != true {
		t.Errorf("capabilities.resources = %v", caps["resources"])
	}

	for _, tc := range []struct {
		method string
		params any
		check  func(m map[string]any)
	}{
		{"tools/list", nil, func(m map[string]any) {
			if tools, _ := m["tools"].([]any); len(tools) != 2 {
				t.Errorf("tools = %v", m["tools"])
			}
		}},
		{"prompts/list", nil, func(m map[string]any) {
			if p, _ := m["prompts"].([]any); len(p) != 1 {
				t.Errorf("prompts = %v", m["prompts"])
			}
		}},
		{"resources/list", nil, func(m map[string]any) {
			if r, _ := m["resources"].([]any); len(r) != 1 {
				t.Errorf("resources = %v", m["resources"])
			}
		}},
		{"resources/templates/list", nil, func(m map[string]any) {
			if r, _ := m["resourceTemplates"].([]any); len(r) != 1 {
				t.Errorf("resourceTemplates = %v", m["resourceTemplates"])
			}
		}},
		{"resources/read", map[string]any{"uri": "test://static"}, func(m map[string]any) {
			cs, _ := m["contents"].([]any)
			if len(cs) != 1 || cs[0].(map[string]any)["text"] != "static text" {
				t.Errorf("contents = %v", m["contents"])
			}
		}},
		{"resources/read", map[string]any{"uri": "test://item/42"}, func(m map[string]any) {
			cs, _ := m["contents"].([]any)
			if len(cs) != 1 || cs[0].(map[string]any)["text"] != "item 42" {
				t.Errorf("contents = %v", m["contents"])
			}
		}},
		{"prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "Ada"}}, func(m map[string]any) {
			if !strings.Contains(string(mustJSON(t, m["messages"])), "hi Ada") {
				t.Errorf("messages = %v", m["messages"])
			}
		}},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "who", "value": "A"}}, func(m map[string]any) {
			if v, _ := m["completion"].(map[string]any)["values"].([]any); len(v) != 1 || v[0] != "A1" {
				t.Errorf("completion = %v", m["completion"])
			}
		}},
		{"tools/call", toolCall("hello", map[string]any{}), func(m map[string]any) {
			if m["structuredContent"] == nil {
				t.Errorf("structuredContent missing: %v", m)
			}
		}},
		{"tools/call", toolCall("broken", nil), func(m map[string]any) {
			if m["isError"] != true {
				t.Errorf("isError missing: %v", m)
			}
		}},
	} {
		raw := c.call(tc.method, tc.method, tc.params)
		tc.check(legacyShape(t, tc.method, raw))
	}

	// Protocol errors keep their codes in the legacy era.
	for _, tc := range []struct {
		method string
		params any
		code   int
	}{
		{"tools/call", toolCall("nope", nil), -32602},
		{"tools/call", map[string]any{}, -32602},
		{"prompts/get", map[string]any{"name": "greet"}, -32602},
		{"resources/read", map[string]any{"uri": "test://missing"}, -32602},
	} {
		if e := c.request("e", tc.method, tc.params).rpcErr(`"e"`); e.Code != tc.code {
			t.Errorf("%s %v: code %d (%s), want %d", tc.method, tc.params, e.Code, e.Message, tc.code)
		}
	}
}

// TestPlainJSONWithoutSSE checks a request that does not accept SSE gets a
// plain JSON response, and a blocking call in it fails instead of hanging.
func TestPlainJSONWithoutSSE(t *testing.T) {
	srv := newServer(t)
	out := make(chan error, 1)
	addTool(t, srv, "ask", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		_, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
		out <- err
		return server.TextResult("after"), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)
	s := c.requestWith(1, "tools/call", toolCall("ask", nil), map[string]string{"Accept": "application/json"})
	if err := recv(t, out, "handler"); err == nil || !strings.Contains(err.Error(), "text/event-stream") {
		t.Errorf("err = %v, want one naming text/event-stream", err)
	}
	if s.ctype != "application/json" {
		t.Errorf("Content-Type = %q", s.ctype)
	}
	if text, _ := toolText(t, s.result("1")); text != "after" {
		t.Errorf("text = %q", text)
	}
}

// TestDuplicateRequestID checks an id already in flight is refused.
func TestDuplicateRequestID(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "ask", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		r, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
		if err != nil {
			return nil, err
		}
		return server.TextResult(string(r.Action)), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)
	first := c.request(1, "tools/call", toolCall("ask", nil))
	req := first.nextRequest("elicitation/create")
	if e := c.request(1, "ping", nil).rpcErr("1"); e.Code != -32600 || !strings.Contains(e.Message, "already in use") {
		t.Errorf("duplicate id: %d %q", e.Code, e.Message)
	}
	c.answer(req, map[string]any{"action": "decline"})
	if text, _ := toolText(t, first.result("1")); text != "decline" {
		t.Errorf("text = %q", text)
	}
}

// TestProgressOnTheCallStream checks notifications/progress for a legacy
// request with a progress token in params._meta.
func TestProgressOnTheCallStream(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "steps", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		for i := range 3 {
			if err := req.Progress(ctx, float64(i*50), 100, "step"); err != nil {
				return nil, err
			}
		}
		return server.TextResult("done"), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{}`)
	p := toolCall("steps", nil)
	p["_meta"] = map[string]any{"progressToken": "tok-7"}
	s := c.request(1, "tools/call", p)
	for i := range 3 {
		m := s.next()
		pp := params(t, m)
		if m.Method != "notifications/progress" || pp["progressToken"] != "tok-7" || pp["progress"] != float64(i*50) || pp["total"] != float64(100) {
			t.Errorf("event %d = %s", i, m.Raw)
		}
	}
	if text, _ := toolText(t, s.result("1")); text != "done" {
		t.Errorf("text = %q", text)
	}
	// Without a token nothing precedes the result.
	s = c.request(2, "tools/call", toolCall("steps", nil))
	if s.ctype != "application/json" {
		t.Errorf("Content-Type = %q without a progress token", s.ctype)
	}
	s.result("2")
}
