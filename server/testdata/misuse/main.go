// Command misuse gives registration options where they do not apply. It
// must not compile: TestMisusedOptionsDoNotCompile builds it and expects
// one error per line marked "want".
package main

import (
	"context"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

func main() {
	s, _ := server.New(mcp.Implementation{Name: "misuse", Version: "1"}, nil)
	prompt := func(context.Context, *server.PromptRequest) (*server.PromptResult, error) { return nil, nil }
	resource := func(context.Context, *server.ResourceRequest) (*server.ResourceResult, error) { return nil, nil }
	tool := func(context.Context, *server.ToolRequest) (*server.ToolResult, error) { return nil, nil }
	_ = s.AddPrompt(server.Prompt{Name: "p"}, prompt, server.SkipInputValidation())                                                // want: server.ToolOption does not implement server.PromptOption
	_ = s.AddResource(server.Resource{URI: "test://r"}, resource, server.SkipInputValidation())                                    // want: server.ToolOption does not implement server.ResourceOption
	_ = s.AddResourceTemplate(server.ResourceTemplate{URITemplate: "test://{x}"}, resource, server.RunAsTask(server.TaskOptional)) // want: server.ToolOption does not implement server.ResourceOption
	_ = s.AddPrompt(server.Prompt{Name: "p"}, prompt, server.DeferTask())                                                          // want: server.ToolOption does not implement server.PromptOption
	_ = s.AddTool(server.Tool{Name: "t"}, tool, server.RefineSchemas(nil))                                                         // want: server.TypedToolOption does not implement server.ToolOption
}
