package main

// Two more ways to ask, beyond the forms of the other fixtures:
//
//   - open_dashboard asks the user to open a URL (a URL-mode elicitation)
//     and goes on when they accept. Accept means only that the user agreed
//     to open the page; a real flow would then check, on a later question
//     or the retry, that what the page does has happened (a sign-in, a
//     payment). That check is left out here.
//   - baton://account/profile is a resource whose read asks a question: it
//     answers input_required with a form (2026-07-28), or sends
//     elicitation/create on the read's stream (2025-11-25), and returns the
//     profile once the user answered.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// dashboardURL is the page open_dashboard asks the user to open.
const dashboardURL = "https://example.com/billing/dashboard"

// profileURI is the resource that asks before it answers.
const profileURI = "baton://account/profile"

func addAskFixtures(srv *server.Server) error {
	if err := srv.AddTool(noArgs("open_dashboard", "Asks the user to open the billing dashboard in a browser (a URL elicitation), then goes on"), openDashboard); err != nil {
		return err
	}
	name, err := elicit.NewSchema(elicit.String("name").Title("Display name").Required())
	if err != nil {
		return err
	}
	return srv.AddResource(server.Resource{URI: profileURI, Name: "profile", Title: "Account profile",
		Description: "The account's profile; reading it asks the user for a display name first", MimeType: "text/plain"},
		func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
			res, err := req.CreateFormElicitation(ctx, "Which display name should the profile show?", name)
			if err != nil {
				return nil, err // input_required until the client answers
			}
			var a struct {
				Name string `json:"name"`
			}
			if err := res.Decode(&a); err != nil {
				return nil, fmt.Errorf("no profile: %w", refusal(err))
			}
			return &server.ResourceResult{Contents: []mcp.ResourceContents{
				mcp.TextContents(profileURI, "text/plain", "Profile of "+a.Name),
			}}, nil
		})
}

// openDashboard asks the user to open dashboardURL and goes on when they
// accept.
func openDashboard(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	// The elicitation id names the interaction for a 2025-11-25 client;
	// 2026-07-28 clients never see it, so a fresh one per run is fine.
	res, err := req.CreateURLElicitation(ctx, "dashboard-"+rand.Text(), "Open the billing dashboard to review your plan", dashboardURL)
	if err != nil {
		return nil, err
	}
	switch res.Action {
	case elicit.ActionDecline:
		return server.ErrorResult("The dashboard was not opened: you declined"), nil
	case elicit.ActionCancel:
		return server.ErrorResult("The dashboard was not opened: you cancelled"), nil
	}
	return server.TextResult("Opened " + dashboardURL + "; continuing with the review"), nil
}

// refusal names why the user gave no answer.
func refusal(err error) error {
	switch {
	case errors.Is(err, elicit.ErrDeclined):
		return errors.New("you declined")
	case errors.Is(err, elicit.ErrCancelled):
		return errors.New("you cancelled")
	}
	return err
}
