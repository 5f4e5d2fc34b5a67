package seal

import (
	"errors"
	"reflect"
	"testing"
)

func flowState() *State {
	st := sampleState()
	st.Flow = Flow{
		ID:    FlowID{0xf1, 0x0f},
		First: SpanRef{TraceID: [16]byte{1}, SpanID: [8]byte{2}, Flags: 1},
		Prev:  SpanRef{TraceID: [16]byte{1}, SpanID: [8]byte{3}, Flags: 1},
	}
	return st
}

func TestFlowRoundTrip(t *testing.T) {
	only := flowState()
	only.Flow.First = SpanRef{} // an untraced first round
	for _, st := range []*State{flowState(), only} {
		b := appendBinaryState(nil, st)
		var got State
		if err := readBinaryState(b, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(withoutRaw(&got), st) {
			t.Fatalf("binary round trip:\n got %+v\nwant %+v", got.Flow, st.Flow)
		}
		var plain State
		if err := plainBody(st).into(&plain); err != nil {
			t.Fatal(err)
		}
		if plain.Flow != st.Flow {
			t.Fatalf("plaintext round trip: got %+v, want %+v", plain.Flow, st.Flow)
		}
	}
}

func TestFlowSectionDamage(t *testing.T) {
	b := appendBinaryState(nil, flowState())
	noFlow := len(appendBinaryState(nil, sampleState()))
	// A record cut inside the flow section is refused; cut right before
	// it, it is a state without a flow, as sealed before flows existed.
	for i := noFlow + 1; i < len(b); i++ {
		var st State
		if err := readBinaryState(b[:i], &st); err == nil {
			t.Fatalf("a flow section cut at %d of %d bytes was accepted", i, len(b))
		}
	}
	var st State
	if err := readBinaryState(b[:noFlow], &st); err != nil || !st.Flow.ID.IsZero() {
		t.Fatalf("a state without a flow: %v, flow %+v", err, st.Flow)
	}
	for name, mutate := range map[string]func(b []byte){
		"unknown tag":  func(b []byte) { b[noFlow] = 7 },
		"zero id":      func(b []byte) { copy(b[noFlow+1:], make([]byte, 16)) },
		"unknown mask": func(b []byte) { b[noFlow+17] = 4 },
		"zero span":    func(b []byte) { copy(b[noFlow+18:], make([]byte, 16)) },
	} {
		bad := append([]byte{}, b...)
		mutate(bad)
		if err := readBinaryState(bad, &st); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSealDrawsFlowID: the first round's state gets a fresh flow id; a
// later round keeps the one it was given.
func TestSealDrawsFlowID(t *testing.T) {
	s := testSealer(t, SealerOptions{})
	st := &State{Binding: Binding{Method: "tools/call", Target: "t"}}
	tok, err := s.Seal(st)
	if err != nil {
		t.Fatal(err)
	}
	if st.Flow.ID.IsZero() {
		t.Fatal("no flow id drawn")
	}
	opened, err := s.Open(tok)
	if err != nil {
		t.Fatal(err)
	}
	if opened.Flow.ID != st.Flow.ID {
		t.Fatalf("opened flow %v, sealed %v", opened.Flow.ID, st.Flow.ID)
	}
	next := &State{Binding: st.Binding, Flow: opened.Flow}
	if _, err := s.Seal(next); err != nil || next.Flow.ID != st.Flow.ID {
		t.Fatalf("the next round's flow id changed: %v %v", next.Flow.ID, err)
	}
	other := &State{Binding: st.Binding}
	if _, err := s.Seal(other); err != nil || other.Flow.ID == st.Flow.ID {
		t.Fatalf("a new flow reused an id")
	}
}

func TestRefusalKind(t *testing.T) {
	for reason, want := range map[string]string{
		"expired":                       "expired",
		notThisRequest:                  "mismatch",
		"issued in the future":          "future",
		"signature does not verify":     "signature",
		"cannot be verified: no key id": "unknown_key",
		"token is 70000 bytes, over the 65536-byte limit":        "too_large",
		"encrypted content does not decrypt":                     "undecryptable",
		"malformed token: it needs three dot-separated segments": "malformed",
		"something new": "other",
	} {
		if got := RefusalKind(&StateError{Reason: reason}); got != want {
			t.Errorf("%q: %s, want %s", reason, got, want)
		}
	}
	if got := RefusalKind(errors.New("x")); got != "other" {
		t.Errorf("plain error: %s", got)
	}
}
