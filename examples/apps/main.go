// Command apps serves an MCP App: a tool, shout, linked to an HTML page
// (ui://shout/app.html) that a host renders beside the tool's result. The
// page shows the result the host hands it and can call the tool again
// through the host's postMessage bridge.
package main

import (
	"context"
	_ "embed"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// appHTML is the App's page: plain HTML and script, no dependencies.
//
//go:embed app.html
var appHTML string

// appURI names the page.
const appURI = "ui://shout/app.html"

// Words is the tool's arguments.
type Words struct {
	Text string `json:"text" jsonschema:"the words to shout"`
}

// Shout is the tool's result.
type Shout struct {
	Shout string `json:"shout"`
}

func newServer() (*server.Server, error) {
	srv, err := server.New(mcp.Implementation{Name: "apps-example", Version: "1.0.0"},
		&server.Options{Legacy: legacy.New(nil)}) // hosts on 2025-11-25 too
	if err != nil {
		return nil, err
	}
	// The page may reach nothing but the host: an empty CSP.
	if err := srv.AddApp(server.App{URI: appURI, Name: "shout-app", Title: "Shout", HTML: appHTML, CSP: &server.AppCSP{}}); err != nil {
		return nil, err
	}
	meta, err := server.AppToolMeta(appURI, server.VisibleToModel, server.VisibleToApp)
	if err != nil {
		return nil, err
	}
	err = server.AddTool(srv, server.Tool{Name: "shout", Description: "Shouts the words back, in capitals", Meta: meta},
		func(ctx context.Context, req *server.ToolRequest, in Words) (Shout, error) {
			return Shout{Shout: strings.ToUpper(in.Text) + "!"}, nil
		})
	if err != nil {
		return nil, err
	}
	return srv, nil
}

func main() {
	srv, err := newServer()
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Addr: "127.0.0.1:8082", Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	log.Fatal(hs.ListenAndServe())
}
