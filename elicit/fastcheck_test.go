package elicit

import (
	"bytes"
	"strings"
	"testing"
)

// fastForms are the forms FuzzCheckFast checks answers against (unless
// the input's schema parses), covering every kind and bound checkFast
// reads.
func fastForms(tb testing.TB) []*Request {
	tb.Helper()
	mk := func(fields ...*Field) *Request {
		r, err := NewForm("fuzz", fields...)
		if err != nil {
			tb.Fatal(err)
		}
		return r
	}
	url, err := NewURL("fuzz", "https://example.com/")
	if err != nil {
		tb.Fatal(err)
	}
	return []*Request{
		mk(Boolean("ok").Required()),
		mk(
			String("name").MinLength(2).MaxLength(5).Required(),
			String("email").Format(FormatEmail),
			Integer("n").Minimum(-3).Maximum(10),
			Integer("big"),
			Number("x").Minimum(0.5).Maximum(99.5),
			Number("y").Minimum(-1e300),
			Boolean("ok"),
			Enum("size", "s", "m", "l"),
			TitledEnum("color", Option{"r", "Red"}, Option{"g", "Green"}).Required(),
			LegacyEnum("legacy", []string{"a", "b"}, []string{"A", "B"}),
			MultiEnum("tags", "a", "b", "c").MinItems(1).MaxItems(2),
			TitledMultiEnum("extras", Option{"x", "X"}, Option{"é", "E"}),
		),
		mk(Integer("far").Minimum(1e20), Number("near").Maximum(1e20), Integer("neg").Maximum(-0.25)),
		mk(String("ünï").MaxLength(1), String("free")),
		url,
	}
}

// FuzzCheckFast holds checkFast to the full check: whatever it accepts,
// the full check accepts with the same result, and CheckResult answers
// every input as the full check does. The seed corpus is in
// testdata/fuzz/FuzzCheckFast.
func FuzzCheckFast(f *testing.F) {
	forms := fastForms(f)
	f.Add(uint8(0), []byte(""), []byte(`{"action":"accept","content":{"ok":true}}`))
	f.Fuzz(func(t *testing.T, pick uint8, schema, data []byte) {
		req := forms[int(pick)%len(forms)]
		if s, err := parseSchemaJSON(schema); err == nil {
			req = &Request{Message: "fuzz", RequestedSchema: s}
		}
		full, ferr := req.checkResult(data)
		got, err := req.CheckResult(data)
		if (err == nil) != (ferr == nil) || err != nil && err.Error() != ferr.Error() {
			t.Fatalf("CheckResult: %v, the full check: %v", err, ferr)
		}
		fast, ok := req.checkFast(data)
		if !ok {
			return
		}
		if ferr != nil {
			t.Fatalf("checkFast accepted what the full check refuses: %v\nanswer %s", ferr, data)
		}
		for _, res := range []*Result{fast, got} {
			if !sameResult(res, full) {
				t.Fatalf("results differ: %+v, the full check %+v\nanswer %s", res, full, data)
			}
		}
	})
}

func sameResult(a, b *Result) bool {
	return a.Action == b.Action && bytes.Equal(a.Content, b.Content) && (a.Content == nil) == (b.Content == nil) && a.schema == b.schema
}

