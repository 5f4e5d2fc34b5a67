package round

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mrtr"
)

// TestPendingErrorsKeepTheirKeys holds each question left pending to an
// error naming its own key, the first (held in the round's book) not
// changed by those after it.
func TestPendingErrorsKeepTheirKeys(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	r := rt.round(formCaps, "", "")
	form := confirmForm(t, "ok?")
	var errs []error
	for _, k := range []string{"first", "second", "third"} {
		_, err := elicitQ(r, k, form)
		if !errors.Is(err, mrtr.ErrInputRequired) {
			t.Fatalf("%s: %v", k, err)
		}
		errs = append(errs, err)
	}
	for i, k := range []string{"first", "second", "third"} {
		if !strings.Contains(errs[i].Error(), `"`+k+`"`) {
			t.Fatalf("error %d = %q, want it to name %q", i, errs[i], k)
		}
	}
	// Asked again while pending: the same answer (pending), the first
	// error unchanged.
	if _, err := elicitQ(r, "second", form); !errors.Is(err, mrtr.ErrInputRequired) || !strings.Contains(err.Error(), `"second"`) {
		t.Fatalf("second again: %v", err)
	}
	if !strings.Contains(errs[0].Error(), `"first"`) {
		t.Fatalf("the first error became %q", errs[0])
	}
}
