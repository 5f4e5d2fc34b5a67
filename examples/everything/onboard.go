package main

import (
	"context"
	"fmt"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/server"
)

// addOnboarding adds onboard_user: two questions in plain sequence, the
// second's message built from the first answer. The same code serves a
// 2025-11-25 session (two real round trips) and a 2026-07-28 client
// (three requests that may land on different instances): on the stateless
// protocol each question returns its recorded answer until the handler
// reaches a new one. Its questions have no keys of their own, so the
// server names them by position.
func addOnboarding(srv *server.Server) error {
	nameSchema, err := elicit.NewSchema(elicit.String("name").Title("Your name").MinLength(1).Required())
	if err != nil {
		return err
	}
	emailSchema, err := elicit.NewSchema(elicit.String("email").Title("Your email").Format(elicit.FormatEmail).Required())
	if err != nil {
		return err
	}
	return srv.AddTool(noArgs("onboard_user", "Asks for a name, then an email, and welcomes the user"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		// Everything before a question runs again on every round: keep it
		// free of side effects.
		var name, email struct {
			Name  string `json:"name"`
			Email string `json:"email"`
		}
		res, err := req.CreateFormElicitation(ctx, "What is your name?", nameSchema)
		if err != nil {
			return nil, err
		}
		if res.Action != elicit.ActionAccept || res.Decode(&name) != nil {
			return server.ErrorResult("Onboarding cancelled"), nil
		}
		res, err = req.CreateFormElicitation(ctx, fmt.Sprintf("Thanks, %s. What is your email?", name.Name), emailSchema)
		if err != nil {
			return nil, err
		}
		if res.Action != elicit.ActionAccept || res.Decode(&email) != nil {
			return server.ErrorResult("Onboarding cancelled"), nil
		}
		return server.TextResult(fmt.Sprintf("Welcome aboard, %s <%s>", name.Name, email.Email)), nil
	})
}
