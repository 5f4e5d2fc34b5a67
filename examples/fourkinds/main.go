// Command fourkinds is a first server with one of each kind: a typed tool
// that asks two questions, a prompt, a resource and a tool that runs as a
// task for callers that support tasks. It serves 2025-11-25 clients too.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// Trip is the plan_trip tool's arguments.
type Trip struct {
	City string `json:"city" jsonschema:"where to go"`
}

// Plan is the plan_trip tool's result.
type Plan struct {
	City   string `json:"city"`
	Nights int    `json:"nights"`
	Name   string `json:"name"`
}

// Report is the summarize tool's arguments.
type Report struct {
	Text string `json:"text" jsonschema:"the text to summarize"`
}

// Summary is the summarize tool's result.
type Summary struct {
	Words int `json:"words"`
}

func newServer() (*server.Server, error) {
	srv, err := server.New(mcp.Implementation{Name: "fourkinds", Version: "1.0.0"},
		&server.Options{Legacy: legacy.New(nil)})
	if err != nil {
		return nil, err
	}
	nights, err := elicit.NewSchema(elicit.Integer("nights").Title("Nights").Minimum(1).Maximum(30).Required())
	if err != nil {
		return nil, err
	}
	names, err := elicit.NewSchema(elicit.String("name").Title("Traveller's name").Required())
	if err != nil {
		return nil, err
	}
	return srv, errors.Join(
		// A typed tool that asks two questions, one after the other.
		server.AddTool(srv, server.Tool{Name: "plan_trip", Description: "Plans a trip, asking how long and for whom"},
			func(ctx context.Context, req *server.ToolRequest, in Trip) (Plan, error) {
				res, err := req.CreateFormElicitation(ctx, "How many nights in "+in.City+"?", nights)
				if err != nil {
					return Plan{}, err
				}
				var n struct {
					Nights int `json:"nights"`
				}
				if err := res.Decode(&n); err != nil {
					return Plan{}, err
				}
				res, err = req.CreateFormElicitation(ctx, "Who is travelling?", names)
				if err != nil {
					return Plan{}, err
				}
				var who struct {
					Name string `json:"name"`
				}
				if err := res.Decode(&who); err != nil {
					return Plan{}, err
				}
				return Plan{City: in.City, Nights: n.Nights, Name: who.Name}, nil
			}),
		// A prompt.
		srv.AddPrompt(server.Prompt{Name: "packing_list", Description: "Asks for a packing list",
			Arguments: []server.PromptArgument{{Name: "city", Required: true}}},
			func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
				return server.UserPrompt("What should I pack for " + req.Arguments["city"] + "?"), nil
			}),
		// A resource.
		srv.AddResource(server.Resource{URI: "trips://cities", Name: "cities", MimeType: "text/plain"},
			func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
				return server.TextResource(req.URI, "text/plain", "Lisbon\nKyoto\nQuito"), nil
			}),
		// A tool that runs as a task for callers that declare the tasks
		// extension, and synchronously for the others.
		server.AddTool(srv, server.Tool{Name: "summarize", Description: "Counts the words of a long text"},
			func(ctx context.Context, req *server.ToolRequest, in Report) (Summary, error) {
				words := 0
				inWord := false
				for _, r := range in.Text {
					space := r == ' ' || r == '\n' || r == '\t'
					if !space && !inWord {
						words++
					}
					inWord = !space
				}
				return Summary{Words: words}, ctx.Err()
			}, server.RunAsTask(server.TaskOptional)),
	)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "listen address `HOST:PORT`")
	flag.Parse()
	srv, err := newServer()
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("fourkinds: serving MCP on http://%s/", *addr)
	hs := &http.Server{Addr: *addr, Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	log.Fatal(hs.ListenAndServe())
}
