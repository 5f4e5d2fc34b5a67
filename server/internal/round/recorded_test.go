package round

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/baton-mcp/baton/mrtr"
)

// TestCheckRecordsItsForm: a new answer is checked with recorded false and
// sealed in the form Check returns; on the next round that form comes back
// with recorded true for the same question, and an answer to a question
// asked anew is checked as new.
func TestCheckRecordsItsForm(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	q1 := mrtr.ElicitRequest(confirmForm(t, "First?"))
	q2 := mrtr.ElicitRequest(confirmForm(t, "Second?"))
	type call struct {
		raw      string
		recorded bool
	}
	var calls []call
	check := func(raw json.RawMessage, recorded bool) (json.RawMessage, error) {
		calls = append(calls, call{string(raw), recorded})
		if recorded {
			return nil, nil
		}
		return json.RawMessage(`["checked"]`), nil
	}

	r1 := rt.round(formCaps, "", "")
	if _, err := r1.Ask(0, "a", q1, check); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("round 1: %v", err)
	}
	s1, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	r2 := rt.round(formCaps, s1.RequestState, `{"a":{"action":"accept","content":{"confirm":true}}}`)
	if raw, err := r2.Ask(0, "a", q1, check); err != nil || string(raw) != `{"action":"accept","content":{"confirm":true}}` {
		t.Fatalf("round 2, a: %s, %v", raw, err)
	}
	if _, err := r2.Ask(0, "b", q2, check); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("round 2, b: %v", err)
	}
	s2, err := r2.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	r3 := rt.round(formCaps, s2.RequestState, `{"b":{"action":"decline"}}`)
	if raw, err := r3.Ask(0, "a", q1, check); err != nil || string(raw) != `["checked"]` {
		t.Fatalf("round 3, a: %s, %v", raw, err)
	}
	if _, err := r3.Ask(0, "b", q2, check); err != nil {
		t.Fatalf("round 3, b: %v", err)
	}
	want := []call{
		{`{"action":"accept","content":{"confirm":true}}`, false},
		{`["checked"]`, true},
		{`{"action":"decline"}`, false},
	}
	if len(calls) != len(want) {
		t.Fatalf("checks = %+v, want %+v", calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Fatalf("check %d = %+v, want %+v", i, calls[i], want[i])
		}
	}
}
