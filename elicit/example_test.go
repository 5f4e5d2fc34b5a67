package elicit_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/baton-mcp/baton/elicit"
)

// A server asks the user to confirm a deletion, then checks the answers
// that come back on the retry.
func Example() {
	req, err := elicit.NewForm("Delete 3 files from /reports?",
		elicit.Boolean("confirm").Title("Yes, delete them").Required(),
		elicit.String("reason").Title("Reason").MaxLength(200),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	wire, _ := json.Marshal(req)
	fmt.Println(string(wire))

	for _, answer := range []string{
		`{"action":"accept","content":{"confirm":true,"reason":"cleanup"}}`,
		`{"action":"accept","content":{"confirm":"yes"}}`,
		`{"action":"decline"}`,
	} {
		res, err := req.CheckResult([]byte(answer))
		var invalid *elicit.ValidationError
		switch {
		case errors.As(err, &invalid):
			fmt.Printf("ask again: %s %s\n", invalid.Field, invalid.Reason)
		case err != nil:
			fmt.Println("malformed:", err)
		case res.Action == elicit.ActionAccept:
			var v struct {
				Confirm bool   `json:"confirm"`
				Reason  string `json:"reason"`
			}
			_ = res.Decode(&v)
			fmt.Printf("confirmed=%v reason=%q\n", v.Confirm, v.Reason)
		default:
			fmt.Println("not confirmed:", res.Action)
		}
	}
	// Output:
	// {"mode":"form","message":"Delete 3 files from /reports?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean","title":"Yes, delete them"},"reason":{"type":"string","title":"Reason","maxLength":200}},"required":["confirm"]}}
	// confirmed=true reason="cleanup"
	// ask again: confirm must be a boolean, got a string
	// not confirmed: decline
}
