package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/baton-mcp/baton/content"
	"github.com/baton-mcp/baton/server"
)

func textMessage(text string) server.PromptMessage {
	return server.PromptMessage{Role: content.RoleUser, Content: content.Text(text)}
}

func registerPrompts(srv *server.Server, add func(error)) {
	add(srv.AddPrompt(server.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
		func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
			return &server.PromptResult{Messages: []server.PromptMessage{textMessage("This is a simple prompt for testing.")}}, nil
		}))
	add(srv.AddPrompt(server.Prompt{
		Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
		Arguments: []server.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
		return &server.PromptResult{Messages: []server.PromptMessage{
			textMessage(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])),
		}}, nil
	}))
	add(srv.AddPrompt(server.Prompt{
		Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that includes an embedded resource",
		Arguments: []server.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
	}, func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
		return &server.PromptResult{Messages: []server.PromptMessage{
			{Role: content.RoleUser, Content: content.Embedded(content.TextContents(req.Arguments["resourceUri"], "text/plain", "Embedded resource content for testing."))},
			textMessage("Please process the embedded resource above."),
		}}, nil
	}))
	add(srv.AddPrompt(server.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
		func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
			return &server.PromptResult{Messages: []server.PromptMessage{
				{Role: content.RoleUser, Content: pngBlock},
				textMessage("Please analyze the image above."),
			}}, nil
		}))
}

func registerResources(srv *server.Server, add func(error)) {
	static := func(uri, text string) server.ResourceHandler {
		return func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
			return &server.ResourceResult{Contents: []content.ResourceContents{content.TextContents(uri, "text/plain", text)}}, nil
		}
	}
	add(srv.AddResource(server.Resource{URI: "test://static-text", Name: "static-text", Title: "Static Text Resource", Description: "A static text resource for testing", MimeType: "text/plain"},
		static("test://static-text", "This is the content of the static text resource.")))
	add(srv.AddResource(server.Resource{URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource", Description: "A static binary resource (image) for testing", MimeType: "image/png"},
		func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
			return &server.ResourceResult{Contents: []content.ResourceContents{{URI: "test://static-binary", MimeType: "image/png", Blob: pngBase64, IsBlob: true}}}, nil
		}))
	add(srv.AddResource(server.Resource{URI: "test://watched-resource", Name: "watched-resource", Title: "Watched Resource", Description: "A resource clients can subscribe to", MimeType: "text/plain"},
		static("test://watched-resource", "Watched resource content")))
	add(srv.AddResourceTemplate(server.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Title: "Resource Template", Description: "A resource template with parameter substitution", MimeType: "application/json"},
		func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
			id := req.Params["id"]
			body, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return &server.ResourceResult{Contents: []content.ResourceContents{content.TextContents(req.URI, "application/json", string(body))}}, nil
		}))
}
