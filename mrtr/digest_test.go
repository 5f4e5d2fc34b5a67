package mrtr

import (
	"encoding/json"
	"testing"
)

func TestCanonicalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{`{}`, `{}`},
		{` { } `, `{}`},
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{`{"a": [1, 2.50, 1e3, -0.0, 1.0]}`, `{"a":[1,2.5,1000,0,1]}`},
		{`{"big":123456789012345678901234567890}`, `{"big":123456789012345678901234567890}`},
		{`{"f":0.1}`, `{"f":0.1}`},
		{`{"s":"<a&b>\u00e9","n":null,"t":true}`, `{"n":null,"s":"<a&b>é","t":true}`},
		{`{"s":"\u0041\n"}`, `{"s":"A\n"}`},
		{`{"neg":-0,"lead":-12,"e":1E2}`, `{"e":100,"lead":-12,"neg":0}`},
		{`{"o":{"z":{},"y":[]}}`, `{"o":{"y":[],"z":{}}}`},
	} {
		got, err := Canonicalize(json.RawMessage(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if string(got) != tc.want {
			t.Errorf("Canonicalize(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if _, err := Canonicalize(json.RawMessage(`{"a":`)); err == nil {
		t.Fatal("truncated JSON must be an error")
	}
	if _, err := Canonicalize(json.RawMessage(`{"a":1,"a":2}`)); err == nil {
		t.Fatal("duplicate keys are ambiguous and must be an error")
	}
}

func TestArgumentsDigest(t *testing.T) {
	d := func(s string) Digest {
		t.Helper()
		x, err := ArgumentsDigest(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	same := [][2]string{
		{`{"to":"bob","amount":25}`, `{ "amount" : 25.0, "to" : "bob" }`},
		{``, `{}`},
		{`null`, `{}`},
	}
	for _, p := range same {
		if d(p[0]) != d(p[1]) {
			t.Errorf("%s and %s should have the same digest", p[0], p[1])
		}
	}
	different := [][2]string{
		{`{"to":"bob","amount":25}`, `{"to":"bob","amount":26}`},
		{`{"to":"bob"}`, `{"to":"Bob"}`},
		{`{"a":[1,2]}`, `{"a":[2,1]}`},
		{`{"a":"1"}`, `{"a":1}`},
		{`{"a":null}`, `{}`},
	}
	for _, p := range different {
		if d(p[0]) == d(p[1]) {
			t.Errorf("%s and %s should have different digests", p[0], p[1])
		}
	}
}
