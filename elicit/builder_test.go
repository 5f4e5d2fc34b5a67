package elicit

import (
	"encoding/json"
	"testing"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// TestBuilders checks that every builder and modifier produces exactly the
// expected property definition.
func TestBuilders(t *testing.T) {
	tests := []struct {
		name  string
		field *Field
		want  string
	}{
		{"string", String("s"), `{"type":"string"}`},
		{"string full", String("s").Title("Name").Description("Your name").MinLength(1).MaxLength(50).Default("Ann"),
			`{"type":"string","title":"Name","description":"Your name","minLength":1,"maxLength":50,"default":"Ann"}`},
		{"string email", String("s").Format(FormatEmail), `{"type":"string","format":"email"}`},
		{"string uri", String("s").Format(FormatURI), `{"type":"string","format":"uri"}`},
		{"string date", String("s").Format(FormatDate).Default("2024-02-29"), `{"type":"string","format":"date","default":"2024-02-29"}`},
		{"string date-time", String("s").Format(FormatDateTime), `{"type":"string","format":"date-time"}`},
		{"number", Number("n").Minimum(-1.5).Maximum(1e3).Default(0.25),
			`{"type":"number","minimum":-1.5,"maximum":1000,"default":0.25}`},
		{"number int default", Number("n").Default(int64(7)), `{"type":"number","default":7}`},
		{"number json.Number default", Number("n").Default(json.Number("2.5")), `{"type":"number","default":2.5}`},
		{"integer", Integer("i").Title("Age").Minimum(0).Maximum(150).Default(uint8(30)),
			`{"type":"integer","title":"Age","minimum":0,"maximum":150,"default":30}`},
		{"integer float integral default", Integer("i").Default(4.0), `{"type":"integer","default":4}`},
		{"boolean", Boolean("b").Title("OK?").Default(false), `{"type":"boolean","title":"OK?","default":false}`},
		{"enum", Enum("e", "a", "b").Default("b"), `{"type":"string","enum":["a","b"],"default":"b"}`},
		{"titled enum", TitledEnum("e", Option{"#f00", "Red"}, Option{"#0f0", "Green"}).Default("#0f0"),
			`{"type":"string","oneOf":[{"const":"#f00","title":"Red"},{"const":"#0f0","title":"Green"}],"default":"#0f0"}`},
		{"multi enum", MultiEnum("m", "x", "y", "z").MinItems(1).MaxItems(2).Default([]string{"x"}),
			`{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["x","y","z"]},"default":["x"]}`},
		{"multi enum []any default", MultiEnum("m", "x", "y").Default([]any{"y", "x"}),
			`{"type":"array","items":{"type":"string","enum":["x","y"]},"default":["y","x"]}`},
		{"multi enum empty default", MultiEnum("m", "x").Default([]string{}),
			`{"type":"array","items":{"type":"string","enum":["x"]},"default":[]}`},
		{"titled multi enum", TitledMultiEnum("m", Option{"a", "A"}, Option{"b", "B"}).MaxItems(2).Default([]string{"a", "b"}),
			`{"type":"array","maxItems":2,"items":{"anyOf":[{"const":"a","title":"A"},{"const":"b","title":"B"}]},"default":["a","b"]}`},
		{"legacy enum", LegacyEnum("l", []string{"a", "b"}, []string{"Alpha", "Beta"}).Default("a"),
			`{"type":"string","enum":["a","b"],"enumNames":["Alpha","Beta"],"default":"a"}`},
		{"html chars escaped canonically", String("s").Title("<b>&"), `{"type":"string","title":"\u003cb\u003e\u0026"}`},
		{"empty title kept", String("s").Title(""), `{"type":"string","title":""}`},
		{"last modifier wins", String("s").Title("a").Title("b"), `{"type":"string","title":"b"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSchema(tt.field)
			if err != nil {
				t.Fatalf("NewSchema: %v", err)
			}
			want := `{"type":"object","properties":{` + mustJSON(t, tt.field.name) + `:` + tt.want + `}}`
			if got := mustJSON(t, s); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestRequiredOrderFollowsFields(t *testing.T) {
	s, err := NewSchema(String("b").Required(), String("a"), Boolean("c").Required())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"},"c":{"type":"boolean"}},"required":["b","c"]}`
	if got := mustJSON(t, s); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestSEP1034DefaultsForm builds the test_elicitation_sep1034_defaults form.
func TestSEP1034DefaultsForm(t *testing.T) {
	r, err := NewForm("Please review and update the form fields with defaults",
		String("name").Description("User name").Default("John Doe"),
		Integer("age").Description("User age").Default(30),
		Number("score").Description("User score").Default(95.5),
		Enum("status", "active", "inactive", "pending").Description("User status").Default("active"),
		Boolean("verified").Description("Verification status").Default(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mode":"form","message":"Please review and update the form fields with defaults","requestedSchema":{"type":"object","properties":{` +
		`"name":{"type":"string","description":"User name","default":"John Doe"},` +
		`"age":{"type":"integer","description":"User age","default":30},` +
		`"score":{"type":"number","description":"User score","default":95.5},` +
		`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","description":"Verification status","default":true}}}}`
	if got := mustJSON(t, r); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The defaults themselves must be an acceptable answer.
	if _, err := r.CheckResult([]byte(`{"action":"accept","content":{"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}}`)); err != nil {
		t.Errorf("defaults rejected: %v", err)
	}
}

// TestSEP1330EnumsForm builds the test_elicitation_sep1330_enums form.
func TestSEP1330EnumsForm(t *testing.T) {
	r, err := NewForm("Please select options from the enum fields",
		Enum("untitledSingle", "option1", "option2", "option3").Description("Select one option"),
		TitledEnum("titledSingle",
			Option{Const: "value1", Title: "First Option"},
			Option{Const: "value2", Title: "Second Option"},
			Option{Const: "value3", Title: "Third Option"},
		).Description("Select one option with titles"),
		LegacyEnum("legacyEnum", []string{"opt1", "opt2", "opt3"}, []string{"Option One", "Option Two", "Option Three"}).
			Description("Select one option (legacy)"),
		MultiEnum("untitledMulti", "option1", "option2", "option3").Description("Select multiple options").MinItems(1).MaxItems(3),
		TitledMultiEnum("titledMulti",
			Option{Const: "value1", Title: "First Choice"},
			Option{Const: "value2", Title: "Second Choice"},
			Option{Const: "value3", Title: "Third Choice"},
		).Description("Select multiple options with titles").MinItems(1).MaxItems(3),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mode":"form","message":"Please select options from the enum fields","requestedSchema":{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}}`
	if got := mustJSON(t, r); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	ok := `{"action":"accept","content":{"untitledSingle":"option2","titledSingle":"value3","legacyEnum":"opt1","untitledMulti":["option1","option3"],"titledMulti":["value2"]}}`
	if _, err := r.CheckResult([]byte(ok)); err != nil {
		t.Errorf("valid answer rejected: %v", err)
	}
}

// TestSchemaCopiesFields checks that a built schema does not change when
// the builder is modified afterwards.
func TestSchemaCopiesFields(t *testing.T) {
	values := []string{"a", "b"}
	f := MultiEnum("m", values...).Default([]string{"a"})
	s, err := NewSchema(f)
	if err != nil {
		t.Fatal(err)
	}
	before := mustJSON(t, s)
	f.Title("changed").MaxItems(0)
	values[0] = "zzz"
	if after := mustJSON(t, s); after != before {
		t.Errorf("schema changed after builder mutation:\n%s\n%s", before, after)
	}
}

func TestNilFieldModifiersDoNotPanic(t *testing.T) {
	var f *Field
	if f.Title("x").Description("x").Required().MinLength(1).MaxLength(1).Format(FormatEmail).
		Minimum(1).Maximum(1).MinItems(1).MaxItems(1).Default(1) != nil {
		t.Fatal("modifiers on nil should return nil")
	}
	if _, err := NewForm("m", f); err == nil {
		t.Fatal("nil field accepted")
	}
}

func TestEmptyFormIsValid(t *testing.T) {
	r, err := NewForm("Proceed?")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, r), `{"mode":"form","message":"Proceed?","requestedSchema":{"type":"object","properties":{}}}`; got != want {
		t.Errorf("got %s want %s", got, want)
	}
}
