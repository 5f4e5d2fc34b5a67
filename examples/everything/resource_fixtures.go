package main

// Resources: the fixtures of the suite's resources-* scenarios (both
// requirement sets), and the resource a resources-subscribe or
// subscriptions/listen client watches. An unknown URI is answered by the
// server itself: -32602 with data.uri (sep-2164-resource-not-found).

import (
	"context"
	"encoding/json"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

func addResourceFixtures(srv *server.Server) error {
	for _, r := range []struct {
		resource server.Resource
		handler  server.ResourceHandler
		opts     []server.ResourceOption
	}{
		// resources-read-text: text/plain, this text.
		{server.Resource{URI: "test://static-text", Name: "static-text", Title: "Static Text Resource", Description: "A static text resource for testing", MimeType: "text/plain"},
			staticText("test://static-text", "This is the content of the static text resource."), []server.ResourceOption{server.RequireScopes(staticTextScopes...)}},
		// resources-read-binary: the PNG as a blob.
		{server.Resource{URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource", Description: "A static binary resource (image) for testing", MimeType: "image/png"},
			staticPNG, nil},
		// resources-subscribe, resources-unsubscribe: a resource to watch.
		{server.Resource{URI: "test://watched-resource", Name: "watched-resource", Title: "Watched Resource", Description: "A resource clients can subscribe to", MimeType: "text/plain"},
			staticText("test://watched-resource", "Watched resource content"), nil},
	} {
		if err := srv.AddResource(r.resource, r.handler, r.opts...); err != nil {
			return err
		}
	}
	return srv.AddResourceTemplate(server.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Title: "Resource Template", Description: "A resource template with parameter substitution", MimeType: "application/json"},
		templateData, server.RequireScopes(templateScopes...))
}

// staticText serves a text/plain resource at uri.
func staticText(uri, text string) server.ResourceHandler {
	return func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
		return &server.ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(uri, "text/plain", text)}}, nil
	}
}

// staticPNG serves test://static-binary: the 1×1 PNG, base64.
func staticPNG(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
	return &server.ResourceResult{Contents: []mcp.ResourceContents{{URI: "test://static-binary", MimeType: "image/png", Blob: pngBase64, IsBlob: true}}}, nil
}

// templateData serves test://template/{id}/data (resources-templates-read):
// JSON naming the id it was read with.
func templateData(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
	id := req.Params["id"]
	body, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return &server.ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(req.URI, "application/json", string(body))}}, nil
}
