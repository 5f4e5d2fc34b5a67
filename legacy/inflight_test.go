package legacy

import (
	"context"
	"errors"
	"testing"
)

// The list of requests in flight keeps the first in its slot and the
// others in its map, refuses a duplicate id wherever the first copy is,
// and finds, removes and cancels each.
func TestInflight(t *testing.T) {
	var f inflight
	cancelled := map[string]bool{}
	mk := func(key string) context.CancelCauseFunc {
		return func(error) { cancelled[key] = true }
	}
	for _, k := range []string{"1", `"a"`, "3"} {
		if !f.add(k, mk(k)) {
			t.Fatalf("add %s refused", k)
		}
	}
	for _, k := range []string{"1", `"a"`, "3"} {
		if f.add(k, mk(k)) {
			t.Errorf("a second %s was listed", k)
		}
		if _, ok := f.get(k); !ok {
			t.Errorf("%s not found", k)
		}
	}
	f.remove("1") // the slot frees; the others stay
	if _, ok := f.get("1"); ok {
		t.Error("1 found after its removal")
	}
	if !f.add("4", mk("4")) || f.add("3", mk("3")) {
		t.Error("after a removal: 4 refused, or a second 3 listed")
	}
	f.remove("3")
	if _, ok := f.get("3"); ok {
		t.Error("3 found after its removal")
	}
	for _, c := range f.cancels() {
		c(errors.New("closed"))
	}
	if len(cancelled) != 2 || !cancelled[`"a"`] || !cancelled["4"] {
		t.Errorf("cancelled %v, want \"a\" and 4", cancelled)
	}
}
