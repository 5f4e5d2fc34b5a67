package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// newExampleServer returns a server with a fixed key, quiet logs.
func newExampleServer() *server.Server {
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "2026-12", Secret: []byte("an example key of at least 32 bytes!")})
	if err != nil {
		panic(err)
	}
	srv, err := server.New(mcp.Implementation{Name: "example", Version: "1.0.0"}, &server.Options{
		StateKeys: ring,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	return srv
}

// client drives h as a 2026-07-28 client would (package mcptest), answering
// every elicitation with answer.
func client(h http.Handler, answer func(ctx context.Context, req *elicit.Request) (*elicit.Result, error)) *mcptest.Client {
	c, err := mcptest.New(mcptest.Handler(h), &mcptest.Options{Elicitation: answer})
	if err != nil {
		panic(err)
	}
	return c
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

	// The client answers input_required by asking its user (here, a
	// callback that accepts) and retries with the answer and the
	// requestState.
	c := client(srv, func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
		fmt.Println("asked", mcptest.InputKey(ctx)+":", req.Message)
		return mcptest.Accept(map[string]any{"sure": true})
	})
	res, err := c.CallTool(context.Background(), "delete_file", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(res.Exchange.Rounds), "requests:", res.Text())
	// Output:
	// asked confirm: Delete the file?
	// 2 requests: Deleted the file
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
				{Role: mcp.RoleUser, Content: mcp.Text("Brainstorm ideas about " + in.Topic)},
			}}, nil
		})

	c := client(srv, func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
		fmt.Println("asked", mcptest.InputKey(ctx)+":", req.Message)
		return mcptest.Accept(map[string]any{"topic": "tea"})
	})
	res, err := c.GetPrompt(context.Background(), "brainstorm", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Messages[0].Content.Text)
	// Output:
	// asked baton:0: What topic?
	// Brainstorm ideas about tea
}

// The server is an http.Handler: it mounts on a plain net/http mux.
func ExampleServer_ServeHTTP() {
	srv := newExampleServer()
	_ = srv.AddTool(server.Tool{Name: "ping_me"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("pong"), nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)

	res, err := client(mux, nil).CallTool(context.Background(), "ping_me", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())
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

	c := client(srv, nil)
	ctx := context.Background()
	tools, err := c.ListTools(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(tools[0].InputSchema))

	res, err := c.CallTool(ctx, "forecast", map[string]any{"city": "Oslo", "days": 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.StructuredContent))
	fmt.Println(res.Text())

	res, err = c.CallTool(ctx, "forecast", map[string]any{"city": "Oslo", "days": 30})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.IsError, res.Text())
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"the city to forecast"},"days":{"type":"integer","description":"how many days ahead (default 1)","minimum":1,"maximum":7}},"required":["city"],"additionalProperties":false}
	// {"city":"Oslo","celsius":[20,21]}
	// {"city":"Oslo","celsius":[20,21]}
	// true invalid arguments: at /days: maximum: got 30, want 7
}
