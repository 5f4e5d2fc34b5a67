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
	// The form of earlier releases (the action's name) still reads.
	for rec, want := range map[string]elicit.Result{
		`["accept",{"ok":true}]`: {Action: elicit.ActionAccept, Content: json.RawMessage(`{"ok":true}`)},
		`["accept"]`:             {Action: elicit.ActionAccept},
		`["decline"]`:            {Action: elicit.ActionDecline},
		`["cancel"]`:             {Action: elicit.ActionCancel},
	} {
		got, ok := checkedElicit(form, json.RawMessage(rec), new(elicit.Result))
		if !ok || got.Action != want.Action || string(got.Content) != string(want.Content) {
			t.Errorf("%s read as %+v, %v; want %+v", rec, got, ok, want)
		}
	}
	if rec := string(appendCheckedElicit(nil, &elicit.Result{Action: elicit.ActionAccept, Content: json.RawMessage(`{"ok":true}`)})); rec != `[0,{"ok":true}]` {
		t.Errorf("recorded form %s", rec)
	}
	for _, rec := range []string{
		`{"action":"accept","content":{"ok":true}}`, // as a client sends it: checked in full
		`[0,{"ok":true}`,
		`[0,true]`,
		`[0,]`,
		`[0,{"ok":true]`,
		`[1,{"ok":true}]`,
		`[3]`,
		`[0`,
		`[/]`,
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

// FuzzCheckedElicit: reading a recorded answer never panics, and what it
// takes for the checked form writes back to a record that reads as the
// same result.
func FuzzCheckedElicit(f *testing.F) {
	form, err := elicit.NewForm("Proceed?", elicit.Boolean("ok").Required())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		res, ok := checkedElicit(form, rec, new(elicit.Result))
		if !ok {
			return
		}
		again, ok := checkedElicit(form, appendCheckedElicit(nil, res), nil)
		if !ok || again.Action != res.Action || string(again.Content) != string(res.Content) {
			t.Fatalf("%q read as %+v, written and read again as %+v, %v", rec, res, again, ok)
		}
	})
}
