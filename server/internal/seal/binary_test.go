package seal

import (
	"encoding/json"
	"reflect"
	"testing"
)

func sampleState() *State {
	return &State{
		Binding: Binding{Method: "tools/call", Target: "onboard_user", Arguments: Digest{1, 2}, Principal: "alice"},
		Issued:  map[string]Digest{"q1": {3}, "x": {4}},
		Payload: json.RawMessage(`{"round":2}`),
		Answers: []Recorded{{Key: "baton:0", Digest: Digest{5}, Answer: json.RawMessage(`{"action":"accept","content":{"name":"Alice"}}`)}},
	}
}

func TestBinaryStateRoundTrip(t *testing.T) {
	for _, st := range []*State{sampleState(), {Binding: Binding{Method: "m", Target: "t"}}} {
		b := appendBinaryState(nil, st)
		var got State
		if err := readBinaryState(b, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, st) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, *st)
		}
	}
}

func TestBinaryStateRefusesDamage(t *testing.T) {
	b := appendBinaryState(nil, sampleState())
	for i := 0; i < len(b); i++ {
		var st State
		if err := readBinaryState(b[:i], &st); err == nil {
			t.Fatalf("a record cut at %d of %d bytes was accepted", i, len(b))
		}
	}
	var st State
	if err := readBinaryState(append(b, 0), &st); err == nil {
		t.Fatal("trailing bytes were accepted")
	}
	bad := append([]byte{}, b...)
	bad[0] = 9
	if err := readBinaryState(bad, &st); err == nil {
		t.Fatal("an unknown version was accepted")
	}
	// A forged huge count is refused before anything is allocated for it.
	huge := []byte{binaryVersion, 0, 0}
	huge = append(huge, make([]byte, 32)...)
	huge = append(huge, 0, 0xff, 0xff, 0xff, 0xff, 0x0f)
	if err := readBinaryState(huge, &st); err == nil {
		t.Fatal("a huge issued count was accepted")
	}
}

// FuzzReadBinaryState: the decoder of decrypted state content never panics,
// and what it accepts encodes back to an equal state.
func FuzzReadBinaryState(f *testing.F) {
	f.Add(appendBinaryState(nil, sampleState()))
	f.Add([]byte{binaryVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		var st State
		if readBinaryState(b, &st) != nil {
			return
		}
		var again State
		if err := readBinaryState(appendBinaryState(nil, &st), &again); err != nil || !reflect.DeepEqual(again, st) {
			t.Fatalf("re-encoding changed the state: %v\n%+v\n%+v", err, st, again)
		}
	})
}
