package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcptest"
)

func newClient(t *testing.T) *mcptest.Client {
	t.Helper()
	srv, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	c, err := mcptest.New(mcptest.Handler(srv), &mcptest.Options{
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			if strings.HasPrefix(req.Message, "How many nights") {
				return mcptest.Accept(map[string]any{"nights": 3})
			}
			return mcptest.Accept(map[string]any{"name": "Ada"})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFourKinds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newClient(t)

	res, err := c.CallTool(ctx, "plan_trip", map[string]any{"city": "Kyoto"})
	if err != nil {
		t.Fatal(err)
	}
	var plan Plan
	if err := json.Unmarshal(res.StructuredContent, &plan); err != nil || res.IsError {
		t.Fatalf("plan_trip: %s (%v)", res.StructuredContent, err)
	}
	if plan != (Plan{City: "Kyoto", Nights: 3, Name: "Ada"}) {
		t.Fatalf("plan_trip = %+v", plan)
	}
	if n := len(res.Exchange.Rounds); n != 3 {
		t.Fatalf("plan_trip took %d requests, want 3", n)
	}

	p, err := c.GetPrompt(ctx, "packing_list", map[string]string{"city": "Quito"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 1 || !strings.Contains(p.Messages[0].Content.Text, "Quito") {
		t.Fatalf("packing_list = %+v", p.Messages)
	}

	r, err := c.ReadResource(ctx, "trips://cities")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Contents) != 1 || !strings.Contains(r.Contents[0].Text, "Kyoto") {
		t.Fatalf("trips://cities = %+v", r.Contents)
	}

	// A caller without the tasks extension runs the task tool at once.
	res, err = c.CallTool(ctx, "summarize", map[string]any{"text": "one two  three"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.StructuredContent) != `{"words":3}` {
		t.Fatalf("summarize = %s", res.StructuredContent)
	}
}
