package round

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/baton-mcp/baton/mrtr"
)

// script is a blocking-style run that asks every question in turn, going
// on past unanswered ones (so several are issued in one round).
type script struct {
	rt roundTrip
	qs map[string]mrtr.InputRequest // by name
}

func newScript(t *testing.T, names ...string) script {
	s := script{rt: newRoundTrip(t, Options{}), qs: map[string]mrtr.InputRequest{}}
	for _, n := range names {
		s.qs[n] = textForm(t, n+"?", "v")
	}
	return s
}

// run asks the named questions in order at positions 0, 1, … with the state
// token and answers (by replay key). It returns what each call got ("=" and
// the answer's value, "?" for asked, "order" for ErrReplayOrder), the next
// state (when something was asked) and Suspended's error.
func (s script) run(token string, answers map[string]string, order ...string) (got []string, next string, suspendErr error) {
	t := s.rt.t
	t.Helper()
	var raw []string
	for k, v := range answers {
		raw = append(raw, fmt.Sprintf("%q:%s", k, accept("v", v)))
	}
	r := s.rt.round(formCaps, token, "{"+strings.Join(raw, ",")+"}")
	for pos, name := range order {
		ans, err := replayQ(r, pos, s.qs[name], func(json.RawMessage) error { return nil })
		switch {
		case err == nil:
			var a struct{ Content struct{ V string } }
			if err := json.Unmarshal(ans, &a); err != nil {
				t.Fatal(err)
			}
			got = append(got, "="+a.Content.V)
		case errors.Is(err, mrtr.ErrInputRequired):
			got = append(got, "?")
		case errors.Is(err, ErrReplayOrder):
			got = append(got, "order")
		default:
			t.Fatalf("call %d (%s): %v", pos, name, err)
		}
	}
	irr, err := r.Suspended(s.rt.sealer, s.rt.b)
	if err == nil {
		next = irr.RequestState
	}
	return got, next, err
}

func TestReplayOrder(t *testing.T) {
	s := newScript(t, "a", "b", "c")
	// Round 1 issues a and b together (two goroutines, or one that goes on
	// past an unanswered call).
	got, issued, _ := s.run("", nil, "a", "b")
	if strings.Join(got, " ") != "? ?" {
		t.Fatalf("round 1: %v", got)
	}
	answers := map[string]string{"baton:0": "A", "baton:1": "B"}

	// The same order: both answers, each to its own question.
	got, _, err := s.run(issued, answers, "a", "b", "c")
	if strings.Join(got, " ") != "=A =B ?" || err != nil {
		t.Fatalf("same order: %v, %v", got, err)
	}
	// The opposite order: b meets position 1, then a position 0, which
	// comes before; the run fails, and keeps failing, and no answer is
	// handed to the wrong question.
	got, _, err = s.run(issued, answers, "b", "a", "c")
	if strings.Join(got, " ") != "? order order" || !errors.Is(err, ErrReplayOrder) {
		t.Fatalf("opposite order: %v, Suspended: %v", got, err)
	}
	if !strings.Contains(err.Error(), "different order") || !strings.Contains(err.Error(), "goroutines") {
		t.Fatalf("the error does not say what went wrong: %v", err)
	}

	// seal.Recorded answers are in the script too: a and b answered in round 2,
	// c asked; round 3 reaching them as b, a fails.
	_, recorded, _ := s.run(issued, answers, "a", "b", "c")
	got, _, err = s.run(recorded, map[string]string{"baton:2": "C"}, "a", "b", "c")
	if strings.Join(got, " ") != "=A =B =C" || err == nil {
		// err: nothing left to ask, so Suspended refuses; the answers matter.
		t.Fatalf("round 3 in order: %v, %v", got, err)
	}
	got, _, err = s.run(recorded, map[string]string{"baton:2": "C"}, "b", "a", "c")
	if strings.Join(got, " ") != "? order order" || !errors.Is(err, ErrReplayOrder) {
		t.Fatalf("round 3 reordered: %v, %v", got, err)
	}
}

// Questions added or dropped between rounds (a new deploy, a condition
// that changed) are asked again or forgotten, never an order failure;
// repeated questions match in turn.
func TestReplayOrderAddedAndDropped(t *testing.T) {
	s := newScript(t, "a", "b", "c", "sure", "x")
	_, st, _ := s.run("", nil, "a", "sure", "b", "sure")
	answers := map[string]string{"baton:0": "A", "baton:1": "S1", "baton:2": "B", "baton:3": "S2"}
	_, recorded, _ := s.run(st, answers, "a", "sure", "b", "sure", "c")
	for _, tc := range []struct {
		name  string
		order []string
		want  string
	}{
		{"dropped first", []string{"sure", "b", "sure", "c"}, "? ? ? ?"},
		{"dropped middle", []string{"a", "sure", "sure", "c"}, "=A =S1 ? ?"},
		{"added first", []string{"x", "a", "sure", "b", "sure", "c"}, "? ? ? ? ? ?"},
		{"added last", []string{"a", "sure", "b", "sure", "x", "c"}, "=A =S1 =B =S2 ? ?"},
		{"repeated", []string{"a", "sure", "b", "sure", "sure", "c"}, "=A =S1 =B =S2 ? ?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := s.run(recorded, nil, tc.order...)
			if strings.Join(got, " ") != tc.want || err != nil {
				t.Fatalf("got %v (Suspended: %v), want %s", got, err, tc.want)
			}
		})
	}
	// A swap among the repeated ones: sure, a … reaches position 1 before 0.
	if got, _, err := s.run(recorded, nil, "sure", "a"); !errors.Is(err, ErrReplayOrder) {
		t.Fatalf("swapped: %v, %v", got, err)
	}
}

// A Round is shared by the goroutines of one handler: keyed questions,
// saved state, pending questions and the blocking-style calls may all be
// used at once (run with -race).
func TestRoundConcurrentUse(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	r := rt.round(formCaps, "", "")
	var wg sync.WaitGroup
	const n = 16
	for i := range n {
		wg.Go(func() {
			if _, err := askQ(r, fmt.Sprintf("k%d", i), textForm(t, fmt.Sprintf("question %d?", i), "v")); !errors.Is(err, mrtr.ErrInputRequired) {
				t.Errorf("Ask %d: %v", i, err)
			}
			if err := r.SaveState(i); err != nil {
				t.Error(err)
			}
			_ = r.Pending()
			if err := requireQ(r, fmt.Sprintf("k%d", i), textForm(t, fmt.Sprintf("question %d?", i), "v")); !errors.Is(err, mrtr.ErrInputRequired) {
				t.Errorf("Require %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(r.Pending()) != n {
		t.Fatalf("%d pending, want %d", len(r.Pending()), n)
	}
	irr, err := r.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	st, err := openBound(rt.sealer, irr.RequestState, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Issued) != n {
		t.Fatalf("the state issues %d questions, want %d", len(st.Issued), n)
	}
}
