package mcptest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// A tool that asks two questions in turn, driven in process: the client
// answers each question with its Elicitation callback and returns the
// final result, with a record of the three requests it took.
func Example() {
	srv, err := server.New(server.Implementation{Name: "example", Version: "1.0.0"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	name, _ := elicit.NewForm("Your name?", elicit.String("name").Required())
	sure, _ := elicit.NewForm("Book it?", elicit.Boolean("sure").Required())
	err = srv.AddTool(server.Tool{Name: "book", Description: "Books a table after two questions"},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			var a struct {
				Name string `json:"name"`
				Sure bool   `json:"sure"`
			}
			for _, q := range []*elicit.Request{name, sure} {
				res, err := req.Elicit(ctx, q) // the recorded answer, or input_required
				if err != nil {
					return nil, err
				}
				if res.Action != elicit.ActionAccept || res.Decode(&a) != nil {
					return server.ErrorResult("Nothing booked"), nil
				}
			}
			if !a.Sure {
				return server.ErrorResult("Nothing booked"), nil
			}
			return server.TextResult("Booked for " + a.Name), nil
		})
	if err != nil {
		log.Fatal(err)
	}

	client, err := mcptest.New(mcptest.Handler(srv), &mcptest.Options{
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			switch req.Message {
			case "Your name?":
				return mcptest.Accept(map[string]any{"name": "Alice"})
			case "Book it?":
				return mcptest.Accept(map[string]any{"sure": true})
			}
			return mcptest.Decline()
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := client.CallTool(context.Background(), "book", nil)
	var rpcErr *mcptest.Error
	if errors.As(err, &rpcErr) {
		log.Fatalf("JSON-RPC error %d: %s", rpcErr.Code, rpcErr.Message)
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	for i, round := range res.Exchange.Rounds {
		for _, ir := range round.InputRequests {
			fmt.Printf("round %d asked %q\n", i+1, ir.Elicitation.Message)
		}
	}
	fmt.Println("requests:", len(res.Exchange.Rounds))
	// Output:
	// Booked for Alice
	// round 1 asked "Your name?"
	// round 2 asked "Book it?"
	// requests: 3
}

// The low-level Do sends one request and returns the raw outcome, for
// tests of error paths.
func ExampleClient_Do() {
	srv, err := server.New(server.Implementation{Name: "example", Version: "1.0.0"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	client, err := mcptest.New(mcptest.Handler(srv), nil)
	if err != nil {
		log.Fatal(err)
	}
	resp, err := client.Do(context.Background(), "tools/call", map[string]any{"name": "missing"},
		mcptest.WithHeader("Mcp-Name", "other"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, resp.Error.Code)
	// Output:
	// 400 -32020
}
