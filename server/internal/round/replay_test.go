package round

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

func textForm(t testing.TB, message, field string) mrtr.InputRequest {
	t.Helper()
	r, err := elicit.NewForm(message, elicit.String(field).Required())
	if err != nil {
		t.Fatal(err)
	}
	return mrtr.ElicitRequest(r)
}

func accept(field, value string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"action": "accept", "content": map[string]string{field: value}})
	return b
}

// onboard is a blocking-style handler: two questions in sequence.
type onboard struct {
	name, email mrtr.InputRequest
	runs        int
}

func (o *onboard) run(r *Round) (string, error) {
	o.runs++
	nameRaw, err := replayQ(r, 0, o.name, func(json.RawMessage) error { return nil })
	if err != nil {
		return "", err
	}
	emailRaw, err := replayQ(r, 1, o.email, func(json.RawMessage) error { return nil })
	if err != nil {
		return "", err
	}
	return string(nameRaw) + " " + string(emailRaw), nil
}

// play runs one round of h with the given state and answers and returns
// the next state (or the result).
func play(t *testing.T, rt roundTrip, h *onboard, token string, answers map[string]json.RawMessage) (next string, pending []string, result string) {
	t.Helper()
	var st *seal.State
	if token != "" {
		var err error
		if st, err = openBound(rt.sealer, token, rt.b); err != nil {
			t.Fatal(err)
		}
	}
	r := New(formCaps, responsesOf(t, answers), st, Options{})
	out, err := h.run(r)
	if err == nil {
		return "", nil, out
	}
	if !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatal(err)
	}
	irr, err := r.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	for _, kr := range irr.Questions {
		pending = append(pending, kr.Key)
	}
	return irr.RequestState, pending, ""
}

func TestReplayTwoQuestions(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	h := &onboard{name: textForm(t, "Your name?", "name"), email: textForm(t, "Your email?", "email")}

	s1, p1, _ := play(t, rt, h, "", nil)
	if strings.Join(p1, ",") != "baton:0" {
		t.Fatalf("round 1 asks %v", p1)
	}
	s2, p2, _ := play(t, rt, h, s1, map[string]json.RawMessage{"baton:0": accept("name", "Alice")})
	if strings.Join(p2, ",") != "baton:1" {
		t.Fatalf("round 2 asks %v", p2)
	}
	// The first answer is sealed into round 2's state, unreadably.
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(s2, ".")[1])
	if strings.Contains(string(payload), "Alice") {
		t.Fatalf("the recorded answer is readable in the state: %s", payload)
	}
	// Round 3 answers only q1: q0 comes from the recording.
	_, p3, res := play(t, rt, h, s2, map[string]json.RawMessage{"baton:1": accept("email", "alice@example.com")})
	if len(p3) != 0 || !strings.Contains(res, "Alice") || !strings.Contains(res, "alice@example.com") {
		t.Fatalf("round 3: pending %v, result %q", p3, res)
	}
	if h.runs != 3 {
		t.Fatalf("the handler ran %d times, want 3 (once per round)", h.runs)
	}
}

func TestReplayChangedQuestionIsAskedAgain(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	h := &onboard{name: textForm(t, "Your name?", "name"), email: textForm(t, "Your email?", "email")}
	s1, _, _ := play(t, rt, h, "", nil)
	s2, _, _ := play(t, rt, h, s1, map[string]json.RawMessage{"baton:0": accept("name", "Alice")})

	// The handler now asks a different first question (a new deploy).
	h.name = textForm(t, "Your full legal name?", "name")
	_, p3, res := play(t, rt, h, s2, map[string]json.RawMessage{"baton:1": accept("email", "alice@example.com"), "baton:0": accept("name", "Alice")})
	if res != "" || strings.Join(p3, ",") != "baton:0" {
		t.Fatalf("a changed question must be asked again: pending %v, result %q", p3, res)
	}
}

func TestReplaySkippedAndReorderedAnswers(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	h := &onboard{name: textForm(t, "Your name?", "name"), email: textForm(t, "Your email?", "email")}
	s1, _, _ := play(t, rt, h, "", nil)

	// Skipped: no answer at all asks q0 again.
	_, p, _ := play(t, rt, h, s1, map[string]json.RawMessage{})
	if strings.Join(p, ",") != "baton:0" {
		t.Fatalf("skipped answer: pending %v", p)
	}
	// Answered early: an answer to q1, which round 1 never issued, is
	// ignored even though it is well formed.
	s2, p, _ := play(t, rt, h, s1, map[string]json.RawMessage{"baton:1": accept("email", "early@example.com"), "baton:0": accept("name", "Alice")})
	if strings.Join(p, ",") != "baton:1" {
		t.Fatalf("an answer to an unissued question was used: pending %v", p)
	}
	// Swapped: the email answer under q0's key does not fit q0 in round 3
	// (q0 is replayed from the recording, q1 gets the name form's answer).
	_, _, res := play(t, rt, h, s2, map[string]json.RawMessage{"baton:1": accept("email", "alice@example.com"), "baton:0": accept("name", "Mallory")})
	if !strings.Contains(res, "Alice") || strings.Contains(res, "Mallory") {
		t.Fatalf("a recorded answer was replaced by a later one: %q", res)
	}
}

func TestReplayValidatesAnswers(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	form := textForm(t, "Your name?", "name")
	r1 := rt.round(formCaps, "", "")
	if _, err := replayQ(r1, 0, form, func(json.RawMessage) error { return nil }); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatal(err)
	}
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	r2 := rt.round(formCaps, irr.RequestState, `{"baton:0":{"action":"accept","content":{"name":"Alice"}}}`)
	bad := errors.New("not acceptable")
	_, err = replayQ(r2, 0, form, func(json.RawMessage) error { return bad })
	var ire *InvalidResponseError
	if !errors.As(err, &ire) || !errors.Is(err, bad) || ire.Key != "baton:0" {
		t.Fatalf("err = %v", err)
	}
}

func TestRoundRedeem(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	l := newTestLedger(nil)
	ctx := context.Background()
	if err := rt.round(formCaps, "", "").Redeem(ctx, l, errReplayed); err == nil {
		t.Fatal("a request without state has nothing to redeem")
	}
	r1 := rt.round(formCaps, "", "")
	_, _ = elicitQ(r1, "confirm", confirmForm(t, "ok?"))
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	answer := `{"confirm":{"action":"accept","content":{"confirm":true}}}`
	if err := rt.round(formCaps, irr.RequestState, answer).Redeem(ctx, l, errReplayed); err != nil {
		t.Fatal(err)
	}
	// The same retry again (a replay): refused.
	if err := rt.round(formCaps, irr.RequestState, answer).Redeem(ctx, l, errReplayed); !errors.Is(err, errReplayed) {
		t.Fatalf("replayed confirmation: %v", err)
	}
}
