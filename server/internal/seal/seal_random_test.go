package seal

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestSealRandomness: the id, a new flow's id and the nonce, read in one
// piece, are distinct parts of it and fresh on every state; a flow that
// has an id keeps it; each state opens with its own id.
func TestSealRandomness(t *testing.T) {
	s := testSealer(t, SealerOptions{})
	b := testBinding(t)
	seen := map[string]bool{}
	var flow FlowID
	for i := range 50 {
		st := &State{Binding: b, Issued: Issued{{"confirm", Digest{1}}}}
		if i > 0 {
			st.Flow.ID = flow
		}
		tok, err := s.Seal(st)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			flow = st.Flow.ID
			if flow.IsZero() {
				t.Fatal("a new flow got no id")
			}
		} else if st.Flow.ID != flow {
			t.Fatalf("state %d: flow id changed", i)
		}
		c, _, _, err := s.verify(tok)
		if err != nil {
			t.Fatal(err)
		}
		nt, err := base64.RawURLEncoding.DecodeString(c.Enc)
		if err != nil || len(nt) != 12+16 {
			t.Fatalf("enc %q: %d bytes, %v", c.Enc, len(nt), err)
		}
		nonce := string(nt[:12])
		id, err := base64.RawURLEncoding.DecodeString(st.ID)
		if err != nil || len(id) != 12 {
			t.Fatalf("id %q: %v", st.ID, err)
		}
		for _, v := range []string{"id:" + string(id), "nonce:" + nonce, "cross:" + string(id)} {
			if seen[v] {
				t.Fatalf("state %d: %q repeats", i, v)
			}
			seen[v] = true
		}
		if seen["cross:"+nonce] || string(id) == nonce || strings.Contains(string(flow[:]), nonce) {
			t.Fatalf("state %d: the nonce repeats the id or the flow id", i)
		}
		opened, err := s.Open(tok)
		if err != nil || opened.ID != st.ID || opened.Flow.ID != flow {
			t.Fatalf("state %d: open: %+v, %v", i, opened, err)
		}
	}
}
