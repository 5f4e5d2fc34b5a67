package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/labstack/echo/v4"

	"github.com/baton-mcp/baton/content"
	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// newExampleServer returns a server with a fixed key, quiet logs.
func newExampleServer() *server.Server {
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "2026-12", Secret: []byte("an example key of at least 32 bytes!")})
	if err != nil {
		panic(err)
	}
	srv, err := server.New(server.Implementation{Name: "example", Version: "1.0.0"}, &server.Options{
		StateKeys: ring,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	return srv
}

// post sends one modern request and returns the decoded result.
func post(h http.Handler, method, name string, params map[string]any) map[string]any {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out struct {
		Result map[string]any `json:"result"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return out.Result
}

// A tool that asks the user for a confirmation before it acts. The first
// call answers input_required; the client retries with the answer and the
// requestState.
func ExampleServer_AddTool() {
	srv := newExampleServer()
	form, _ := elicit.NewForm("Delete the file?", elicit.Boolean("sure").Required())
	_ = srv.AddTool(server.Tool{Name: "delete_file", Description: "Deletes a file after asking"},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			answer, err := req.Elicit(ctx, form, server.WithKey("confirm"))
			if err != nil {
				return nil, err // input_required until the user answered
			}
			var a struct {
				Sure bool `json:"sure"`
			}
			if answer.Action != elicit.ActionAccept || answer.Decode(&a) != nil || !a.Sure {
				return server.ErrorResult("Kept the file"), nil
			}
			return server.TextResult("Deleted the file"), nil
		})

	r1 := post(srv, "tools/call", "delete_file", map[string]any{"name": "delete_file"})
	fmt.Println(r1["resultType"])
	r2 := post(srv, "tools/call", "delete_file", map[string]any{
		"name":           "delete_file",
		"requestState":   r1["requestState"],
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"sure": true}}},
	})
	fmt.Println(r2["resultType"], r2["content"].([]any)[0].(map[string]any)["text"])
	// Output:
	// input_required
	// complete Deleted the file
}

// A prompt that asks for context before it is built, in the blocking
// style: the same code would also serve a 2025-11-25 session.
func ExampleServer_AddPrompt() {
	srv := newExampleServer()
	schema, _ := elicit.NewSchema(elicit.String("topic").Required())
	_ = srv.AddPrompt(server.Prompt{Name: "brainstorm", Description: "Ideas about a topic"},
		func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
			res, err := req.CreateFormElicitation(ctx, "What topic?", schema)
			if err != nil {
				return nil, err
			}
			var in struct {
				Topic string `json:"topic"`
			}
			if err := res.Decode(&in); err != nil {
				return nil, err
			}
			return &server.PromptResult{Messages: []server.PromptMessage{
				{Role: content.RoleUser, Content: content.Text("Brainstorm ideas about " + in.Topic)},
			}}, nil
		})

	r1 := post(srv, "prompts/get", "brainstorm", map[string]any{"name": "brainstorm"})
	keys := []string{}
	for k := range r1["inputRequests"].(map[string]any) {
		keys = append(keys, k)
	}
	fmt.Println(r1["resultType"], keys)
	r2 := post(srv, "prompts/get", "brainstorm", map[string]any{
		"name":           "brainstorm",
		"requestState":   r1["requestState"],
		"inputResponses": map[string]any{"baton:0": map[string]any{"action": "accept", "content": map[string]any{"topic": "tea"}}},
	})
	msg := r2["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"]
	fmt.Println(msg)
	// Output:
	// input_required [baton:0]
	// Brainstorm ideas about tea
}

// Mounting the MCP endpoint at a path of an existing echo application,
// with middleware of its own.
func ExampleServer_Mount() {
	srv := newExampleServer()
	_ = srv.AddTool(server.Tool{Name: "ping_me"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("pong"), nil
	})
	e := echo.New()
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	srv.Mount(e, "/mcp")

	res := post(e, "tools/call", "ping_me", map[string]any{"name": "ping_me"})
	fmt.Println(res["content"].([]any)[0].(map[string]any)["text"])
	// Output: pong
}

// The server is an http.Handler: it mounts on a plain net/http mux.
func ExampleServer_ServeHTTP() {
	srv := newExampleServer()
	_ = srv.AddTool(server.Tool{Name: "ping_me"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("pong"), nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)

	res := post(mux, "tools/call", "ping_me", map[string]any{"name": "ping_me"})
	fmt.Println(res["content"].([]any)[0].(map[string]any)["text"])
	// Output: pong
}

// A typed tool: the input and output schemas are inferred from the Go
// types, RefineSchemas adds a bound no struct tag can say, and the result
// is structuredContent plus the same JSON as text.
func ExampleAddTool() {
	type forecastIn struct {
		City string `json:"city" jsonschema:"the city to forecast"`
		Days int    `json:"days,omitempty" jsonschema:"how many days ahead (default 1)"`
	}
	type forecastOut struct {
		City    string    `json:"city"`
		Celsius []float64 `json:"celsius"`
	}
	srv := newExampleServer()
	err := server.AddTool(srv, server.Tool{Name: "forecast", Description: "Forecasts the temperature"},
		func(ctx context.Context, req *server.ToolRequest, in forecastIn) (forecastOut, error) {
			days := max(in.Days, 1)
			out := forecastOut{City: in.City}
			for i := range days {
				out.Celsius = append(out.Celsius, 20+float64(i))
			}
			return out, nil
		},
		server.RefineSchemas(func(in, out *jsonschema.Schema) error {
			in.Properties["days"].Minimum = jsonschema.Ptr(1.0)
			in.Properties["days"].Maximum = jsonschema.Ptr(7.0)
			return nil
		}))
	if err != nil {
		panic(err)
	}

	list := post(srv, "tools/list", "", map[string]any{})
	tool := list["tools"].([]any)[0].(map[string]any)
	in, _ := json.Marshal(tool["inputSchema"])
	fmt.Println(string(in))

	res := post(srv, "tools/call", "forecast", map[string]any{"name": "forecast", "arguments": map[string]any{"city": "Oslo", "days": 2}})
	sc, _ := json.Marshal(res["structuredContent"])
	fmt.Println(string(sc))
	fmt.Println(res["content"].([]any)[0].(map[string]any)["text"])

	res = post(srv, "tools/call", "forecast", map[string]any{"name": "forecast", "arguments": map[string]any{"city": "Oslo", "days": 30}})
	fmt.Println(res["isError"], res["content"].([]any)[0].(map[string]any)["text"])
	// Output:
	// {"additionalProperties":false,"properties":{"city":{"description":"the city to forecast","type":"string"},"days":{"description":"how many days ahead (default 1)","maximum":7,"minimum":1,"type":"integer"}},"required":["city"],"type":"object"}
	// {"celsius":[20,21],"city":"Oslo"}
	// {"city":"Oslo","celsius":[20,21]}
	// true invalid arguments: at /days: maximum: got 30, want 7
}
