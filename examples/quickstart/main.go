// Command quickstart serves one typed tool that asks the user two
// questions, one after the other, and answers with structured content.
package main

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// Order is the tool's arguments: the input schema is inferred from it.
type Order struct {
	Drink string `json:"drink" jsonschema:"what to drink, for example latte"`
}

// Receipt is the tool's result: the output schema is inferred from it.
type Receipt struct {
	Drink string `json:"drink"`
	Size  string `json:"size"`
	Name  string `json:"name"`
}

// SizeForm and NameForm are the two questions: each form's schema is
// inferred from its struct, and the answer decodes into it.
type SizeForm struct {
	Size string `json:"size" title:"Size" enum:"small=Small (8 oz)|medium=Medium (12 oz)|large=Large (16 oz)" default:"medium"`
}

type NameForm struct {
	Name string `json:"name" title:"Name for the cup" minLength:"1" maxLength:"40"`
}

func newServer() (*server.Server, error) {
	srv, err := server.New(mcp.Implementation{Name: "quickstart", Version: "1.0.0"},
		&server.Options{Legacy: legacy.New(nil)}) // 2025-11-25 clients too
	if err != nil {
		return nil, err
	}
	sizes, err := elicit.FormOf[SizeForm]()
	if err != nil {
		return nil, err
	}
	names, err := elicit.FormOf[NameForm]()
	if err != nil {
		return nil, err
	}
	err = server.AddTool(srv, server.Tool{Name: "order_coffee", Description: "Orders a coffee, asking its size and a name"},
		func(ctx context.Context, req *server.ToolRequest, in Order) (Receipt, error) {
			// Each question returns its answer, or an error to return as
			// it is (input_required, until the client answers).
			res, err := req.CreateFormElicitation(ctx, "What size of "+in.Drink+"?", sizes.Schema())
			if err != nil {
				return Receipt{}, err
			}
			size, err := sizes.Decode(res)
			if err != nil {
				return Receipt{}, noOrder(err)
			}
			res, err = req.CreateFormElicitation(ctx, "A "+size.Size+" "+in.Drink+". Whose name goes on the cup?", names.Schema())
			if err != nil {
				return Receipt{}, err
			}
			name, err := names.Decode(res)
			if err != nil {
				return Receipt{}, noOrder(err)
			}
			return Receipt{Drink: in.Drink, Size: size.Size, Name: name.Name}, nil
		})
	if err != nil {
		return nil, err
	}
	return srv, nil
}

// noOrder says why nothing was ordered: the user declined a question
// (elicit.ErrDeclined) or dismissed it (elicit.ErrCancelled).
func noOrder(err error) error {
	switch {
	case errors.Is(err, elicit.ErrDeclined):
		return errors.New("no coffee ordered: you declined")
	case errors.Is(err, elicit.ErrCancelled):
		return errors.New("no coffee ordered: you cancelled")
	}
	return err
}

// newMux serves the MCP endpoint at /mcp and nothing else (404).
func newMux(srv *server.Server) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	return mux
}

func main() {
	srv, err := newServer()
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:8081")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("quickstart: MCP endpoint at http://%s/mcp", ln.Addr())
	// Headers must arrive within 10 s and idle keep-alive connections
	// close after 2 minutes. Bodies have their own deadline
	// (server.Options.BodyReadTimeout); ReadTimeout and WriteTimeout stay
	// unset, since they would cut long-lived SSE responses.
	hs := &http.Server{Handler: newMux(srv), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	log.Fatal(hs.Serve(ln))
}
