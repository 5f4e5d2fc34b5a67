package elicit

import (
	"encoding/json"
	"testing"
)

// TestParseSchemaRoundTrip parses valid schemas, checks the canonical
// re-encoding, and that re-parsing it is a fixed point.
func TestParseSchemaRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // canonical form; "" means identical to in
	}{
		{"empty", `{"type":"object","properties":{}}`, ""},
		{"dialect and required kept", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, ""},
		{"property order preserved", `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"boolean"},"m":{"type":"number"}}}`, ""},
		{"required order preserved", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["b","a"]}`, ""},
		{"keyword order canonicalised",
			`{"required":["s"],"properties":{"s":{"default":"x","maxLength":3,"type":"string","title":"T"}},"type":"object"}`,
			`{"type":"object","properties":{"s":{"type":"string","title":"T","maxLength":3,"default":"x"}},"required":["s"]}`},
		{"numbers canonicalised",
			`{"type":"object","properties":{"n":{"type":"integer","minimum":1e1,"maximum":1.0E3,"default":30.0}}}`,
			`{"type":"object","properties":{"n":{"type":"integer","minimum":10,"maximum":1000,"default":30}}}`},
		{"counts canonicalised", `{"type":"object","properties":{"s":{"type":"string","minLength":2.0}}}`,
			`{"type":"object","properties":{"s":{"type":"string","minLength":2}}}`},
		{"empty required dropped", `{"type":"object","properties":{},"required":[]}`, `{"type":"object","properties":{}}`},
		{"whitespace", " {\n \"type\" : \"object\",\t\"properties\" : { } } \n", `{"type":"object","properties":{}}`},
		{"all kinds", `{"type":"object","properties":{` +
			`"s":{"type":"string","title":"S","description":"d","minLength":1,"maxLength":25,"format":"date-time","default":"2024-01-02T03:04:05Z"},` +
			`"n":{"type":"number","minimum":-0.5,"maximum":0.5,"default":0},` +
			`"i":{"type":"integer","default":-7},` +
			`"b":{"type":"boolean","default":false},` +
			`"e":{"type":"string","enum":["a","b"],"default":"a"},` +
			`"t":{"type":"string","oneOf":[{"const":"a","title":"A"}],"default":"a"},` +
			`"l":{"type":"string","enum":["a"],"enumNames":["A"]},` +
			`"m":{"type":"array","minItems":0,"maxItems":1,"items":{"type":"string","enum":["a"]},"default":[]},` +
			`"tm":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"},{"const":"b","title":"B"}]},"default":["b","a"]}}}`, ""},
		{"legacy without enumNames is a plain enum", `{"type":"object","properties":{"e":{"type":"string","enum":["a"]}}}`, ""},
		{"unicode names", `{"type":"object","properties":{"名前":{"type":"string"},"a/b~c":{"type":"string"}}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSchemaJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("parseSchemaJSON: %v", err)
			}
			want := tt.want
			if want == "" {
				want = tt.in
			}
			got := mustJSON(t, s)
			if got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			s2, err := parseSchemaJSON([]byte(got))
			if err != nil {
				t.Fatalf("re-parse: %v", err)
			}
			if again := mustJSON(t, s2); again != got {
				t.Errorf("not a fixed point:\n%s\n%s", got, again)
			}
			// Every accepted schema compiles and checks content.
			if err := s.validateContent(json.RawMessage(`{}`)); err != nil && !isValidationError(err) {
				t.Errorf("validateContent: %v", err)
			}
		})
	}
}

// TestBuiltSchemaReparses checks that builder output is accepted by the
// parser and encodes identically.
func TestBuiltSchemaReparses(t *testing.T) {
	s, err := NewSchema(
		String("s").Title("S").MinLength(1).Format(FormatEmail).Default("a@example.com").Required(),
		Number("n").Minimum(0.1).Maximum(0.3).Default(0.2),
		TitledMultiEnum("m", Option{"a", "A"}).MinItems(1).Default([]string{"a"}),
		LegacyEnum("l", []string{"x"}, []string{"X"}).Default("x"),
	)
	if err != nil {
		t.Fatal(err)
	}
	b := mustJSON(t, s)
	p, err := parseSchemaJSON([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, p); got != b {
		t.Errorf("got %s want %s", got, b)
	}
}

func TestSchemaUnmarshalJSON(t *testing.T) {
	var req Request
	in := `{"message":"m","requestedSchema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}},"required":["a"]}}`
	if err := json.Unmarshal([]byte(in), &req); err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, &req); got != in {
		t.Errorf("got %s want %s", got, in)
	}
	if _, err := req.CheckResult([]byte(`{"action":"accept","content":{"b":"x"}}`)); !isValidationError(err) {
		t.Errorf("decoded schema does not validate: %v", err)
	}

	bad := `{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"object"}}}}`
	if err := json.Unmarshal([]byte(bad), &req); err == nil {
		t.Error("nested schema accepted through json.Unmarshal")
	}

	var s Schema
	if err := json.Unmarshal([]byte(`null`), &s); err != nil {
		t.Errorf("null: %v", err)
	}
	if err := (*Schema)(nil).UnmarshalJSON([]byte(`{}`)); err == nil {
		t.Error("nil receiver accepted")
	}
}

func TestZeroSchema(t *testing.T) {
	var s Schema
	if got, want := mustJSON(t, &s), `{"type":"object","properties":{}}`; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	if err := s.validateContent(json.RawMessage(`{"x":1}`)); err != nil {
		t.Errorf("zero schema rejected content: %v", err)
	}
	var nilSchema *Schema
	if err := nilSchema.validateContent(nil); err == nil {
		t.Error("nil schema validated")
	}
	if b, err := nilSchema.MarshalJSON(); err != nil || string(b) != "null" {
		t.Errorf("nil MarshalJSON = %s, %v", b, err)
	}
}
