package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcptest"
)

var bookArgsAlice = map[string]any{"restaurant": "Chez Panisse", "party": 4}

// bookingClient returns a client for target that answers book_table's
// date form with date and note, and its confirmation with confirm;
// dateAction and confirmAction, when not "accept", answer that question
// with decline or cancel instead.
func bookingClient(t *testing.T, target mcptest.Target, dateAction, confirmAction elicit.Action, date any, confirm bool) *mcptest.Client {
	t.Helper()
	answer := func(action elicit.Action, content map[string]any) (*elicit.Result, error) {
		switch action {
		case elicit.ActionDecline:
			return mcptest.Decline()
		case elicit.ActionCancel:
			return mcptest.Cancel()
		}
		return mcptest.Accept(content)
	}
	c, err := mcptest.New(target, &mcptest.Options{
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			props := schemaPropertiesOf(t, req)
			switch {
			case props["date"] != nil:
				return answer(dateAction, map[string]any{"date": date, "note": "a table by the window"})
			case props["confirm"] != nil:
				return answer(confirmAction, map[string]any{"confirm": confirm})
			}
			return nil, fmt.Errorf("unexpected question %q", req.Message)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// schemaPropertiesOf returns the properties of a form's requestedSchema.
func schemaPropertiesOf(t *testing.T, req *elicit.Request) map[string]json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return schemaProperties(t, raw)
}

// book_table over HTTP, as a 2026-07-28 client sees it: three requests,
// the second and third on the other instance of two that share only the
// state key.
func TestBookTableModernAcrossInstances(t *testing.T) {
	a := newTestServer(t, testKey)
	b := newTestServer(t, testKey)
	res, err := bookingClient(t, mcptest.RoundRobin(at(a), at(b)), elicit.ActionAccept, elicit.ActionAccept, "2026-07-28", true).
		CallTool(testContext(t), "book_table", bookArgsAlice)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("isError: %s", res.Text())
	}

	rounds := res.Exchange.Rounds
	if len(rounds) != 3 {
		t.Fatalf("%d requests, want 3", len(rounds))
	}
	for i, want := range []struct {
		message string
		schema  string
	}{
		{"Which day would you like a table for 4 at Chez Panisse?",
			`{"type":"object","properties":{"date":{"type":"string","title":"Date","format":"date"},"note":{"type":"string","title":"A note for the restaurant"}},"required":["date"]}`},
		{"Book a table for 4 at Chez Panisse on 2026-07-28?",
			`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm the booking"}},"required":["confirm"]}`},
	} {
		irs := rounds[i].InputRequests
		if len(irs) != 1 || irs[0].Elicitation == nil {
			t.Fatalf("round %d asks %+v, want one elicitation", i+1, irs)
		}
		got := irs[0].Elicitation
		schema, _ := json.Marshal(got.RequestedSchema)
		if got.Message != want.message || string(schema) != want.schema {
			t.Errorf("round %d asks %q with %s\nwant %q with %s", i+1, got.Message, schema, want.message, want.schema)
		}
		if rounds[i].RequestState == "" {
			t.Errorf("round %d has no requestState", i+1)
		}
	}
	// The date answer rides in round 2's state, encrypted.
	if s := rounds[1].RequestState; strings.Contains(s, "2026-07-28") || strings.Contains(s, "window") {
		t.Errorf("round 2's requestState shows the first answer: %s", s)
	}

	want := booking{Restaurant: "Chez Panisse", Party: 4, Date: "2026-07-28", Note: "a table by the window", Confirmed: true}
	var got booking
	if err := res.Decode(&got); err != nil || got != want {
		t.Fatalf("structuredContent %s (%v), want %+v", res.StructuredContent, err, want)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(res.StructuredContent, &members); err != nil || len(members) != 5 || string(members["confirmed"]) != "true" {
		t.Errorf("structuredContent %s, want exactly restaurant, party, date, note and confirmed: true", res.StructuredContent)
	}
	var text booking
	if err := json.Unmarshal([]byte(res.Text()), &text); err != nil || text != want {
		t.Errorf("text block %q, want the same JSON as structuredContent", res.Text())
	}
}

// The schemas tools/list shows are inferred from bookArgs and booking.
func TestBookTableSchemas(t *testing.T) {
	c, err := mcptest.New(at(newTestServer(t, testKey)), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if tool.Name != "book_table" {
			continue
		}
		const in = `{"type":"object","properties":{"restaurant":{"type":"string","description":"the restaurant to book"},"party":{"type":"integer","description":"how many people the table is for","minimum":1}},"required":["restaurant","party"],"additionalProperties":false}`
		if string(tool.InputSchema) != in {
			t.Errorf("inputSchema %s\nwant %s", tool.InputSchema, in)
		}
		var out struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tool.OutputSchema, &out); err != nil {
			t.Fatal(err)
		}
		if out.Type != "object" || len(out.Properties) != 5 || strings.Join(out.Required, ",") != "restaurant,party,date,note,confirmed" {
			t.Errorf("outputSchema %s, want an object requiring the five members", tool.OutputSchema)
		}
		return
	}
	t.Fatal("tools/list has no book_table")
}

// Declined or cancelled at either question, nothing is booked: an isError
// result after the round that asked it.
func TestBookTableRefused(t *testing.T) {
	ts := newTestServer(t, testKey)
	accept := elicit.ActionAccept
	for _, tc := range []struct {
		name          string
		date, confirm elicit.Action
		confirmed     bool
		requests      int
		want          string
	}{
		{"date declined", elicit.ActionDecline, accept, true, 2, "No table booked: the user declined"},
		{"date cancelled", elicit.ActionCancel, accept, true, 2, "No table booked: the user cancelled"},
		{"confirmation declined", accept, elicit.ActionDecline, true, 3, "No table booked: the user declined"},
		{"confirmation cancelled", accept, elicit.ActionCancel, true, 3, "No table booked: the user cancelled"},
		{"confirmation false", accept, accept, false, 3, "No table booked: the booking was not confirmed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := bookingClient(t, at(ts), tc.date, tc.confirm, "2026-07-28", tc.confirmed).CallTool(testContext(t), "book_table", bookArgsAlice)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Text() != tc.want || res.StructuredContent != nil || len(res.Exchange.Rounds) != tc.requests {
				t.Fatalf("isError %v, text %q, structuredContent %s after %d requests; want isError, %q, none, after %d",
					res.IsError, res.Text(), res.StructuredContent, len(res.Exchange.Rounds), tc.want, tc.requests)
			}
		})
	}
}

// Bad input gets clear errors: arguments that break the inferred schema
// are an isError result the model can correct; a date that is not one is
// refused as an invalid answer (-32602) in the round that carries it.
func TestBookTableBadInput(t *testing.T) {
	ts := newTestServer(t, testKey)
	ctx := testContext(t)
	c := bookingClient(t, at(ts), elicit.ActionAccept, elicit.ActionAccept, "next friday", true)
	for _, args := range []map[string]any{
		{"restaurant": "Chez Panisse"},
		{"restaurant": "Chez Panisse", "party": 0},
		{"restaurant": "Chez Panisse", "party": "four"},
	} {
		res, err := c.CallTool(ctx, "book_table", args)
		if err != nil || !res.IsError || !strings.HasPrefix(res.Text(), "invalid arguments") || len(res.Exchange.Rounds) != 1 {
			t.Errorf("arguments %v: %v, %+v", args, err, res)
		}
	}
	_, err := c.CallTool(ctx, "book_table", bookArgsAlice)
	var rpcErr *mcptest.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 || rpcErr.Round != 2 || !strings.Contains(rpcErr.Message, "date") {
		t.Fatalf("a date that is not one: %v", err)
	}
}
