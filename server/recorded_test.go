package server

import (
	"encoding/json"
	"testing"

	"github.com/baton-mcp/baton/elicit"
)

// TestCheckedElicitRoundTrip: what appendCheckedElicit writes reads back
// as the same result, and anything a client could have sent (an object)
// or a damaged record is not taken for the checked form.
func TestCheckedElicitRoundTrip(t *testing.T) {
	form, err := elicit.NewForm("Proceed?", elicit.Boolean("ok").Required())
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{
		`{"action":"accept","content":{"ok":true}}`,
		`{"action":"accept","content":{"ok":false,"extra":"dropped"}}`,
		`{"action":"decline"}`,
		`{"action":"cancel"}`,
	} {
		res, err := form.CheckResult([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		rec := appendCheckedElicit(nil, res)
		got, ok := checkedElicit(form, rec, nil)
		if !ok {
			t.Fatalf("%s: record %s not read back", raw, rec)
		}
		if got.Action != res.Action || string(got.Content) != string(res.Content) {
			t.Fatalf("%s: got %+v, want %+v", raw, got, res)
		}
		if res.Action == elicit.ActionAccept {
			var v struct {
				OK bool `json:"ok"`
			}
			if err := got.Decode(&v); err != nil {
				t.Fatalf("%s: decode: %v", raw, err)
			}
		}
	}
	for _, rec := range []string{
		`{"action":"accept","content":{"ok":true}}`, // as a client sends it: checked in full
		`["accept",{"ok":true}`,
		`["maybe"]`,
		`["decline",{"ok":true}]`,
		`["accept",true]`,
		`["accept"`,
		`[]`,
	} {
		if _, ok := checkedElicit(form, json.RawMessage(rec), new(elicit.Result)); ok {
			t.Errorf("%s taken for a checked record", rec)
		}
	}
}
