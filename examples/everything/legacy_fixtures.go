package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/server"
)

// registerLegacyFixtures adds the fixtures of the 2025-11-25 requirements.
// test_elicitation and test_sampling are written in the blocking style;
// the SEP-1034 and SEP-1330 tools ask through their Round and reach legacy
// clients through the bridge.
func registerLegacyFixtures(srv *server.Server, add func(error)) {
	userSchema, err := elicit.NewSchema(
		elicit.String("username").Description("Your user name").Required(),
		elicit.String("email").Description("Your email address").Format(elicit.FormatEmail).Required(),
	)
	add(err)
	add(srv.AddTool(server.Tool{
		Name:        "test_elicitation",
		Description: "Asks the user for a name and an email (blocking style)",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
	}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var in struct {
			Message string `json:"message"`
		}
		if err := req.Bind(&in); err != nil {
			return nil, err
		}
		res, err := req.CreateFormElicitation(ctx, in.Message, userSchema)
		if err != nil {
			return nil, err
		}
		content := json.RawMessage("{}")
		if len(res.Content) > 0 {
			content = res.Content
		}
		return server.TextResult(fmt.Sprintf("User response: action=%s, content=%s", res.Action, content)), nil
	}))

	add(srv.AddTool(server.Tool{
		Name:        "test_sampling",
		Description: "Asks the client's model to answer a prompt (blocking style)",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
	}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var in struct {
			Prompt string `json:"prompt"`
		}
		if err := req.Bind(&in); err != nil {
			return nil, err
		}
		res, err := req.CreateMessage(ctx, &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText(in.Prompt)}, MaxTokens: 100})
		if err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("LLM response: %s (model: %s)", res.Text(), res.Model)), nil
	}))

	defaults, err := elicit.NewForm("Please review and update the form fields with defaults",
		elicit.String("name").Description("User name").Default("John Doe"),
		elicit.Integer("age").Description("User age").Default(30),
		elicit.Number("score").Description("User score").Default(95.5),
		elicit.Enum("status", "active", "inactive", "pending").Description("User status").Default("active"),
		elicit.Boolean("verified").Description("Verification status").Default(true),
	)
	add(err)
	enums, err := elicit.NewForm("Please select options from the enum fields",
		elicit.Enum("untitledSingle", "option1", "option2", "option3").Description("Select one option"),
		elicit.TitledEnum("titledSingle",
			elicit.Option{Const: "value1", Title: "First Option"},
			elicit.Option{Const: "value2", Title: "Second Option"},
			elicit.Option{Const: "value3", Title: "Third Option"}).Description("Select one option with titles"),
		elicit.LegacyEnum("legacyEnum", []string{"opt1", "opt2", "opt3"}, []string{"Option One", "Option Two", "Option Three"}).Description("Select one option (legacy)"),
		elicit.MultiEnum("untitledMulti", "option1", "option2", "option3").Description("Select multiple options").MinItems(1).MaxItems(3),
		elicit.TitledMultiEnum("titledMulti",
			elicit.Option{Const: "value1", Title: "First Choice"},
			elicit.Option{Const: "value2", Title: "Second Choice"},
			elicit.Option{Const: "value3", Title: "Third Choice"}).Description("Select multiple options with titles").MinItems(1).MaxItems(3),
	)
	add(err)
	if defaults == nil || enums == nil {
		return
	}
	formTool := func(name, description string, form *elicit.Request) {
		add(srv.AddTool(noArgs(name, description), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			res, err := req.Elicit(ctx, form, server.WithKey("form"))
			if err != nil {
				return nil, err
			}
			content := json.RawMessage("{}")
			if len(res.Content) > 0 {
				content = res.Content
			}
			return server.TextResult(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, content)), nil
		}))
	}
	formTool("test_elicitation_sep1034_defaults", "Asks with a form whose fields have defaults (SEP-1034)", defaults)
	formTool("test_elicitation_sep1330_enums", "Asks with every enum shape (SEP-1330)", enums)
}
