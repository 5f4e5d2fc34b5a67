package round

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// TestAskedTableMatchesMap holds askedTable, in its scanned and its
// indexed forms, to a map fed the same sets.
func TestAskedTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, keys := range []int{1, 3, askedScanMax, askedScanMax + 1, 40} {
		var tab askedTable
		var buf [1]askedEntry
		tab.start(keys%4, &buf) // in buf (0 to 2) or allocated (3)
		want := map[string]asked{}
		for op := range 400 {
			key := "k" + strconv.Itoa(rng.IntN(keys))
			if rng.IntN(2) == 0 {
				a := asked{digest: seal.Digest{byte(op)}}
				if rng.IntN(2) == 0 {
					a.answer = []byte(strconv.Itoa(op))
				}
				tab.set(key, a)
				want[key] = a
			}
			got, ok := tab.get(key)
			w, wok := want[key]
			if ok != wok || got.digest != w.digest || string(got.answer) != string(w.answer) {
				t.Fatalf("keys=%d op %d: get(%s) = %v, %v; want %v, %v", keys, op, key, got, ok, w, wok)
			}
		}
		if len(tab.list) != len(want) {
			t.Fatalf("keys=%d: %d entries, want %d", keys, len(tab.list), len(want))
		}
	}
}

// TestManyIssuedQuestions: a round issuing a few or many questions (its
// state's Issued searched one by one or through a table) has each answered
// in the next round under its key, a question changed under an issued key
// asked again, and a question required twice issued once.
func TestManyIssuedQuestions(t *testing.T) {
	for _, n := range []int{1, 3, askedScanMax, askedScanMax + 1, 20} {
		rt := newRoundTrip(t, Options{})
		forms := make([]*elicit.Request, n)
		r1 := rt.round(formCaps, "", "")
		resp := "{"
		for i := range forms {
			forms[i] = confirmForm(t, "Question "+strconv.Itoa(i)+"?")
			key := "k" + strconv.Itoa(i)
			if _, err := elicitQ(r1, key, forms[i]); !errors.Is(err, mrtr.ErrInputRequired) {
				t.Fatalf("n=%d %s: %v", n, key, err)
			}
			if i > 0 {
				resp += ","
			}
			resp += `"` + key + `":{"action":"accept","content":{"confirm":true}}`
		}
		resp += "}"
		if err := r1.Require("k0", mrtr.ElicitRequest(forms[0])); !errors.Is(err, mrtr.ErrInputRequired) {
			t.Fatalf("n=%d: Require: %v", n, err)
		}
		irr, err := r1.Suspended(rt.sealer, rt.b)
		if err != nil {
			t.Fatal(err)
		}
		if len(irr.Questions) != n {
			t.Fatalf("n=%d: %d questions issued", n, len(irr.Questions))
		}
		r2 := rt.round(formCaps, irr.RequestState, resp)
		for i := n - 1; i >= 1; i-- {
			if res, err := elicitQ(r2, "k"+strconv.Itoa(i), forms[i]); err != nil || res.Action != elicit.ActionAccept {
				t.Fatalf("n=%d k%d: %+v, %v", n, i, res, err)
			}
		}
		if _, err := elicitQ(r2, "k0", confirmForm(t, "Another?")); !errors.Is(err, mrtr.ErrInputRequired) {
			t.Fatalf("n=%d: a changed question must be asked again: %v", n, err)
		}
	}
}

// A Suspension's questions are the round's pending list, capped: a
// question asked after the round suspended (a stray goroutine of the
// handler's) changes neither them nor their length.
func TestSuspensionQuestionsKept(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	r := rt.round(formCaps, "", "")
	if _, err := elicitQ(r, "a", confirmForm(t, "A?")); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatal(err)
	}
	irr, err := r.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elicitQ(r, "b", confirmForm(t, "B?")); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatal(err)
	}
	if len(irr.Questions) != 1 || irr.Questions[0].Key != "a" || cap(irr.Questions) != 1 {
		t.Fatalf("questions after a later ask: %+v (cap %d)", irr.Questions, cap(irr.Questions))
	}
	if p := r.Pending(); len(p) != 2 || p[1].Key != "b" {
		t.Fatalf("pending = %+v", p)
	}
}
