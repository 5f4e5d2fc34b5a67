package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// askClient is an mcptest client of a fresh example server in era
// (mcptest.ProtocolVersion or LegacyProtocolVersion) whose user answers
// every question with answer.
func askClient(t *testing.T, protocol string, answer func(*elicit.Request) (*elicit.Result, error)) *mcptest.Client {
	t.Helper()
	srv := exampleServer(t, testKey)
	c, err := mcptest.New(mcptest.Handler(srv), &mcptest.Options{Protocol: protocol,
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) { return answer(req) }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func askContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var eras = []string{mcp.ProtocolVersion, mcp.LegacyProtocolVersion}

// open_dashboard asks the user to open a URL and goes on when they accept;
// a refusal says which.
func TestOpenDashboard(t *testing.T) {
	for _, era := range eras {
		for _, tc := range []struct {
			answer  func() (*elicit.Result, error)
			want    string
			isError bool
		}{
			{func() (*elicit.Result, error) { return mcptest.Accept(nil) }, "Opened " + dashboardURL + "; continuing with the review", false},
			{mcptest.Decline, "The dashboard was not opened: you declined", true},
			{mcptest.Cancel, "The dashboard was not opened: you cancelled", true},
		} {
			var asked *elicit.Request
			c := askClient(t, era, func(req *elicit.Request) (*elicit.Result, error) {
				asked = req
				return tc.answer()
			})
			res, err := c.CallTool(askContext(t), "open_dashboard", nil)
			if err != nil {
				t.Fatalf("%s: %v", era, err)
			}
			if res.Text() != tc.want || res.IsError != tc.isError {
				t.Errorf("%s: %q (isError %v), want %q", era, res.Text(), res.IsError, tc.want)
			}
			if asked == nil || asked.Mode != elicit.ModeURL || asked.URL != dashboardURL {
				t.Fatalf("%s: asked %+v, want a URL elicitation of %s", era, asked, dashboardURL)
			}
			// Only a 2025-11-25 client gets the elicitation id.
			if hasID := asked.ElicitationID != ""; hasID != (era == mcp.LegacyProtocolVersion) {
				t.Errorf("%s: elicitationId %q", era, asked.ElicitationID)
			}
		}
	}
}

// Reading baton://account/profile asks a display name first: an
// input_required round in 2026-07-28, an elicitation/create in
// 2025-11-25.
func TestProfileResourceAsks(t *testing.T) {
	for _, era := range eras {
		c := askClient(t, era, func(req *elicit.Request) (*elicit.Result, error) {
			if !strings.Contains(req.Message, "display name") {
				return nil, errors.New("unexpected question " + req.Message)
			}
			return mcptest.Accept(map[string]any{"name": "Ada"})
		})
		res, err := c.ReadResource(askContext(t), profileURI)
		if err != nil {
			t.Fatalf("%s: %v", era, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].Text != "Profile of Ada" {
			t.Fatalf("%s: contents %+v", era, res.Contents)
		}
		r := res.Exchange.Rounds
		if era == mcp.ProtocolVersion && (len(r) != 2 || len(r[0].InputRequests) != 1 || r[0].RequestState == "") {
			t.Errorf("%s: want one input_required round, then the result: %+v", era, r)
		}
		if era == mcp.LegacyProtocolVersion && (len(r) != 1 || len(r[0].InputRequests) != 1 || r[0].InputRequests[0].Method != "elicitation/create") {
			t.Errorf("%s: want one elicitation/create on the read's stream: %+v", era, r)
		}
	}
	// Declining ends the read with an error that says so.
	c := askClient(t, mcp.ProtocolVersion, func(*elicit.Request) (*elicit.Result, error) { return mcptest.Decline() })
	_, err := c.ReadResource(askContext(t), profileURI)
	var rpcErr *mcptest.Error
	if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "you declined") {
		t.Fatalf("declined: %v, want an error saying so", err)
	}
}
