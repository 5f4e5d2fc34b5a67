package main

// Prompts and completion: the fixtures of the suite's prompts-* and
// completion-complete scenarios (both requirement sets). The prompt that
// asks for input before it answers, test_input_required_result_prompt,
// is with the other multi round-trip fixtures (mrtr_fixtures.go).

import (
	"context"
	"fmt"
	"strings"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// promptFixture is a prompt and its handler.
type promptFixture struct {
	prompt  server.Prompt
	handler server.PromptHandler
	opts    []server.PromptOption
}

func addPromptFixtures(srv *server.Server) error {
	for _, p := range []promptFixture{
		{prompt: server.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"}, handler: simplePrompt, opts: []server.PromptOption{server.RequireScopes(simplePromptScopes...)}},
		{prompt: server.Prompt{
			Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
			Arguments: []server.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			},
		}, handler: promptWithArguments},
		{prompt: server.Prompt{
			Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that includes an embedded resource",
			Arguments: []server.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
		}, handler: promptWithEmbeddedResource},
		{prompt: server.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"}, handler: promptWithImage},
	} {
		if err := srv.AddPrompt(p.prompt, p.handler, p.opts...); err != nil {
			return err
		}
	}
	return nil
}

// simplePrompt is test_simple_prompt (prompts-get-simple): one user
// message.
func simplePrompt(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
	return &server.PromptResult{Messages: []server.PromptMessage{textMessage("This is a simple prompt for testing.")}}, nil
}

// promptWithArguments is test_prompt_with_arguments(arg1, arg2)
// (prompts-get-with-args): one message naming both arguments.
func promptWithArguments(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
	return &server.PromptResult{Messages: []server.PromptMessage{
		textMessage(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])),
	}}, nil
}

// promptWithEmbeddedResource is test_prompt_with_embedded_resource(resourceUri)
// (prompts-get-embedded-resource): a message embedding a text resource at
// the given URI, then a text message.
func promptWithEmbeddedResource(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
	return &server.PromptResult{Messages: []server.PromptMessage{
		{Role: mcp.RoleUser, Content: mcp.Embedded(mcp.TextContents(req.Arguments["resourceUri"], "text/plain", "Embedded resource content for testing."))},
		textMessage("Please process the embedded resource above."),
	}}, nil
}

// promptWithImage is test_prompt_with_image (prompts-get-with-image): a
// message holding the PNG, then a text message.
func promptWithImage(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
	return &server.PromptResult{Messages: []server.PromptMessage{
		{Role: mcp.RoleUser, Content: pngBlock},
		textMessage("Please analyze the image above."),
	}}, nil
}

// textMessage is a user message holding text.
func textMessage(text string) server.PromptMessage {
	return server.PromptMessage{Role: mcp.RoleUser, Content: mcp.Text(text)}
}

// complete answers completion/complete (completion-complete): for
// test_prompt_with_arguments, arg1 completes to value1..value3 and arg2 to
// optionA..optionC, those that start with the partial value; anything
// else completes to nothing.
func complete(ctx context.Context, req *server.CompletionRequest) (*server.Completion, error) {
	if req.Ref.Type != "ref/prompt" || req.Ref.Name != "test_prompt_with_arguments" {
		return &server.Completion{}, nil
	}
	var all []string
	switch req.Argument.Name {
	case "arg1":
		all = []string{"value1", "value2", "value3"}
	case "arg2":
		all = []string{"optionA", "optionB", "optionC"}
	}
	values := []string{}
	for _, v := range all {
		if strings.HasPrefix(v, req.Argument.Value) {
			values = append(values, v)
		}
	}
	total := len(values)
	return &server.Completion{Values: values, Total: &total}, nil
}
