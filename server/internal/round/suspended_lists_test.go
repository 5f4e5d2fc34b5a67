package round

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// TestSuspendedSealsItsLists holds the issued and answered lists a state
// carries to the questions and answers of the run, in order, both when
// they fit the few Suspended lists on its own frame and past them, in
// sealed and in plaintext mode.
func TestSuspendedSealsItsLists(t *testing.T) {
	for _, plaintext := range []bool{false, true} {
		for _, n := range []int{1, suspendBuf, suspendBuf + 1, 2*suspendBuf + 3} {
			t.Run(fmt.Sprintf("plaintext=%v/n=%d", plaintext, n), func(t *testing.T) {
				rt := newRoundTrip(t, Options{})
				rt.sealer = testSealer(t, seal.SealerOptions{Plaintext: plaintext})
				form := confirmForm(t, "ok?")
				keys := make([]string, n)
				for i := range keys {
					keys[i] = fmt.Sprintf("q%d", i)
				}
				d, err := Digest(mrtr.ElicitRequest(form))
				if err != nil {
					t.Fatal(err)
				}
				ask := func(r *Round) error {
					var errs []error
					for _, k := range keys {
						_, err := elicitQ(r, k, form)
						errs = append(errs, err)
					}
					return errors.Join(errs...)
				}
				r1 := rt.round(formCaps, "", "")
				if err := ask(r1); !errors.Is(err, mrtr.ErrInputRequired) {
					t.Fatal(err)
				}
				irr, err := r1.Suspended(rt.sealer, rt.b)
				if err != nil {
					t.Fatal(err)
				}
				st, err := openBound(rt.sealer, irr.RequestState, rt.b)
				if err != nil {
					t.Fatal(err)
				}
				if len(st.Issued) != n || len(st.Answers) != 0 {
					t.Fatalf("round 1 sealed %d issued and %d answers, want %d and 0", len(st.Issued), len(st.Answers), n)
				}
				for i, is := range st.Issued {
					if is.Key != keys[i] || is.Digest != d {
						t.Fatalf("issued[%d] = %q, want %q with the question's digest", i, is.Key, keys[i])
					}
				}
				// Round 2 answers every question but the last, which is
				// asked again: the answers are sealed in order.
				answers := "{"
				for i, k := range keys[:n-1] {
					if i > 0 {
						answers += ","
					}
					answers += fmt.Sprintf("%q:{\"action\":\"accept\",\"content\":{\"confirm\":%v}}", k, i%2 == 0)
				}
				answers += "}"
				if n == 1 {
					answers = ""
				}
				r2 := rt.round(formCaps, irr.RequestState, answers)
				if err := ask(r2); !errors.Is(err, mrtr.ErrInputRequired) {
					t.Fatal(err)
				}
				irr2, err := r2.Suspended(rt.sealer, rt.b)
				if err != nil {
					t.Fatal(err)
				}
				st2, err := openBound(rt.sealer, irr2.RequestState, rt.b)
				if err != nil {
					t.Fatal(err)
				}
				if len(st2.Issued) != 1 || st2.Issued[0].Key != keys[n-1] || len(st2.Answers) != n-1 {
					t.Fatalf("round 2 sealed issued %v and %d answers, want [%s] and %d", st2.Issued, len(st2.Answers), keys[n-1], n-1)
				}
				for i, a := range st2.Answers {
					want := fmt.Sprintf("\"confirm\":%v", i%2 == 0)
					if a.Key != keys[i] || a.Digest != d || !strings.Contains(string(a.Answer), want) {
						t.Fatalf("answers[%d] = %q %s, want %q with %s", i, a.Key, a.Answer, keys[i], want)
					}
				}
			})
		}
	}
}
