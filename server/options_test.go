package server

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
)

// An option given where it does not apply fails the registration, naming
// the option and where it applies; nothing is registered.
func TestRegisterOptionsApplyWhereTheySay(t *testing.T) {
	s := newTestServer(t, nil)
	prompt := func(context.Context, *PromptRequest) (*PromptResult, error) { return &PromptResult{}, nil }
	resource := func(context.Context, *ResourceRequest) (*ResourceResult, error) { return &ResourceResult{}, nil }
	tool := func(context.Context, *ToolRequest) (*ToolResult, error) { return TextResult("x"), nil }
	for _, tc := range []struct {
		name string
		add  func() error
		want string
	}{
		{"skip validation on a prompt", func() error { return s.AddPrompt(Prompt{Name: "p"}, prompt, SkipInputValidation()) }, "option SkipInputValidation does not apply here (it applies to tools)"},
		{"requirements on a resource", func() error {
			return s.AddResource(Resource{URI: "test://r", Name: "r"}, resource, RequireCapabilities(mcp.ClientCapabilities{Roots: &mcp.RootsCapability{}}))
		}, "option RequireCapabilities does not apply here"},
		{"a task on a template", func() error {
			return s.AddResourceTemplate(ResourceTemplate{URITemplate: "test://{x}", Name: "t"}, resource, RunAsTask(TaskOptional))
		}, "option RunAsTask does not apply here"},
		{"refine on a raw tool", func() error { return s.AddTool(Tool{Name: "t"}, tool, RefineSchemas(nil)) }, "applies to typed tools (the package-level AddTool)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.add(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if c := s.Capabilities(); c.Tools != nil || c.Prompts != nil || c.Resources != nil {
		t.Fatalf("a refused registration registered something: %+v", c)
	}
	// Where they apply, they combine.
	if err := s.AddPrompt(Prompt{Name: "p"}, prompt, AnswersWithoutState()); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(Tool{Name: "t"}, tool, AnswersWithoutState(), SkipInputValidation(), RunAsTask(TaskOptional), DeferTask()); err != nil {
		t.Fatal(err)
	}
}
