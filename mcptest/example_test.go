package mcptest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// A tool that asks two questions in turn, driven in process: the client
// answers each question with its Elicitation callback and returns the
// final result, with a record of the three requests it took.
func Example() {
	srv, err := server.New(mcp.Implementation{Name: "example", Version: "1.0.0"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
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
	srv, err := server.New(mcp.Implementation{Name: "example", Version: "1.0.0"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
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

// A task tool driven step by step: StartTask returns once the task
// exists; Get shows its question, Answer answers it with the callbacks,
// Wait polls to the result. (CallTool alone would do all of it.)
func ExampleClient_StartTask() {
	srv, err := server.New(mcp.Implementation{Name: "example", Version: "1.0.0"}, &server.Options{
		Logger: slog.New(slog.DiscardHandler),
		Tasks:  server.TaskOptions{PollInterval: 10 * time.Millisecond},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	name, _ := elicit.NewForm("Your name?", elicit.String("name").Required())
	err = srv.AddTool(server.Tool{Name: "report", Description: "Builds a long report"},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			res, err := req.Elicit(ctx, name) // waits for tasks/update
			if err != nil {
				return nil, err
			}
			var a struct {
				Name string `json:"name"`
			}
			if res.Decode(&a) != nil {
				return server.ErrorResult("No report"), nil
			}
			return server.TextResult("Report for " + a.Name), nil
		}, server.RunAsTask(server.TaskOptional))
	if err != nil {
		log.Fatal(err)
	}
	client, err := mcptest.New(mcptest.Handler(srv), &mcptest.Options{
		Tasks: true, // declare the tasks extension
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			return mcptest.Accept(map[string]any{"name": "Alice"})
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	task, err := client.StartTask(ctx, "report", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", task.Created.Status)
	for {
		st, err := task.Get(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if st.Status == mcp.TaskInputRequired {
			fmt.Printf("asks %s: %q\n", st.InputRequests[0].Key, st.InputRequests[0].Elicitation.Message)
			if _, err := task.Answer(ctx, st); err != nil {
				log.Fatal(err)
			}
			break
		}
		time.Sleep(st.PollInterval)
	}
	res, err := task.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// created: working
	// asks baton:0: "Your name?"
	// Report for Alice
}

// A 2025-11-25 client: the first call opens the session (initialize,
// Mcp-Session-Id); the server's elicitation/create request on the call's
// stream is answered by the same callback as an input_required round.
func ExampleOptions_protocol() {
	lh := legacy.New(nil)
	srv, err := server.New(mcp.Implementation{Name: "example", Version: "1.0.0"}, &server.Options{
		Logger: slog.New(slog.DiscardHandler), Legacy: lh,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer lh.Close()
	name, _ := elicit.NewForm("Your name?", elicit.String("name").Required())
	err = srv.AddTool(server.Tool{Name: "greet"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.Elicit(ctx, name)
		if err != nil {
			return nil, err
		}
		return server.TextResult("Hello, " + string(res.Action)), nil
	})
	if err != nil {
		log.Fatal(err)
	}
	client, err := mcptest.New(mcptest.Handler(srv), &mcptest.Options{
		Protocol: mcp.LegacyProtocolVersion,
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			return mcptest.Decline()
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := client.CallTool(context.Background(), "greet", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text(), client.SessionID() != "")
	fmt.Println(res.Exchange.Rounds[0].InputRequests[0].Method)
	// Output:
	// Hello, decline true
	// elicitation/create
}
