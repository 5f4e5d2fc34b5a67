package seal

import (
	"encoding/json"
	"strings"
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
		{`{"big":123456789012345678901234567890}`, `{"big":1.2345678901234567890123456789e+29}`},
		{`{"huge":1e999999,"tiny":-1E-999999}`, `{"huge":1e+999999,"tiny":-1e-999999}`},
		{`[0.1, 0.10000000000000000001, 12345678901234567890123.5]`, `[0.1,0.10000000000000000001,1.23456789012345678901235e+22]`},
		{`["\u00e9", "\/", "\ud83d\ude00", "\ud800", "\b\f\u001F\u2028", "\"\\"]`, `["é","/","😀","�","\u0008\u000c\u001f\u2028","\"\\"]`},
		{`{"é":1,"z":2,"Z":3,"\u0000":4}`, `{"\u0000":4,"Z":3,"z":2,"é":1}`},
		{"[\"\xff\"]", "[\"\ufffd\"]"},
		{`{"f":0.1}`, `{"f":0.1}`},
		{`{"s":"<a&b>\u00e9","n":null,"t":true}`, `{"n":null,"s":"<a&b>é","t":true}`},
		{`{"s":"\u0041\n"}`, `{"s":"A\n"}`},
		{`{"neg":-0,"lead":-12,"e":1E2}`, `{"e":100,"lead":-12,"neg":0}`},
		{`{"o":{"z":{},"y":[]}}`, `{"o":{"y":[],"z":{}}}`},
		{` [ {"b":1,"a":2} , [ {"d":1,"c":[{"f":1,"e":{}}, 7]} ], 3, {} ] `, `[{"a":2,"b":1},[{"c":[{"e":{},"f":1},7],"d":1}],3,{}]`},
		{`{"b":[[],{}],"a":{"y":[1,{"z":"\u0041"}],"x":-1.0}}`, `{"a":{"x":-1,"y":[1,{"z":"A"}]},"b":[[],{}]}`},
		{`"s"`, `"s"`},
		{`1.50`, `1.5`},
		{`[]`, `[]`},
		{`true`, `true`},
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
	for _, dup := range []string{`{"a":1,"a":2}`, `{"a":1,"\u0061":1}`, `{"x":[{"b":{},"c":0,"b":{}}]}`, `{"\ud800":1,"\udc00":1}`} {
		if _, err := Canonicalize(json.RawMessage(dup)); err == nil || !strings.Contains(err.Error(), "duplicate key") {
			t.Errorf("Canonicalize(%s) = %v: duplicate keys are ambiguous and must be an error", dup, err)
		}
	}
	// Depth costs no stack: the value is read and written without
	// recursion (json.Valid allows 10,000 levels).
	deep := strings.Repeat(`{"a":[`, 4999) + strings.Repeat(`]}`, 4999)
	got, err := Canonicalize(json.RawMessage(deep))
	if err != nil || string(got) != deep {
		t.Fatalf("deep value: %v", err)
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
		{`{"n":[1,1.0,1e0,10e-1,0.1e1]}`, `{"n":[1,1,1,1,1]}`},
		{`{"n":-0}`, `{"n":0.0}`},
		{`{"s":"\u00e9\/"}`, `{"s":"é/"}`},
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
		{`{"n":12345678901234567890123.5}`, `{"n":12345678901234567741440}`},
		{`{"n":0.1}`, `{"n":0.10000000000000000001}`},
		{`{"n":1e400}`, `{"n":1e401}`},
		{`{"n":9007199254740993}`, `{"n":9007199254740992}`},
	}
	for _, p := range different {
		if d(p[0]) == d(p[1]) {
			t.Errorf("%s and %s should have different digests", p[0], p[1])
		}
	}
}
