package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"
	"testing"
)

func TestAppendNumber(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0", "0"},
		{"-0", "0"},
		{"-0.000e7", "0"},
		{"1", "1"},
		{"1.0", "1"},
		{"1e0", "1"},
		{"10e-1", "1"},
		{"0.1e1", "1"},
		{"100E-2", "1"},
		{"-12", "-12"},
		{"1000", "1000"},
		{"1e3", "1000"},
		{"2.50", "2.5"},
		{"0.1", "0.1"},
		{"0.10000000000000000001", "0.10000000000000000001"},
		{"0.000001", "0.000001"},
		{"0.0000001", "1e-7"},
		{"123e-20", "1.23e-18"},
		{"1e20", "100000000000000000000"},
		{"1e21", "1e+21"},
		{"123456789012345678901", "123456789012345678901"},
		{"12345678901234567890123.5", "1.23456789012345678901235e+22"},
		{"12345678901234567741440", "1.234567890123456774144e+22"},
		{"1.5e300", "1.5e+300"},
		{"5e-324", "5e-324"},
		{"1e999999", "1e+999999"},
		{"-1e-999999", "-1e-999999"},
		{"1e+000000000000000000000000005", "100000"},
		{"999999999999999999e999999999999999981", "9.99999999999999999e+999999999999999998"},
		{"12.3456e2", "1234.56"},
		{"0.00123e2", "0.123"},
	} {
		got, err := AppendNumber(nil, tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("AppendNumber(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
		if again, err := AppendNumber(nil, got); err != nil || !bytes.Equal(again, got) {
			t.Errorf("AppendNumber(%s) = %s, %v: not a fixed point", got, again, err)
		}
	}
	for _, in := range []string{"", "-", "+1", "01", "-01", "1.", ".5", "1e", "1e+", "0x10", "1.5.2", "1e5e5", "Infinity", "NaN", " 1", "1 ", "1e1234567890123456789", "10e999999999999999999", "0.01e-999999999999999998"} {
		if got, err := AppendNumber(nil, []byte(in)); err == nil {
			t.Errorf("AppendNumber(%q) = %s, want an error", in, got)
		}
	}
}

// FuzzAppendNumber checks AppendNumber against math/big: a literal is
// accepted exactly when encoding/json accepts it (exponents of more than
// 18 digits aside), its canonical form has the same value and is a fixed
// point, and two literals have one form exactly when their values are
// equal.
func FuzzAppendNumber(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b string) {
		ca, ra := checkNumber(t, a)
		cb, rb := checkNumber(t, b)
		if ra == nil || rb == nil {
			return
		}
		if (ca == cb) != (ra.Cmp(rb) == 0) {
			t.Fatalf("%s -> %s and %s -> %s, but their values are equal: %v", a, ca, b, cb, ra.Cmp(rb) == 0)
		}
	})
}

// checkNumber checks the canonical form of lit and returns it with its
// value, or a nil value when lit is not a number or math/big would take
// too long over it.
func checkNumber(t *testing.T, lit string) (string, *big.Rat) {
	out, err := AppendNumber(nil, lit)
	var n json.Number
	isNumber := json.Unmarshal([]byte(lit), &n) == nil && string(n) == lit
	if err != nil {
		if isNumber && !strings.Contains(err.Error(), "exponent") {
			t.Fatalf("AppendNumber(%s): %v", lit, err)
		}
		return "", nil
	}
	if !isNumber {
		t.Fatalf("AppendNumber(%q) = %s, but it is not a JSON number", lit, out)
	}
	if again, err := AppendNumber(nil, out); err != nil || !bytes.Equal(again, out) {
		t.Fatalf("AppendNumber(%s) = %s, %v: not a fixed point", out, again, err)
	}
	if len(out) > len(lit)+25 {
		t.Fatalf("AppendNumber(%s) = %s: longer than the literal allows", lit, out)
	}
	if i := strings.IndexAny(lit, "eE"); i >= 0 && len(strings.TrimLeft(lit[i+1:], "+-0")) > 3 {
		return string(out), nil // big.Rat would take exponent-sized time
	}
	want, ok1 := new(big.Rat).SetString(lit)
	got, ok2 := new(big.Rat).SetString(string(out))
	if !ok1 || !ok2 || want.Cmp(got) != 0 {
		t.Fatalf("AppendNumber(%s) = %s: the value differs", lit, out)
	}
	return string(out), want
}

func TestSplitObject(t *testing.T) {
	ms, err := SplitObject([]byte(` {"b": [1, {"x":2}], "a" : "s\"}" , "c":null} `), "test")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Key+"="+string(m.Value))
	}
	if want := `b=[1, {"x":2}] a="s\"}" c=null`; strings.Join(got, " ") != want {
		t.Fatalf("got %s, want %s", strings.Join(got, " "), want)
	}
	for _, in := range []string{
		`{"a":1,"a":2}`,
		`{"a":1,"\u0061":2}`, // equal once unescaped
		objectOfKeys(100, 1) + `,"k99":2}`,
		`{"k50":0,` + objectOfKeys(100, 1)[1:],
	} {
		in = strings.Replace(in, "},", ",", 1)
		if _, err := SplitObject([]byte(in), "test"); err == nil || !strings.Contains(err.Error(), "duplicate key") {
			t.Errorf("%.40s…: err = %v, want a duplicate key", in, err)
		}
	}
	if _, err := SplitObject([]byte(objectOfKeys(1000, 1)), "test"); err != nil {
		t.Fatalf("distinct keys: %v", err)
	}
	for _, in := range []string{`[]`, `"x"`, `{"a":}`, ``} {
		if _, err := SplitObject([]byte(in), "test"); err == nil {
			t.Errorf("SplitObject(%s) must fail", in)
		}
	}
}

func objectOfKeys(n, val int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, val)
	}
	b.WriteByte('}')
	return b.String()
}

// FuzzSplitObject compares SplitObject with encoding/json's tokens: it
// accepts exactly the valid objects without duplicate keys (compared
// unescaped), and returns their members in order.
func FuzzSplitObject(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := SplitObject(data, "test")
		if !json.Valid(data) {
			if err == nil {
				t.Fatalf("accepted invalid JSON %q", data)
			}
			return
		}
		keys, isObject := topLevelKeys(t, data)
		dup := map[string]bool{}
		hasDup := false
		for _, k := range keys {
			hasDup = hasDup || dup[k]
			dup[k] = true
		}
		if (err == nil) != (isObject && !hasDup) {
			t.Fatalf("SplitObject(%s): err = %v, object %v, duplicates %v", data, err, isObject, hasDup)
		}
		if err != nil {
			return
		}
		if len(ms) != len(keys) {
			t.Fatalf("SplitObject(%s): %d members, want %d", data, len(ms), len(keys))
		}
		for i, m := range ms {
			if m.Key != keys[i] || !json.Valid(m.Value) {
				t.Fatalf("member %d: %q=%s, want key %q", i, m.Key, m.Value, keys[i])
			}
		}
	})
}

// topLevelKeys returns the keys of the object data, in order, unescaped
// by encoding/json, and whether data is an object.
func topLevelKeys(t *testing.T, data []byte) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok != json.Delim('{') {
		return nil, false
	}
	var keys []string
	depth := 1
	expectKey := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return keys, true
		}
		if err != nil {
			t.Fatal(err)
		}
		if depth == 1 && expectKey {
			if k, ok := tok.(string); ok {
				keys = append(keys, k)
				expectKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 1 {
			expectKey = true
		}
	}
}