// TestCheckFast shows which answers checkFast passes (the usual ones) and
// that every answer it passes on to the full check gets the same result
// or refusal as before, named by the same keyword.
func TestCheckFast(t *testing.T) {
	forms := fastForms(t)
	form, url := forms[1], forms[len(forms)-1]
	tests := []struct {
		name    string
		req     *Request
		in      string
		fast    bool   // checkFast decides it
		keyword string // the refusal's ValidationError keyword; "" accepted
		err     string // or a plain error containing this
	}{
		{"boolean", forms[0], `{"action":"accept","content":{"ok":true}}`, true, "", ""},
		{"spaces", forms[0], " {\n\t\"content\" : { \"ok\" : false } ,\r\"action\" : \"accept\" } ", true, "", ""},
		{"decline", forms[0], `{"action":"decline"}`, true, "", ""},
		{"cancel with null content", forms[0], `{"action":"cancel","content":null}`, true, "", ""},
		{"every kind", form, `{"action":"accept","content":{"name":"Ann","n":-3,"big":123456789012345,"x":1,"y":-7,"ok":false,"size":"m","color":"g","legacy":"b","tags":["c","a"],"extras":["é"]}}`, true, "", ""},
		{"code points", forms[3], `{"action":"accept","content":{"ünï":"é","free":"日本"}}`, true, "", ""},
		{"url accept", url, `{"action":"accept"}`, true, "", ""},

		{"meta goes to the full check", forms[0], `{"action":"accept","content":{"ok":true},"_meta":{}}`, false, "", ""},
		{"format goes to the full check", form, `{"action":"accept","content":{"name":"Ann","color":"r","email":"a@b.co"}}`, false, "", ""},
		{"fraction goes to the full check", form, `{"action":"accept","content":{"name":"Ann","color":"r","x":2.5}}`, false, "", ""},
		{"escape goes to the full check", form, `{"action":"accept","content":{"name":"A\u006en","color":"r"}}`, false, "", ""},
		{"undefined property goes to the full check", forms[0], `{"action":"accept","content":{"ok":true,"other":1}}`, false, "", ""},
		{"16 digits go to the full check", form, `{"action":"accept","content":{"name":"Ann","color":"r","big":1234567890123456}}`, false, "", ""},

		{"missing required", forms[0], `{"action":"accept","content":{}}`, false, "required", ""},
		{"absent content, required", forms[0], `{"action":"accept"}`, false, "required", ""},
		{"wrong type", forms[0], `{"action":"accept","content":{"ok":"yes"}}`, false, "type", ""},
		{"too short", form, `{"action":"accept","content":{"name":"A","color":"r"}}`, false, "minLength", ""},
		{"too long in code points", forms[3], `{"action":"accept","content":{"ünï":"éé"}}`, false, "maxLength", ""},
		{"below minimum", form, `{"action":"accept","content":{"name":"Ann","color":"r","n":-4}}`, false, "minimum", ""},
		{"above maximum", form, `{"action":"accept","content":{"name":"Ann","color":"r","n":11}}`, false, "maximum", ""},
		{"below a fractional minimum", form, `{"action":"accept","content":{"name":"Ann","color":"r","x":0}}`, false, "minimum", ""},
		{"above a fractional maximum", forms[2], `{"action":"accept","content":{"neg":0}}`, false, "maximum", ""},
		{"beyond a huge minimum", forms[2], `{"action":"accept","content":{"far":5}}`, false, "minimum", ""},
		{"not an option", form, `{"action":"accept","content":{"name":"Ann","color":"b"}}`, false, "oneOf", ""},
		{"not an enum value", form, `{"action":"accept","content":{"name":"Ann","color":"r","size":"xl"}}`, false, "enum", ""},
		{"selected twice", form, `{"action":"accept","content":{"name":"Ann","color":"r","tags":["a","a"]}}`, false, "uniqueItems", ""},
		{"too many selections", form, `{"action":"accept","content":{"name":"Ann","color":"r","tags":["a","b","c"]}}`, false, "maxItems", ""},
		{"too few selections", form, `{"action":"accept","content":{"name":"Ann","color":"r","tags":[]}}`, false, "minItems", ""},
		{"duplicate property", forms[0], `{"action":"accept","content":{"ok":true,"ok":false}}`, false, "", `duplicate key "ok"`},
		{"duplicate action", forms[0], `{"action":"accept","action":"accept","content":{"ok":true}}`, false, "", `duplicate key "action"`},
		{"trailing data", forms[0], `{"action":"accept","content":{"ok":true}}x`, false, "", "invalid result"},
		{"unknown action", forms[0], `{"action":"maybe"}`, false, "", "action must be"},
		{"content on decline", forms[0], `{"action":"decline","content":{"ok":true}}`, false, "", "content is only allowed"},
		{"content on a url accept", url, `{"action":"accept","content":{}}`, false, "", "must not carry content"},
		{"null value", forms[0], `{"action":"accept","content":{"ok":null}}`, false, "content", ""},
		{"leading zero", form, `{"action":"accept","content":{"name":"Ann","color":"r","n":01}}`, false, "", "invalid result"},
		{"invalid UTF-8", forms[3], "{\"action\":\"accept\",\"content\":{\"free\":\"\xff\"}}", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.in)
			if _, ok := tt.req.checkFast(data); ok != tt.fast {
				t.Fatalf("checkFast decided: %v, want %v", ok, tt.fast)
			}
			res, err := tt.req.CheckResult(data)
			full, ferr := tt.req.checkResult(data)
			switch {
			case tt.keyword == "" && tt.err == "":
				if err != nil || ferr != nil {
					t.Fatalf("refused: %v (the full check: %v)", err, ferr)
				}
				if !sameResult(res, full) {
					t.Fatalf("results differ: %+v, the full check %+v", res, full)
				}
			case err == nil:
				t.Fatalf("accepted %+v", res)
			case tt.keyword != "":
				verrs := validationErrors(err)
				if len(verrs) == 0 || verrs[0].Keyword != tt.keyword {
					t.Fatalf("got %v, want keyword %q", err, tt.keyword)
				}
			case !strings.Contains(err.Error(), tt.err):
				t.Fatalf("got %v, want %q", err, tt.err)
			}
			if (err == nil) != (ferr == nil) || err != nil && err.Error() != ferr.Error() {
				t.Fatalf("CheckResult: %v, the full check: %v", err, ferr)
			}
		})
	}
}

// TestCheckFastAllocs shows what the fast path saves: an accepted form
// answer costs one allocation (its Result).
func TestCheckFastAllocs(t *testing.T) {
	req := fastForms(t)[0]
	data := []byte(`{"action":"accept","content":{"ok":true}}`)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := req.CheckResult(data); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Fatalf("CheckResult of a plain answer: %v allocations, want 1", n)
	}
}
