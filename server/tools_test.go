package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
)

// routeSchema is a 2020-12 schema with $defs, $ref and
// additionalProperties:false, in a key order encoding/json would not
// choose.
const routeSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"point":{"type":"object","properties":{"y":{"type":"integer"},"x":{"type":"integer"}},"required":["x","y"],"additionalProperties":false}},` +
	`"properties":{"to":{"$ref":"#/$defs/point"},"from":{"$ref":"#/$defs/point"},"label":{"type":"string","maxLength":5}},` +
	`"required":["from","to"],"additionalProperties":false}`

const routeOutput = `{"type":"object","properties":{"km":{"type":"number"}},"required":["km"]}`

func routeServer(t *testing.T) (*Server, *int) {
	t.Helper()
	s := newTestServer(t, nil)
	calls := new(int)
	mustAddTool(t, s, Tool{
		Name:         "route",
		Title:        "Route",
		Description:  "Distance between two points",
		InputSchema:  json.RawMessage(routeSchema),
		OutputSchema: json.RawMessage(routeOutput),
	}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		*calls++
		type point struct {
			X int `json:"x"`
			Y int `json:"y"`
		}
		var a struct {
			From point `json:"from"`
			To   point `json:"to"`
		}
		if err := req.Bind(&a); err != nil {
			return nil, err
		}
		km := abs(a.To.X-a.From.X) + abs(a.To.Y-a.From.Y)
		return &ToolResult{Content: nil, StructuredContent: map[string]int{"km": km}}, nil
	})
	return s, calls
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func TestToolSchemaKeptExactly(t *testing.T) {
	s, _ := routeServer(t)
	r := send(t, newClient(t, s, ""), "tools/list", nil)
	completeResult(t, r)
	body := string(r.Body)
	for _, want := range []string{`"inputSchema":` + routeSchema, `"outputSchema":` + routeOutput} {
		if !strings.Contains(body, want) {
			t.Errorf("tools/list does not carry the schema byte for byte:\nwant %s\nin   %s", want, body)
		}
	}
	if !strings.Contains(body, `{"name":"route","title":"Route","description":"Distance between two points",`) {
		t.Errorf("tool fields: %s", body)
	}

	t.Run("missing schema", func(t *testing.T) {
		s := newTestServer(t, nil)
		textTool(s, t, "bare", "x")
		r := send(t, newClient(t, s, ""), "tools/list", nil)
		if !strings.Contains(string(r.Body), `"inputSchema":{"type":"object"}`) {
			t.Errorf("tools/list: %s", r.Body)
		}
	})
}

func TestToolArgumentValidation(t *testing.T) {
	s, calls := routeServer(t)
	c := newClient(t, s, "")
	p := func(x, y int) map[string]any { return map[string]any{"x": x, "y": y} }

	t.Run("valid", func(t *testing.T) {
		res := completeResult(t, sendTool(t, c, "route", map[string]any{"from": p(0, 0), "to": p(3, 4)}))
		if !jsonEqual(res["structuredContent"], map[string]any{"km": 7}) {
			t.Errorf("structuredContent = %v", res["structuredContent"])
		}
	})
	t.Run("reordered and spaced arguments", func(t *testing.T) {
		completeResult(t, sendTool(t, c, "route", json.RawMessage(`{ "to" : {"y":4,"x":3},  "from":{"y":0,"x":0} }`)))
	})

	invalid := []struct {
		name string
		args any
		want []string
	}{
		{"missing property", map[string]any{"from": p(0, 0)}, []string{"to"}},
		{"extra property", map[string]any{"from": p(0, 0), "to": p(1, 1), "speed": 3}, []string{"speed"}},
		{"wrong type through $ref", map[string]any{"from": map[string]any{"x": "0", "y": 0}, "to": p(1, 1)}, []string{"/from/x"}},
		{"extra property through $ref", map[string]any{"from": map[string]any{"x": 0, "y": 0, "z": 0}, "to": p(1, 1)}, []string{"/from", "z"}},
		{"maxLength", map[string]any{"from": p(0, 0), "to": p(1, 1), "label": "toolong"}, []string{"/label"}},
		{"no arguments", nil, []string{"from"}},
	}
	for _, tt := range invalid {
		t.Run("invalid/"+tt.name, func(t *testing.T) {
			before := *calls
			res := completeResult(t, sendTool(t, c, "route", tt.args))
			text, isErr := toolText(t, res)
			if !isErr {
				t.Fatalf("isError = false; text %q", text)
			}
			if !strings.HasPrefix(text, "invalid arguments: ") {
				t.Errorf("message %q does not start with 'invalid arguments: '", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("message %q does not mention %q", text, w)
				}
			}
			if *calls != before {
				t.Error("the handler ran on invalid arguments")
			}
		})
	}

	t.Run("SkipInputValidation", func(t *testing.T) {
		s := newTestServer(t, nil)
		mustAddTool(t, s, Tool{Name: "raw", InputSchema: json.RawMessage(routeSchema)}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			return TextResult(string(req.Arguments)), nil
		}, SkipInputValidation())
		res := completeResult(t, sendTool(t, newClient(t, s, ""), "raw", map[string]any{"anything": 1}))
		if text, isErr := toolText(t, res); text != `{"anything":1}` || isErr {
			t.Errorf("result %q isError=%v", text, isErr)
		}
	})

	for _, args := range []string{`[1,2]`, `"x"`, `3`, `true`} {
		t.Run("non-object arguments "+args, func(t *testing.T) {
			before := *calls
			e := wantError(t, sendTool(t, c, "route", json.RawMessage(args)), http.StatusBadRequest, -32602)
			if !strings.Contains(e.Message, "arguments must be a JSON object") {
				t.Errorf("message %q", e.Message)
			}
			if *calls != before {
				t.Error("the handler ran")
			}
		})
	}
	t.Run("null arguments are {}", func(t *testing.T) {
		s := newTestServer(t, nil)
		mustAddTool(t, s, Tool{Name: "echo"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			return TextResult(string(req.Arguments)), nil
		})
		res := completeResult(t, sendTool(t, newClient(t, s, ""), "echo", json.RawMessage(`null`)))
		if text, _ := toolText(t, res); text != "{}" {
			t.Errorf("arguments = %q", text)
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestToolCallErrors(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "fail"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return nil, errors.New("disk on fire")
	})
	mustAddTool(t, s, Tool{Name: "rpcfail"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return nil, fmt.Errorf("wrapped: %w", &mcp.Error{Code: -32602, Message: "bad id", Data: map[string]any{"field": "id"}})
	})
	mustAddTool(t, s, Tool{Name: "appfail"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return nil, &mcp.Error{Code: 1234, Message: "quota"}
	})
	mustAddTool(t, s, Tool{Name: "errresult"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return ErrorResult("no such city"), nil
	})
	mustAddTool(t, s, Tool{Name: "nil"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return nil, nil
	})
	c := newClient(t, s, "")

	t.Run("plain error is an isError result", func(t *testing.T) {
		res := completeResult(t, sendTool(t, c, "fail", nil))
		if text, isErr := toolText(t, res); text != "disk on fire" || !isErr {
			t.Errorf("result %q isError=%v", text, isErr)
		}
	})
	t.Run("ErrorResult", func(t *testing.T) {
		res := completeResult(t, sendTool(t, c, "errresult", nil))
		if text, isErr := toolText(t, res); text != "no such city" || !isErr {
			t.Errorf("result %q isError=%v", text, isErr)
		}
	})
	t.Run("jsonrpc error is sent as is", func(t *testing.T) {
		e := wantError(t, sendTool(t, c, "rpcfail", nil), http.StatusBadRequest, -32602)
		if e.Message != "bad id" || string(e.Data) != `{"field":"id"}` {
			t.Errorf("error %q data %s", e.Message, e.Data)
		}
	})
	t.Run("application error code", func(t *testing.T) {
		e := wantError(t, sendTool(t, c, "appfail", nil), http.StatusOK, 1234)
		if e.Message != "quota" {
			t.Errorf("message %q", e.Message)
		}
	})
	t.Run("nil result", func(t *testing.T) {
		wantError(t, sendTool(t, c, "nil", nil), http.StatusOK, -32603)
	})
	t.Run("unknown tool", func(t *testing.T) {
		e := wantError(t, sendTool(t, c, "nope", nil), http.StatusBadRequest, -32602)
		if !strings.Contains(e.Message, `unknown tool "nope"`) {
			t.Errorf("message %q", e.Message)
		}
	})
	t.Run("no tool name", func(t *testing.T) {
		wantError(t, send(t, c, "tools/call", nil), http.StatusBadRequest, -32602)
	})
}

func TestAddToolErrors(t *testing.T) {
	s := newTestServer(t, nil)
	h := func(context.Context, *ToolRequest) (*ToolResult, error) { return TextResult(""), nil }
	tests := []struct {
		name string
		tool Tool
		h    ToolHandler
		want string
	}{
		{"empty name", Tool{}, h, "1 to 128 characters"},
		{"name too long", Tool{Name: strings.Repeat("a", 129)}, h, "1 to 128 characters"},
		{"name with a space", Tool{Name: "get weather"}, h, "only letters, digits"},
		{"name with a slash", Tool{Name: "a/b"}, h, "only letters, digits"},
		{"non-ASCII name", Tool{Name: "héllo"}, h, "only letters, digits"},
		{"nil handler", Tool{Name: "x"}, nil, "nil handler"},
		{"schema not JSON", Tool{Name: "x", InputSchema: json.RawMessage(`{"type":`)}, h, "not valid JSON"},
		{"schema not an object", Tool{Name: "x", InputSchema: json.RawMessage(`[]`)}, h, "must be a JSON object"},
		{"schema of a non-object type", Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"string"}`)}, h, `must have "type": "object"`},
		{"schema without a type", Tool{Name: "x", InputSchema: json.RawMessage(`{"properties":{}}`)}, h, `must have "type": "object"`},
		{"schema that does not compile", Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nope"}}}`)}, h, "does not compile"},
		{"dangling $ref", Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`)}, h, "does not compile"},
		{"bad output schema", Tool{Name: "x", OutputSchema: json.RawMessage(`{"type":"array"}`)}, h, "output schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.AddTool(tt.tool, tt.h)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("AddTool error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	if s.capabilities().Tools != nil {
		t.Error("a failed AddTool registered a tool")
	}
}

func TestToolNames(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	for _, name := range []string{"a", "get_weather", "Get-Weather.v2", strings.Repeat("x", 128)} {
		textTool(s, t, name, name)
		res := completeResult(t, sendTool(t, c, name, nil))
		if text, _ := toolText(t, res); text != name {
			t.Errorf("%s: text %q", name, text)
		}
	}
}

func TestToolRequires(t *testing.T) {
	s := newTestServer(t, nil)
	var calls int
	mustAddTool(t, s, Tool{Name: "needs"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		calls++
		return TextResult("ok"), nil
	}, RequireCapabilities(mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}, Roots: &mcp.RootsCapability{}}))
	for _, tt := range []struct{ caps, data string }{
		{`{}`, `{"requiredCapabilities":{"sampling":{},"roots":{}}}`},
		{`{"sampling":{}}`, `{"requiredCapabilities":{"roots":{}}}`},
		{`{"roots":{},"elicitation":{}}`, `{"requiredCapabilities":{"sampling":{}}}`},
	} {
		e := wantError(t, sendTool(t, newClient(t, s, tt.caps), "needs", nil), http.StatusBadRequest, -32021)
		if string(e.Data) != tt.data {
			t.Errorf("caps %s: data %s, want %s", tt.caps, e.Data, tt.data)
		}
	}
	if calls != 0 {
		t.Errorf("the handler ran %d times", calls)
	}
	completeResult(t, sendTool(t, newClient(t, s, `{"sampling":{"tools":{}},"roots":{"listChanged":true}}`), "needs", nil))
	if calls != 1 {
		t.Errorf("the handler ran %d times, want 1", calls)
	}
}

func TestAddToolReplaces(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "a", "first")
	textTool(s, t, "b", "b")
	textTool(s, t, "a", "second")
	c := newClient(t, s, "")
	res := completeResult(t, sendTool(t, c, "a", nil))
	if text, _ := toolText(t, res); text != "second" {
		t.Errorf("text %q", text)
	}
	list := completeResult(t, send(t, c, "tools/list", nil))
	tools := list["tools"].([]any)
	if len(tools) != 2 || tools[0].(map[string]any)["name"] != "a" || tools[1].(map[string]any)["name"] != "b" {
		t.Errorf("tools = %v", tools)
	}
}
