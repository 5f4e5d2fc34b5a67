package mrtr

import (
	"encoding/json"
	"testing"
)

// FuzzOpen feeds arbitrary tokens to the state verifier. It must never
// panic, and it must accept nothing but tokens this sealer signed for the
// binding.
func FuzzOpen(f *testing.F) {
	s := testSealer(f, SealerOptions{})
	b := testBinding(f)
	valid := seal(f, s, b)
	f.Add(valid)
	f.Add(valid + "-TAMPERED")
	f.Fuzz(func(t *testing.T, token string) {
		st, err := s.Open(token, b)
		if err != nil {
			if st != nil {
				t.Fatal("a refused state must not be returned")
			}
			if _, ok := err.(*StateError); !ok {
				t.Fatalf("error %T is not a *StateError", err)
			}
			return
		}
		if st.Binding != b {
			t.Fatalf("accepted a state bound to %+v", st.Binding)
		}
	})
}

// FuzzCanonicalize checks that canonical JSON is a fixed point and that
// the digest ignores formatting.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[true,null,"x"]}`, `{"n":1.50e2}`, `[]`, `"s"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		c1, err := Canonicalize(json.RawMessage(in))
		if err != nil {
			return // numbers beyond float64 range
		}
		c2, err := Canonicalize(c1)
		if err != nil || string(c1) != string(c2) {
			t.Fatalf("not a fixed point: %s -> %s (%v)", c1, c2, err)
		}
	})
}
