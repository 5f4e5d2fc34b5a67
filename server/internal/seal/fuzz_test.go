package seal

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/baton-mcp/baton/internal/strictjson"
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
	f.Add(valid + ".AAAA")                                           // five segments
	f.Add(valid[:strings.LastIndexByte(valid, '.')])                 // the JWS without its ciphertext
	f.Add(seal(f, testSealer(f, SealerOptions{Plaintext: true}), b)) // another key's plaintext state
	f.Fuzz(func(t *testing.T, token string) {
		st, err := openBound(s, token, b)
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

// FuzzCanonicalize checks the canonical form against jsonschema/v6's
// view of equality, which guards the "arguments already validated" memo:
// two values have one canonical form exactly when a schema {"const": a}
// accepts b and {"const": b} accepts a. Each input is also compared with
// itself respelled (re-encoded by encoding/json, its numbers written with
// extra zeros). The canonical form is valid JSON and a fixed point, and
// Canonicalize refuses only duplicate keys and exponents beyond 18 digits.
func FuzzCanonicalize(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b string) {
		ca, ok := checkCanonical(t, a)
		if !ok {
			return
		}
		if re, ok := respell(a); ok {
			if cr, ok := checkCanonical(t, re); ok && cr != ca {
				t.Fatalf("%s and its respelling %s: %s != %s", a, re, ca, cr)
			}
		}
		if cb, ok := checkCanonical(t, b); ok && !refusal(t, a)["slow"] && !refusal(t, b)["slow"] {
			sameCanonical(t, a, ca, b, cb)
		}
	})
}

// checkCanonical returns the canonical form of in, checking it, or false
// when in is not valid JSON or is refused (for an allowed reason), or is
// null (Canonicalize treats arguments of null as {}).
func checkCanonical(t *testing.T, in string) (string, bool) {
	if !json.Valid([]byte(in)) || strings.TrimSpace(in) == "null" {
		return "", false
	}
	c, err := Canonicalize(json.RawMessage(in))
	why := refusal(t, in)
	if err != nil {
		if !why["duplicate key"] && !why["exponent"] ||
			!strings.Contains(err.Error(), "duplicate key") && !strings.Contains(err.Error(), "exponent") {
			t.Fatalf("Canonicalize(%s): %v, but the reference finds %v", in, err, why)
		}
		return "", false
	}
	if why["duplicate key"] {
		t.Fatalf("Canonicalize(%s) = %s, but it has a duplicate key", in, c)
	}
	again, err := Canonicalize(c)
	if err != nil || !bytes.Equal(again, c) || !json.Valid(c) {
		t.Fatalf("not a fixed point: %s -> %s -> %s (%v)", in, c, again, err)
	}
	return string(c), true
}

// refusal says why Canonicalize may refuse valid JSON in, measured with
// encoding/json's tokens: "duplicate key" (it must), "exponent" (of 18
// digits or more: it may). It also notes "slow" for an exponent of more
// than 4 digits, which math/big (and so jsonschema) takes long over.
func refusal(t *testing.T, in string) map[string]bool {
	dec := json.NewDecoder(strings.NewReader(in))
	dec.UseNumber()
	type level struct {
		keys      map[string]bool
		expectKey bool
	}
	var open []*level
	why := map[string]bool{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return why
		}
		if err != nil {
			t.Fatalf("token: %v", err)
		}
		var top *level
		if len(open) > 0 {
			top = open[len(open)-1]
		}
		if top != nil && top.keys != nil && top.expectKey {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					why["duplicate key"] = true
				}
				top.keys[k] = true
				top.expectKey = false
				continue
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				open = append(open, &level{keys: map[string]bool{}, expectKey: true})
				continue
			case '[':
				open = append(open, &level{})
				continue
			default:
				open = open[:len(open)-1]
			}
		case json.Number:
			if i := strings.IndexAny(string(v), "eE"); i >= 0 {
				digits := len(strings.TrimLeft(string(v[i+1:]), "+-0"))
				why["exponent"] = why["exponent"] || digits >= 18
				why["slow"] = why["slow"] || digits > 4
			}
		}
		if len(open) > 0 {
			open[len(open)-1].expectKey = true
		}
	}
}

// sameCanonical compares canonical equality with jsonschema/v6's const,
// both ways, skipping values jsonschema cannot compare with themselves
// (math/big refuses exponents beyond a million).
func sameCanonical(t *testing.T, a, ca, b, cb string) {
	ab, ok1 := constAccepts(t, a, b)
	ba, ok2 := constAccepts(t, b, a)
	if !ok1 || !ok2 {
		return
	}
	if ab != ba {
		t.Fatalf("jsonschema's const is not symmetric for %s and %s", a, b)
	}
	if (ca == cb) != ab {
		t.Fatalf("%s -> %s\n%s -> %s\ncanonical forms equal: %v, jsonschema/v6 const says equal: %v", a, ca, b, cb, ca == cb, ab)
	}
}

// constAccepts reports whether the schema {"const": a}, compiled with
// jsonschema/v6, accepts b decoded as the server decodes arguments; false
// in the second result when it does not accept a itself.
func constAccepts(t *testing.T, a, b string) (accepts, ok bool) {
	av, err := jsonschema.UnmarshalJSON(strings.NewReader(a))
	if err != nil {
		t.Fatalf("decode %s: %v", a, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem:///const.json", map[string]any{"const": av}); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem:///const.json")
	if err != nil {
		t.Fatalf("compile const %s: %v", a, err)
	}
	decode := func(s string) any {
		v, err := strictjson.DecodeValue([]byte(s))
		if err != nil {
			t.Fatalf("decode %s: %v", s, err)
		}
		return v
	}
	if sch.Validate(decode(a)) != nil {
		return false, false
	}
	return sch.Validate(decode(b)) == nil, true
}

// respell returns in with the same value spelled differently: re-encoded
// by encoding/json (keys sorted, <, > and & escaped), each number with a
// zero appended to its fraction.
func respell(in string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(in))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case json.Number:
			s := string(x)
			mant, exp := s, ""
			if i := strings.IndexAny(s, "eE"); i >= 0 {
				mant, exp = s[:i], s[i:]
			}
			if !strings.Contains(mant, ".") {
				mant += "."
			}
			return json.Number(mant + "0" + exp)
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		return "", false
	}
	return string(out), true
}
