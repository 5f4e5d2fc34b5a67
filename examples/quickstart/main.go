// Command quickstart is the README's quick start: one tool that asks the
// user to confirm before it acts.
package main

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/server"
)

func main() {
	srv, err := server.New(server.Implementation{Name: "quickstart", Version: "1.0.0"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	confirm, err := elicit.NewForm("Delete everything?", elicit.Boolean("sure").Required())
	if err != nil {
		log.Fatal(err)
	}
	err = srv.AddTool(server.Tool{Name: "wipe", Description: "Deletes everything, after asking"},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			answer, err := req.Elicit(ctx, confirm, server.WithKey("confirm")) // input_required until answered
			if err != nil {
				return nil, err
			}
			var a struct {
				Sure bool `json:"sure"`
			}
			if answer.Action != elicit.ActionAccept || answer.Decode(&a) != nil || !a.Sure {
				return server.ErrorResult("Nothing deleted"), nil
			}
			return server.TextResult("Deleted everything"), nil
		})
	if err != nil {
		log.Fatal(err)
	}
	// Headers must arrive within 10 s and idle keep-alive connections close
	// after 2 minutes. Bodies have their own deadline
	// (server.Options.BodyReadTimeout); ReadTimeout and WriteTimeout stay
	// unset, since they would cut long-lived SSE responses
	// (docs/deployment.md).
	hs := &http.Server{Addr: "127.0.0.1:8081", Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	log.Fatal(hs.ListenAndServe())
}
