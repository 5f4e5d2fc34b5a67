package legacy

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/baton-mcp/baton/mcp"
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
		if !f.add([]byte(k), mk(k)) {
			t.Fatalf("add %s refused", k)
		}
	}
	for _, k := range []string{"1", `"a"`, "3"} {
		if f.add([]byte(k), mk(k)) {
			t.Errorf("a second %s was listed", k)
		}
		if _, ok := f.get(k); !ok {
			t.Errorf("%s not found", k)
		}
	}
	f.remove([]byte("1")) // the slot frees; the others stay
	if _, ok := f.get("1"); ok {
		t.Error("1 found after its removal")
	}
	if !f.add([]byte("4"), mk("4")) || f.add([]byte("3"), mk("3")) {
		t.Error("after a removal: 4 refused, or a second 3 listed")
	}
	f.remove([]byte("3"))
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

// The waiters keep the first in their slot and the others in their map;
// each is taken once, and the keys list every one waiting.
func TestWaiters(t *testing.T) {
	var w waiters
	chs := map[string]chan reply{"1": make(chan reply), "2": make(chan reply), "3": make(chan reply)}
	for _, k := range []string{"1", "2", "3"} {
		w.set(k, chs[k])
	}
	if got := w.keys(nil); len(got) != 3 {
		t.Errorf("keys %v, want 3", got)
	}
	for _, k := range []string{"2", "1", "3"} {
		ch, ok := w.take(k)
		if !ok || ch != chs[k] {
			t.Errorf("take %s: %v %v, want its channel", k, ch, ok)
		}
		if _, ok := w.take(k); ok {
			t.Errorf("%s taken twice", k)
		}
	}
	w.set("4", chs["1"])
	if got := w.keys(nil); len(got) != 1 || got[0] != "4" {
		t.Errorf("keys %v, want [4]", got)
	}
}

// takeRaw takes a waiter by its key's bytes, from the slot or the map,
// once, and returns the key the waiter was recorded under.
func TestWaitersTakeRaw(t *testing.T) {
	var w waiters
	chs := map[string]chan reply{"10": make(chan reply), "11": make(chan reply), "12": make(chan reply)}
	if _, _, ok := w.takeRaw([]byte("10")); ok {
		t.Error("took a waiter from empty waiters")
	}
	for _, k := range []string{"10", "11", "12"} {
		w.set(k, chs[k])
	}
	for _, k := range []string{"11", "10", "12"} {
		if _, _, ok := w.takeRaw([]byte(k + "0")); ok {
			t.Errorf("took %s0, never set", k)
		}
		got, ch, ok := w.takeRaw([]byte(k))
		if !ok || ch != chs[k] || got != k {
			t.Errorf("takeRaw %s: %q %v %v, want %s and its channel", k, got, ch, ok, k)
		}
		if _, _, ok := w.takeRaw([]byte(k)); ok {
			t.Errorf("%s taken twice", k)
		}
	}
	if got := w.keys(nil); len(got) != 0 {
		t.Errorf("keys %v after every take, want none", got)
	}
}

// newPeer takes a call stream's spare peer once, set up for the call;
// another wire, or the same stream again, gets a peer of its own.
func TestNewPeerSpare(t *testing.T) {
	h := newAdapter(nil)
	defer h.Close()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	k := h.newCallStream(httptest.NewRecorder(), r, "sid", mcp.IntID(1))
	spare := k.spare
	s := &session{h: h}
	p := newPeer(s, k)
	if p != spare || p.s != s || p.w != wire(k) || k.spare != nil {
		t.Fatalf("newPeer: %p (s %p, w %v), want the spare %p set up", p, p.s, p.w, spare)
	}
	if q := newPeer(s, k); q == p || q.s != s || q.w != wire(k) {
		t.Fatal("newPeer gave the spare twice")
	}
}
