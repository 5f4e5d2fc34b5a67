package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/content"
	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// askText returns a form asking for one required string field.
func askText(message, field string) (*elicit.Request, error) {
	return elicit.NewForm(message, elicit.String(field).Required())
}

// acceptedString returns the string field of an accepted answer.
func acceptedString(res *elicit.Result, field string) (string, bool) {
	if res.Action != elicit.ActionAccept {
		return "", false
	}
	var m map[string]any
	if err := res.Decode(&m); err != nil {
		return "", false
	}
	s, ok := m[field].(string)
	return s, ok
}

func registerMRTRTools(srv *server.Server, add func(error)) {
	nameForm, err := askText("What is your name?", "name")
	add(err)
	okForm, err := elicit.NewForm("Please confirm", elicit.Boolean("ok").Required())
	add(err)
	step1, err := askText("Step 1: What is your name?", "name")
	add(err)
	step2, err := askText("Step 2: What is your favorite color?", "color")
	add(err)
	contextForm, err := askText("What context should the prompt use?", "context")
	add(err)
	streamForm, err := askText("Anything to add?", "note")
	add(err)
	capital := &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("What is the capital of France?")}, MaxTokens: 100}
	greeting := &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("Generate a greeting")}, MaxTokens: 50}
	if nameForm == nil || okForm == nil || step1 == nil || step2 == nil || contextForm == nil || streamForm == nil {
		return
	}

	// The conformance suite also sends this tool's answer without the
	// requestState of a first round; answers here grant nothing, so the
	// tool opts in to matching them by key.
	add(srv.AddTool(noArgs("test_input_required_result_elicitation", "Asks for a name, then greets"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.Elicit(ctx, nameForm, server.WithKey("user_name"))
		if err != nil {
			return nil, err
		}
		name, ok := acceptedString(res, "name")
		if !ok {
			return server.ErrorResult("No name given (" + string(res.Action) + ")"), nil
		}
		return server.TextResult("Hello, " + name + "!"), nil
	}, server.AnswersWithoutState()))

	add(srv.AddTool(noArgs("test_input_required_result_sampling", "Asks the client's model a question"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.CreateMessage(ctx, capital, server.WithKey("sample_request"))
		if err != nil {
			return nil, err
		}
		return server.TextResult("Sampled: " + res.Text()), nil
	}))

	add(srv.AddTool(noArgs("test_input_required_result_list_roots", "Asks for the client's roots"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.ListRoots(ctx, server.WithKey("roots_request"))
		if err != nil {
			return nil, err
		}
		return server.TextResult("Roots: " + rootURIs(res)), nil
	}))

	add(srv.AddTool(noArgs("test_input_required_result_request_state", "Round-trips a requestState"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var st struct {
			Marker string `json:"marker"`
		}
		resumed, err := req.LoadState(&st)
		if err != nil {
			return nil, err
		}
		res, err := req.Elicit(ctx, okForm, server.WithKey("confirm"))
		if err != nil {
			if errors.Is(err, mrtr.ErrInputRequired) {
				if err := req.SaveState(struct {
					Marker string `json:"marker"`
				}{"issued"}); err != nil {
					return nil, err
				}
			}
			return nil, err
		}
		if !resumed || st.Marker != "issued" {
			return server.ErrorResult("requestState missing"), nil
		}
		return server.TextResult(fmt.Sprintf("state-ok: confirmation %s", res.Action)), nil
	}))

	add(srv.AddTool(noArgs("test_input_required_result_multiple_inputs", "Asks three questions at once"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		name, e1 := req.Elicit(ctx, nameForm, server.WithKey("user_name"))
		greet, e2 := req.CreateMessage(ctx, greeting, server.WithKey("greeting"))
		roots, e3 := req.ListRoots(ctx, server.WithKey("client_roots"))
		if err := errors.Join(e1, e2, e3); err != nil {
			return nil, err
		}
		n, _ := acceptedString(name, "name")
		return server.TextResult(fmt.Sprintf("Name: %s; greeting: %s; roots: %s", n, greet.Text(), rootURIs(roots))), nil
	}))

	type multiRound struct {
		Round int    `json:"round"`
		Name  string `json:"name,omitempty"`
	}
	add(srv.AddTool(noArgs("test_input_required_result_multi_round", "Asks two questions in two rounds"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var st multiRound
		if _, err := req.LoadState(&st); err != nil {
			return nil, err
		}
		if st.Round < 2 {
			res, err := req.Elicit(ctx, step1, server.WithKey("user_name"))
			if err != nil {
				if errors.Is(err, mrtr.ErrInputRequired) {
					if err := req.SaveState(multiRound{Round: 1}); err != nil {
						return nil, err
					}
				}
				return nil, err
			}
			st.Name, _ = acceptedString(res, "name")
			if err := req.SaveState(multiRound{Round: 2, Name: st.Name}); err != nil {
				return nil, err
			}
		}
		res, err := req.Elicit(ctx, step2, server.WithKey("favorite_color"))
		if err != nil {
			return nil, err
		}
		color, _ := acceptedString(res, "color")
		return server.TextResult(fmt.Sprintf("%s likes %s", st.Name, color)), nil
	}))

	add(srv.AddTool(noArgs("test_input_required_result_tampered_state", "Refuses a tampered requestState"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if _, err := req.Elicit(ctx, okForm, server.WithKey("confirm")); err != nil {
			return nil, err
		}
		return server.TextResult("state verified"), nil
	}))

	add(srv.AddTool(noArgs("test_input_required_result_capabilities", "Asks only what the client can answer"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		caps := req.Capabilities()
		var errs []error
		var parts []string
		if caps.CanElicitForm() {
			res, err := req.Elicit(ctx, nameForm, server.WithKey("elicit_input"))
			if err == nil {
				n, _ := acceptedString(res, "name")
				parts = append(parts, "name="+n)
			}
			errs = append(errs, err)
		}
		if caps.CanSample() {
			res, err := req.CreateMessage(ctx, capital, server.WithKey("sample_input"))
			if err == nil {
				parts = append(parts, "sampled="+res.Text())
			}
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		if len(parts) == 0 {
			return server.TextResult("The client declared neither elicitation nor sampling"), nil
		}
		return server.TextResult(strings.Join(parts, "; ")), nil
	}))

	add(srv.AddTool(noArgs("test_missing_capability", "Needs sampling"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.CreateMessage(ctx, capital, server.WithKey("sample_request"))
		if err != nil {
			return nil, err
		}
		return server.TextResult("Sampled: " + res.Text()), nil
	}))

	// Before its question this tool reports progress and logs; a legacy
	// client, for which the bridge runs it again after the answer, still
	// sees each notification once: progress 1 then 2, two log lines. It
	// declares that it needs elicitation, so a client without it gets its
	// -32021 with HTTP 400 before any progress opens the event stream.
	add(srv.AddTool(noArgs("test_streaming_elicitation", "Streams progress, then asks through input_required"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if err := req.Progress(ctx, 1, 2, "preparing the question"); err != nil {
			return nil, err
		}
		if err := req.Log(ctx, server.LevelInfo, "test_streaming_elicitation", "preparing the question"); err != nil {
			return nil, err
		}
		res, err := req.Elicit(ctx, streamForm, server.WithKey("note"))
		if err != nil {
			return nil, err
		}
		if err := req.Progress(ctx, 2, 2, "answered"); err != nil {
			return nil, err
		}
		if err := req.Log(ctx, server.LevelInfo, "test_streaming_elicitation", "answered: "+string(res.Action)); err != nil {
			return nil, err
		}
		return server.TextResult("Elicitation " + string(res.Action)), nil
	}, server.RequireCapabilities(client.Capabilities{Elicitation: &client.ElicitationCapability{}})))

	add(srv.AddPrompt(server.Prompt{Name: "test_input_required_result_prompt", Description: "Asks for context before building the prompt"}, func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
		res, err := req.Elicit(ctx, contextForm, server.WithKey("user_context"))
		if err != nil {
			return nil, err
		}
		c, _ := acceptedString(res, "context")
		return &server.PromptResult{Messages: []server.PromptMessage{{Role: content.RoleUser, Content: content.Text("Context: " + c)}}}, nil
	}))
}

func rootURIs(res *client.ListRootsResult) string {
	uris := make([]string, len(res.Roots))
	for i, r := range res.Roots {
		uris[i] = r.URI
	}
	return strings.Join(uris, ", ")
}
