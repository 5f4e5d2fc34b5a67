package round

import (
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mrtr"
)

// TestDigestsTable checks that the server's table gives every question the
// digest Digest computes, for repeated and different questions, and after
// it was emptied for being full.
func TestDigestsTable(t *testing.T) {
	var tab Digests
	ask := func(msg string) {
		t.Helper()
		f, err := elicit.NewForm(msg, elicit.Boolean("ok").Required())
		if err != nil {
			t.Fatal(err)
		}
		ir := mrtr.ElicitRequest(f)
		want, err := Digest(ir)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got, err := digestOf(ir, &tab)
			if err != nil || got != want {
				t.Fatalf("%q: digest %x, %v; want %x", msg, got, err, want)
			}
		}
	}
	ask("a")
	ask("b")
	for i := range maxDigests + 10 {
		ask(string(rune('a'+i%26)) + string(rune('0'+i%10)) + string(rune(i)))
	}
	if len(tab.m) > maxDigests {
		t.Fatalf("table holds %d entries, over %d", len(tab.m), maxDigests)
	}
	ask("a")
}
