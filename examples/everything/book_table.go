package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/server"
)

// bookArgs are book_table's arguments. The input schema is inferred from
// this type: neither field says omitempty, so both are required.
type bookArgs struct {
	Restaurant string `json:"restaurant" jsonschema:"the restaurant to book"`
	Party      int    `json:"party" jsonschema:"how many people the table is for"`
}

// booking is book_table's result. The output schema is inferred from this
// type (every field required); the server checks the structuredContent
// against it and adds a text block holding the same JSON.
type booking struct {
	Restaurant string `json:"restaurant"`
	Party      int    `json:"party"`
	Date       string `json:"date" jsonschema:"the day booked, YYYY-MM-DD"`
	Note       string `json:"note" jsonschema:"the guest's note for the restaurant (empty when none)"`
	Confirmed  bool   `json:"confirmed"`
}

// addBookTable registers book_table, a typed tool that asks two questions
// in plain sequence: a form for the date (and an optional note), then a
// confirmation. The same code serves every client:
//
//   - 2026-07-28: three requests. The first answers input_required with
//     the date form; the second, carrying that answer, is answered
//     input_required with the confirmation; the third completes. Each
//     retry may reach another instance that shares the state key: the
//     answers given so far ride, encrypted, in the requestState.
//   - 2025-11-25: one tools/call during which the server sends two
//     elicitation/create requests on the call's SSE stream.
//
// On the stateless protocol the handler runs from the top on every round,
// so nothing before the last answer has side effects: it only builds the
// questions and reads the answers.
func addBookTable(srv *server.Server) error {
	return server.AddTool(srv, server.Tool{
		Name:        "book_table",
		Title:       "Book a table",
		Description: "Books a restaurant table: asks the date (and an optional note), then a confirmation",
	}, bookTable, server.RefineSchemas(func(in, out *jsonschema.Schema) error {
		// What a struct tag cannot say: a party is at least one person.
		in.Properties["party"].Minimum = jsonschema.Ptr(1.0)
		return nil
	}))
}

// bookTable is book_table's handler.
func bookTable(ctx context.Context, req *server.ToolRequest, in bookArgs) (booking, error) {
	when, err := elicit.NewForm(fmt.Sprintf("Which day would you like a table for %d at %s?", in.Party, in.Restaurant),
		elicit.String("date").Title("Date").Format(elicit.FormatDate).Required(),
		elicit.String("note").Title("A note for the restaurant"),
	)
	if err != nil {
		return booking{}, err
	}
	res, err := req.Elicit(ctx, when)
	if err != nil {
		return booking{}, err // on 2026-07-28: input_required, until the client answers
	}
	var day struct {
		Date string `json:"date"`
		Note string `json:"note"`
	}
	if err := res.Decode(&day); err != nil {
		return booking{}, notBooked(res, err)
	}

	confirm, err := elicit.NewForm(fmt.Sprintf("Book a table for %d at %s on %s?", in.Party, in.Restaurant, day.Date),
		elicit.Boolean("confirm").Title("Confirm the booking").Required(),
	)
	if err != nil {
		return booking{}, err
	}
	res, err = req.Elicit(ctx, confirm)
	if err != nil {
		return booking{}, err
	}
	var yes struct {
		Confirm bool `json:"confirm"`
	}
	if err := res.Decode(&yes); err != nil {
		return booking{}, notBooked(res, err)
	}
	if !yes.Confirm {
		return booking{}, errors.New("No table booked: the booking was not confirmed")
	}
	return booking{Restaurant: in.Restaurant, Party: in.Party, Date: day.Date, Note: day.Note, Confirmed: true}, nil
}

// notBooked is the error for an answer that books nothing: the user
// declined or cancelled (or, which the schema check makes unlikely, the
// content does not decode). A typed handler's error becomes the text of an
// isError result.
func notBooked(res *elicit.Result, err error) error {
	switch res.Action {
	case elicit.ActionDecline:
		return errors.New("No table booked: the user declined")
	case elicit.ActionCancel:
		return errors.New("No table booked: the user cancelled")
	}
	return fmt.Errorf("No table booked: %w", err)
}
