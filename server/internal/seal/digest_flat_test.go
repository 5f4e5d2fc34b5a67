package seal

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzFlatCanonical holds appendFlat, the hand-written path for flat
// objects, to the general canonicalizer (json.Valid, then read and
// write): whatever appendFlat takes, the general path takes too and
// writes the same bytes; what it does not take it leaves alone.
func FuzzFlatCanonical(f *testing.F) {
	f.Fuzz(func(t *testing.T, in string) {
		flatCanonicalAgrees(t, []byte(in))
	})
}

func flatCanonicalAgrees(t *testing.T, in []byte) {
	t.Helper()
	tr := bytes.TrimSpace(in)
	if len(tr) == 0 {
		return
	}
	prefix := []byte("prefix")
	got, ok := appendFlat(bytes.Clone(prefix), tr)
	if !ok {
		if !bytes.Equal(got, prefix) {
			t.Fatalf("appendFlat(%q) refused it but appended %q", tr, got[len(prefix):])
		}
		return
	}
	want, err := appendCanonicalAll(bytes.Clone(prefix), tr)
	if err != nil {
		t.Fatalf("appendFlat(%q) = %q, but the general path refuses it: %v", tr, got[len(prefix):], err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("appendFlat(%q) = %q, the general path %q", tr, got[len(prefix):], want[len(prefix):])
	}
}

// TestFlatCanonical checks which values appendFlat takes (the rest go to
// the general path) and that it agrees with the general path on them.
func TestFlatCanonical(t *testing.T) {
	many := objectOfKeys(maxFlatMembers, "1")
	for _, tc := range []struct {
		in   string
		flat bool
	}{
		{`{}`, true},
		{`{ }`, true},
		{`{"id":42}`, true},
		{` {"b" : 1 , "a":[ 1, "x y" ,true,null, false ] } `, true},
		{`{"to":"bob","amount":25,"memo":"rent","tags":["a","b"]}`, true},
		{"{\"a\":[],\"b\":[ ],\"c\":-7,\"d\":\"\x7f~ \"}", true},
		{`{"d":"\u007f"}`, false},
		{`{"n":123456789012345678901}`, true},
		{many, true},
		{objectOfKeys(maxFlatMembers+1, "1"), false},
		{`{"n":1234567890123456789012}`, false}, // 22 digits: the general path writes it in its exact form
		{`{"n":0,"m":[0, 0 ,1]}`, true},
		{`{"n":-0}`, false},
		{`{"n":00}`, false},
		{`{"n":0.0}`, false},
		{`{"n":0e1}`, false},
		{`{"n":1.5}`, false},
		{`{"n":1e2}`, false},
		{`{"n":01}`, false},
		{`{"n":-}`, false},
		{`{"s":"a\"b"}`, false},
		{`{"s":"é"}`, false},
		{`{"\u0061":1}`, false},
		{`{"a":1,"a":2}`, false},
		{`{"b":1,"a":2,"b":3}`, false},
		{`{"o":{}}`, false},
		{`{"a":[[1]]}`, false},
		{`{"a":[{}]}`, false},
		{`{"a":tru}`, false},
		{`{"a":truex}`, false},
		{`{"a":1,}`, false},
		{`{"a":1 "b":2}`, false},
		{`{"a":1}}`, false},
		{`{"a":1`, false},
		{`{"a":[1,]}`, false},
		{`{"a":[1 2]}`, false},
		{`{"a"}`, false},
		{`{,}`, false},
		{`[1]`, false},
		{`"s"`, false},
		{`{"a":1} x`, false},
	} {
		_, ok := appendFlat(nil, []byte(strings.TrimSpace(tc.in)))
		if ok != tc.flat {
			t.Errorf("appendFlat(%s) took it: %v, want %v", tc.in, ok, tc.flat)
		}
		flatCanonicalAgrees(t, []byte(tc.in))
	}
}

// TestArgumentsDigestFlatAllocs: the usual arguments are digested
// without an allocation.
func TestArgumentsDigestFlatAllocs(t *testing.T) {
	args := []byte(`{"to":"bob","amount":25,"memo":"rent","tags":["a","b"]}`)
	if n := testing.AllocsPerRun(100, func() { _, _ = ArgumentsDigest(args) }); n != 0 {
		t.Errorf("ArgumentsDigest: %v allocations, want 0", n)
	}
}
