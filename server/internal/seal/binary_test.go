package seal

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func sampleState() *State {
	return &State{
		Binding: Binding{Method: "tools/call", Target: "onboard_user", Arguments: Digest{1, 2}, Principal: "alice"},
		Issued:  Issued{{"q1", Digest{3}}, {"x", Digest{4}}},
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
		if !reflect.DeepEqual(withoutRaw(&got), st) {
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
		// The answers copied through (raw) encode as the answers do.
		if enc, plain := appendAnswers(nil, st.Answers), appendAnswers(nil, withoutRaw(&State{Answers: slices.Clone(st.Answers)}).Answers); !bytes.Equal(enc, plain) {
			t.Fatalf("answers copied through differ from their encoding:\n%x\n%x", enc, plain)
		}
	})
}

// withoutRaw clears the record bytes readBinaryState keeps with each
// answer, for comparing with a state made by hand.
func withoutRaw(st *State) *State {
	for i := range st.Answers {
		st.Answers[i].raw = nil
	}
	return st
}

// readAnswersSlow reads n answers with binReader's methods: the reading
// binReader.answers writes out by hand.
func readAnswersSlow(r *binReader, n int) []Recorded {
	var out []Recorded
	for range n {
		k := r.str()
		d := r.digest()
		a := r.bytes()
		if k == "" && r.err == nil {
			r.err = errors.New("recorded answer without a key")
		}
		out = append(out, Recorded{Key: k, Digest: d, Answer: a})
	}
	return out
}

// FuzzAnswers: binReader.answers reads what binReader's methods read,
// fails where they fail, and leaves the same bytes unread.
func FuzzAnswers(f *testing.F) {
	st := sampleState()
	st.Answers = append(st.Answers, Recorded{Key: strings.Repeat("k", 200), Digest: Digest{9}, Answer: bytes.Repeat([]byte("a"), 300)})
	b := appendBinaryState(nil, st)
	f.Add(b, 2, true)
	f.Add([]byte{1, 'k'}, 1, false)
	f.Add([]byte{0x80, 0x80, 0x80}, 1, true)
	f.Fuzz(func(t *testing.T, b []byte, n int, all bool) {
		if n < 0 || n > 64 {
			return
		}
		fast, slow := &binReader{b: b}, &binReader{b: b}
		if all {
			fast.all, slow.all = string(b), string(b)
		}
		got, want := withoutRaw(&State{Answers: fast.answers(n)}).Answers, readAnswersSlow(slow, n)
		if (fast.err == nil) != (slow.err == nil) {
			t.Fatalf("answers: error %v, the methods' %v", fast.err, slow.err)
		}
		if fast.err != nil {
			return
		}
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, want) || !bytes.Equal(fast.b, slow.b) {
			t.Fatalf("answers:\n%+v (rest %x)\nthe methods':\n%+v (rest %x)", got, fast.b, want, slow.b)
		}
	})
}

// TestAnswersCopiedThrough: answers read from a record and recorded again
// (all, some, reordered, mixed with new ones) are written with exactly the
// bytes the encoder writes for them.
func TestAnswersCopiedThrough(t *testing.T) {
	st := sampleState()
	for i := range 5 {
		st.Answers = append(st.Answers, Recorded{Key: "k" + strconv.Itoa(i), Digest: Digest{byte(i)}, Answer: json.RawMessage(`[0,{"n":` + strconv.Itoa(i) + `}]`)})
	}
	var read State
	if err := readBinaryState(appendBinaryState(nil, st), &read); err != nil {
		t.Fatal(err)
	}
	a := read.Answers
	for _, raw := range a {
		if len(raw.raw) == 0 {
			t.Fatal("an answer read from a record has no bytes to copy through")
		}
	}
	fresh := Recorded{Key: "new", Digest: Digest{7}, Answer: json.RawMessage(`[1]`)}
	for name, answers := range map[string][]Recorded{
		"all":       a,
		"prefix":    a[:3],
		"gap":       {a[0], a[1], a[3], a[4]},
		"reordered": {a[2], a[0], a[1]},
		"new after": append(slices.Clone(a), fresh),
		"new among": {a[0], fresh, a[1], a[2]},
		"twice":     {a[0], a[0]},
	} {
		st2 := &State{Binding: st.Binding, Answers: answers}
		got := appendBinaryState(nil, st2)
		want := appendBinaryState(nil, withoutRaw(&State{Binding: st.Binding, Answers: cloneAnswers(answers)}))
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: copied through:\n%x\nencoded:\n%x", name, got, want)
		}
	}
}

func cloneAnswers(a []Recorded) []Recorded { return slices.Clone(a) }

// issuedIs reports whether is holds d under key.
func issuedIs(is Issued, key string, d Digest) bool {
	got, ok := is.Lookup(key)
	return ok && got == d
}

func TestIssuedLookup(t *testing.T) {
	is := Issued{{"a", Digest{1}}, {"b", Digest{2}}, {"a", Digest{3}}}
	if !issuedIs(is, "a", Digest{3}) || !issuedIs(is, "b", Digest{2}) {
		t.Fatalf("lookups in %v: the last under a key counts", is)
	}
	if _, ok := is.Lookup("c"); ok {
		t.Fatal("found a key never issued")
	}
	if _, ok := Issued(nil).Lookup("a"); ok {
		t.Fatal("found a key in nil")
	}
}
