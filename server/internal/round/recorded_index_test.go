package round

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// TestRecordedAnswersInAnyOrder: recorded answers are found by key however
// the handler orders its questions (in the recorded order, the expected
// position's fast path; reversed or interleaved, by a scan of a few
// answers or a table of many), each handed over once in the form recorded,
// and asking a key again with another question is refused.
func TestRecordedAnswersInAnyOrder(t *testing.T) {
	for _, n := range []int{1, 3, recordedIndexScan, recordedIndexScan + 1, 20} {
		qs := make([]mrtr.InputRequest, n)
		st := &seal.State{Round: 1}
		for i := range qs {
			qs[i] = mrtr.ElicitRequest(confirmForm(t, "Question "+strconv.Itoa(i)+"?"))
			d, err := Digest(qs[i])
			if err != nil {
				t.Fatal(err)
			}
			st.Answers = append(st.Answers, seal.Recorded{Key: "k" + strconv.Itoa(i), Digest: d, Answer: json.RawMessage(`["accept",{"i":` + strconv.Itoa(i) + `}]`)})
		}
		orders := map[string][]int{"recorded": {}, "reversed": {}, "interleaved": {}}
		for i := range n {
			orders["recorded"] = append(orders["recorded"], i)
			orders["reversed"] = append(orders["reversed"], n-1-i)
			if i%2 == 0 {
				orders["interleaved"] = append(orders["interleaved"], i)
			}
		}
		for i := 1; i < n; i += 2 {
			orders["interleaved"] = append(orders["interleaved"], i)
		}
		for name, order := range orders {
			r := New(formCaps, Responses{}, st, Options{})
			for _, i := range order {
				var got []bool
				raw, err := r.Ask(0, "k"+strconv.Itoa(i), qs[i], func(raw json.RawMessage, recorded bool) (json.RawMessage, error) {
					got = append(got, recorded)
					return nil, nil
				})
				if err != nil || string(raw) != string(st.Answers[i].Answer) || len(got) != 1 || !got[0] {
					t.Fatalf("n=%d %s: k%d = %s, %v (checks %v), want the recorded answer", n, name, i, raw, err, got)
				}
				// Asked again: the same answer, handed over again in the
				// form recorded.
				got = got[:0]
				again, err := r.Ask(0, "k"+strconv.Itoa(i), qs[i], func(raw json.RawMessage, recorded bool) (json.RawMessage, error) {
					got = append(got, recorded)
					return nil, nil
				})
				if err != nil || string(again) != string(raw) || len(got) != 1 || !got[0] {
					t.Fatalf("n=%d %s: k%d asked again = %s, %v (checks %v)", n, name, i, again, err, got)
				}
				// Another question under the same key: refused.
				if _, err := askQ(r, "k"+strconv.Itoa(i), qs[(i+1)%n]); n > 1 && (err == nil || !strings.Contains(err.Error(), "asked twice")) {
					t.Fatalf("n=%d %s: k%d asked with another question: %v", n, name, i, err)
				}
			}
			// A key the state did not record is asked.
			if _, err := askQ(r, "new", mrtr.ElicitRequest(confirmForm(t, "New?"))); !errors.Is(err, mrtr.ErrInputRequired) {
				t.Fatalf("n=%d %s: new question: %v", n, name, err)
			}
			s, err := r.Suspended(testSealer(t, seal.SealerOptions{}), testBinding(t))
			if err != nil {
				t.Fatal(err)
			}
			st2, err := openBound(testSealer(t, seal.SealerOptions{}), s.RequestState, testBinding(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(st2.Answers) != n {
				t.Fatalf("n=%d %s: next state carries %d answers", n, name, len(st2.Answers))
			}
			for j, i := range order {
				if a := st2.Answers[j]; a.Key != "k"+strconv.Itoa(i) || string(a.Answer) != string(st.Answers[i].Answer) || a.Digest != st.Answers[i].Digest {
					t.Fatalf("n=%d %s: next state's answer %d = %+v, want k%d's", n, name, j, a, i)
				}
			}
		}
	}
}

// TestRequireAfterRecordedAnswer: a recorded answer handed over and then
// required again (a URL elicitation whose accept only meant consent) is
// asked again: a later Ask of the key in the same run reports input
// required, not the recorded answer.
func TestRequireAfterRecordedAnswer(t *testing.T) {
	q := mrtr.ElicitRequest(confirmForm(t, "Done?"))
	d, err := Digest(q)
	if err != nil {
		t.Fatal(err)
	}
	st := &seal.State{Round: 1, Answers: []seal.Recorded{{Key: "a", Digest: d, Answer: json.RawMessage(`["accept",{}]`)}}}
	r := New(formCaps, Responses{}, st, Options{})
	if _, err := askQ(r, "a", q); err != nil {
		t.Fatal(err)
	}
	if err := r.Require("a", mrtr.ElicitRequest(confirmForm(t, "Other?"))); err == nil || !strings.Contains(err.Error(), "asked twice") {
		t.Fatalf("Require with another question: %v", err)
	}
	if err := r.Require("a", q); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("Require: %v", err)
	}
	if _, err := askQ(r, "a", q); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("Ask after Require: %v", err)
	}
}

// TestCheckKeyControlCharacters: CheckKey refuses exactly the keys that
// hold a control character (U+0000-U+001F, U+007F) as a rune, whatever
// else they hold (other scripts, C1 controls, bytes that are not UTF-8).
func TestCheckKeyControlCharacters(t *testing.T) {
	for _, key := range []string{"q1", "clé", "日本語", "a\u0085b", "\xff\xfe", "a b", "x\x00", "\ty", "a\x7fb", "line\n", "é\x1f"} {
		want := strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f })
		if err := CheckKey(key); (err != nil) != want {
			t.Errorf("CheckKey(%q) = %v, want refused %v", key, err, want)
		}
	}
}

// TestDigestsSharedSlot: two questions whose digests share a slot of the
// table's cache, asked in turn, get their own digests and allocate
// nothing once known (neither evicts the other on every round).
func TestDigestsSharedSlot(t *testing.T) {
	var tab Digests
	var forms []*elicit.Request
	seen := map[int]*elicit.Request{}
	for i := 0; len(forms) < 2; i++ {
		f, err := elicit.NewForm("Question "+strconv.Itoa(i)+"?", elicit.Boolean("ok").Required())
		if err != nil {
			t.Fatal(err)
		}
		slot := int(f.Digest()[0]) % digestSlots
		if prev, ok := seen[slot]; ok {
			forms = append(forms, prev, f)
		}
		seen[slot] = f
	}
	want := make([]seal.Digest, 2)
	for i, f := range forms {
		var err error
		if want[i], err = Digest(mrtr.ElicitRequest(f)); err != nil {
			t.Fatal(err)
		}
	}
	eds := [2][32]byte{forms[0].Digest(), forms[1].Digest()}
	for i := range 2 {
		if got := tab.elicit(eds[i]); got != want[i] {
			t.Fatalf("question %d: %x, want %x", i, got, want[i])
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		for i := range 2 {
			if tab.elicit(eds[i]) != want[i] {
				t.Fatal("wrong digest")
			}
		}
	}); n != 0 {
		t.Errorf("%v allocations per round for two questions sharing a slot", n)
	}
}
