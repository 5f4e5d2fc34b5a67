package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/server"
)

// addTransfer adds confirm_transfer: it asks the user to confirm with
// a form before it moves any money, and redeems each confirmation in the
// ledger before acting, so a replayed confirmed retry transfers nothing on
// any instance that shares the ledger. With BATON_REDIS_URL that is every
// instance using the same Redis (examples/fleet); without it the ledger
// is this process's memory, and another instance would transfer again.
// When the ledger cannot be reached the transfer fails closed, and the
// client reads a generic error (the detail is in the log).
func addTransfer(srv *server.Server, ledger server.Ledger) error {
	tool := server.Tool{
		Name:        "confirm_transfer",
		Description: "Transfers an amount to a recipient after the user confirms",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string","minLength":1},"amount":{"type":"number","exclusiveMinimum":0}},"required":["to","amount"],"additionalProperties":false}`),
	}
	return srv.AddTool(tool, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var in struct {
			To     string  `json:"to"`
			Amount float64 `json:"amount"`
		}
		if err := req.Bind(&in); err != nil {
			return nil, err
		}
		amount := strconv.FormatFloat(in.Amount, 'f', -1, 64)
		form, err := elicit.NewForm("Transfer "+amount+" to "+in.To+"?",
			elicit.Boolean("confirm").Title("Confirm the transfer").Required())
		if err != nil {
			return nil, err
		}
		res, err := req.Elicit(ctx, form, server.WithKey("confirm"))
		if err != nil {
			return nil, err
		}
		var answer struct {
			Confirm bool `json:"confirm"`
		}
		if res.Action != elicit.ActionAccept || res.Decode(&answer) != nil || !answer.Confirm {
			return server.ErrorResult("Transfer declined"), nil
		}
		// On a 2025-11-25 session the answer came from a live exchange
		// and the handler runs once: Redeem has no retry to guard and
		// succeeds.
		if err := req.Redeem(ctx, ledger); err != nil {
			if errors.Is(err, server.ErrAlreadyRedeemed) {
				return server.ErrorResult("This confirmation was already used; nothing transferred"), nil
			}
			return nil, err
		}
		return server.TextResult("Transferred " + amount + " to " + in.To), nil
	})
}
