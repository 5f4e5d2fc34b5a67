package main

// The fixtures of the 2025-11-25 requirements that ask the client: the
// suite's tools-call-elicitation, tools-call-sampling,
// elicitation-sep1034-defaults and elicitation-sep1330-enums scenarios.
//
// They are ordinary handlers, asking with the methods of server.Call: on a
// 2025-11-25 session (served by legacy.New, installed in server.go) each
// question is a real elicitation/create or sampling/createMessage request
// on the call's SSE stream; a 2026-07-28 client gets the same question in
// an input_required result.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// legacyFixtures holds the forms the fixtures ask, built once.
type legacyFixtures struct {
	user     *elicit.Schema  // {username, email}, both required
	defaults *elicit.Request // SEP-1034: a default on every field
	enums    *elicit.Request // SEP-1330: every enum shape
}

func newLegacyFixtures() (*legacyFixtures, error) {
	var f legacyFixtures
	var errs [3]error
	f.user, errs[0] = elicit.NewSchema(
		elicit.String("username").Description("Your user name").Required(),
		elicit.String("email").Description("Your email address").Format(elicit.FormatEmail).Required(),
	)
	f.defaults, errs[1] = elicit.NewForm("Please review and update the form fields with defaults",
		elicit.String("name").Description("User name").Default("John Doe"),
		elicit.Integer("age").Description("User age").Default(30),
		elicit.Number("score").Description("User score").Default(95.5),
		elicit.Enum("status", "active", "inactive", "pending").Description("User status").Default("active"),
		elicit.Boolean("verified").Description("Verification status").Default(true),
	)
	f.enums, errs[2] = elicit.NewForm("Please select options from the enum fields",
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
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return &f, nil
}

func addLegacyFixtures(srv *server.Server) error {
	f, err := newLegacyFixtures()
	if err != nil {
		return err
	}
	return addTools(srv, []toolFixture{
		{tool: server.Tool{
			Name:        "test_elicitation",
			Description: "Asks the user for a name and an email",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
		}, handler: f.elicitation},
		{tool: server.Tool{
			Name:        "test_sampling",
			Description: "Asks the client's model to answer a prompt",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
		}, handler: sampling},
		{tool: noArgs("test_elicitation_sep1034_defaults", "Asks with a form whose fields have defaults (SEP-1034)"), handler: askForm(f.defaults)},
		{tool: noArgs("test_elicitation_sep1330_enums", "Asks with every enum shape (SEP-1330)"), handler: askForm(f.enums)},
	})
}

// elicitation is test_elicitation(message) (tools-call-elicitation): a
// form with the given message and {username, email}, both required; the
// result reports the user's action and content, "User response:
// action=accept, content={...}".
func (f *legacyFixtures) elicitation(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	var in struct {
		Message string `json:"message"`
	}
	if err := req.Bind(&in); err != nil {
		return nil, err
	}
	res, err := req.CreateFormElicitation(ctx, in.Message, f.user)
	if err != nil {
		return nil, err
	}
	return server.TextResult(fmt.Sprintf("User response: action=%s, content=%s", res.Action, contentOrEmpty(res))), nil
}

// sampling is test_sampling(prompt) (tools-call-sampling): a
// sampling/createMessage with the prompt and maxTokens 100; the result is
// "LLM response: <text> (model: <model>)".
func sampling(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	var in struct {
		Prompt string `json:"prompt"`
	}
	if err := req.Bind(&in); err != nil {
		return nil, err
	}
	res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText(in.Prompt)}, MaxTokens: 100})
	if err != nil {
		return nil, err
	}
	return server.TextResult(fmt.Sprintf("LLM response: %s (model: %s)", res.Text(), res.Model)), nil
}

// askForm returns the handler of test_elicitation_sep1034_defaults
// (elicitation-sep1034-defaults: the client must see each default as
// given, an integer 30, a number 95.5, an enum default) and of
// test_elicitation_sep1330_enums (elicitation-sep1330-enums: untitled and
// titled single and multi selects, and the legacy enumNames shape): it
// asks form under key form, and reports the action and content.
func askForm(form *elicit.Request) server.ToolHandler {
	return func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.Elicit(ctx, form, server.WithKey("form"))
		if err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, contentOrEmpty(res))), nil
	}
}

// contentOrEmpty returns an answer's content, or {} when it has none.
func contentOrEmpty(res *elicit.Result) json.RawMessage {
	if len(res.Content) > 0 {
		return res.Content
	}
	return json.RawMessage("{}")
}
