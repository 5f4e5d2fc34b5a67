package elicit

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestBuilderRuleViolations checks that each rule is enforced at build
// time, with an error naming the property.
func TestBuilderRuleViolations(t *testing.T) {
	tests := []struct {
		name     string
		fields   []*Field
		property string
		reason   string
	}{
		{"minLength on boolean", []*Field{Boolean("b").MinLength(1)}, "b", "minLength does not apply to a boolean property"},
		{"maxLength on number", []*Field{Number("n").MaxLength(1)}, "n", "maxLength does not apply to a number property"},
		{"format on enum", []*Field{Enum("e", "a").Format(FormatEmail)}, "e", "format does not apply to a single-select enum property"},
		{"minimum on string", []*Field{String("s").Minimum(1)}, "s", "minimum does not apply to a string property"},
		{"maximum on multi", []*Field{MultiEnum("m", "a").Maximum(1)}, "m", "maximum does not apply to a multi-select enum property"},
		{"minItems on string", []*Field{String("s").MinItems(1)}, "s", "minItems does not apply to a string property"},
		{"maxItems on titled enum", []*Field{TitledEnum("t", Option{"a", "A"}).MaxItems(1)}, "t", "maxItems does not apply to a titled single-select enum property"},
		{"minLength on integer", []*Field{Integer("i").MinLength(1)}, "i", "minLength does not apply to an integer property"},
		{"format on integer", []*Field{Integer("i").Format(FormatEmail)}, "i", "format does not apply to an integer property"},
		{"negative minLength", []*Field{String("s").MinLength(-1)}, "s", "minLength must be between 0 and 2^53"},
		{"NaN minimum", []*Field{Number("n").Minimum(math.NaN())}, "n", "minimum must be a finite number"},
		{"Inf maximum", []*Field{Number("n").Maximum(math.Inf(1))}, "n", "maximum must be a finite number"},
		{"unknown format", []*Field{String("s").Format("hostname")}, "s", `format "hostname" is not allowed`},
		{"minLength > maxLength", []*Field{String("s").MinLength(5).MaxLength(4)}, "s", "minLength 5 is greater than maxLength 4"},
		{"minimum > maximum", []*Field{Integer("i").Minimum(10).Maximum(1)}, "i", "minimum 10 is greater than maximum 1"},
		{"minItems > maxItems", []*Field{MultiEnum("m", "a", "b").MinItems(2).MaxItems(1)}, "m", "minItems 2 is greater than maxItems 1"},
		{"string default type", []*Field{String("s").Default(1)}, "s", "default must be a string, got int"},
		{"number default type", []*Field{Number("n").Default("1")}, "n", "default must be a number, got string"},
		{"number default NaN", []*Field{Number("n").Default(math.NaN())}, "n", "default must be a finite number"},
		{"bad json.Number default", []*Field{Number("n").Default(jsonNumber("x"))}, "n", "default must be a number"},
		{"boolean default type", []*Field{Boolean("b").Default("true")}, "b", "default must be a boolean, got string"},
		{"nil default", []*Field{Boolean("b").Default(nil)}, "b", "default must be a boolean, got nil"},
		{"multi default type", []*Field{MultiEnum("m", "a").Default("a")}, "m", "default must be a list of strings, got string"},
		{"multi default []any non-string", []*Field{MultiEnum("m", "a").Default([]any{"a", 1})}, "m", "default must be a list of strings"},
		{"integer default fractional", []*Field{Integer("i").Default(1.5)}, "i", "default 1.5 is not an integer"},
		{"default below minimum", []*Field{Number("n").Minimum(1).Default(0)}, "n", "default 0 is less than minimum 1"},
		{"default above maximum", []*Field{Integer("i").Maximum(1).Default(2)}, "i", "default 2 is greater than maximum 1"},
		{"default too short", []*Field{String("s").MinLength(3).Default("ab")}, "s", `default "ab" is shorter than minLength 3`},
		{"default too long (code points)", []*Field{String("s").MaxLength(2).Default("héé")}, "s", `default "héé" is longer than maxLength 2`},
		{"default bad email", []*Field{String("s").Format(FormatEmail).Default("nope")}, "s", `default "nope" is not a valid email address`},
		{"default bad date", []*Field{String("s").Format(FormatDate).Default("2023-02-29")}, "s", `default "2023-02-29" is not a valid date`},
		{"default bad date-time", []*Field{String("s").Format(FormatDateTime).Default("2024-01-01")}, "s", `is not a valid date-time`},
		{"default relative uri", []*Field{String("s").Format(FormatURI).Default("/relative")}, "s", `is not a valid absolute URI`},
		{"enum default not member", []*Field{Enum("e", "a", "b").Default("c")}, "e", `default "c" is not one of the options`},
		{"titled default not member", []*Field{TitledEnum("t", Option{"a", "A"}).Default("A")}, "t", `default "A" is not one of the options`},
		{"legacy default not member", []*Field{LegacyEnum("l", []string{"a"}, []string{"A"}).Default("b")}, "l", `default "b" is not one of the options`},
		{"multi default not member", []*Field{MultiEnum("m", "a").Default([]string{"a", "b"})}, "m", `default value "b" is not one of the options`},
		{"titled multi default not member", []*Field{TitledMultiEnum("m", Option{"a", "A"}).Default([]string{"x"})}, "m", `default value "x" is not one of the options`},
		{"multi default duplicate", []*Field{MultiEnum("m", "a").Default([]string{"a", "a"})}, "m", `default value "a" is listed more than once`},
		{"multi default below minItems", []*Field{MultiEnum("m", "a", "b").MinItems(2).Default([]string{"a"})}, "m", "default has 1 items, fewer than minItems 2"},
		{"multi default above maxItems", []*Field{MultiEnum("m", "a", "b").MaxItems(1).Default([]string{"a", "b"})}, "m", "default has 2 items, more than maxItems 1"},
		{"empty enum", []*Field{Enum("e")}, "e", "enum must list at least one value"},
		{"empty multi enum", []*Field{MultiEnum("m")}, "m", "enum must list at least one value"},
		{"empty enum value", []*Field{Enum("e", "a", "")}, "e", "enum values must not be empty"},
		{"duplicate enum value", []*Field{Enum("e", "a", "a")}, "e", `enum value "a" is listed more than once`},
		{"empty oneOf", []*Field{TitledEnum("t")}, "t", "oneOf must list at least one option"},
		{"empty anyOf", []*Field{TitledMultiEnum("t")}, "t", "items.anyOf must list at least one option"},
		{"option without const", []*Field{TitledEnum("t", Option{Title: "A"})}, "t", "oneOf[0] needs a non-empty const"},
		{"option without title", []*Field{TitledMultiEnum("t", Option{Const: "a"})}, "t", "items.anyOf[0] needs a non-empty title"},
		{"duplicate option const", []*Field{TitledEnum("t", Option{"a", "A"}, Option{"a", "B"})}, "t", `oneOf const "a" is listed more than once`},
		{"enumNames length", []*Field{LegacyEnum("l", []string{"a", "b"}, []string{"A"})}, "l", "enumNames has 1 entries but enum has 2"},
		{"enumNames missing", []*Field{LegacyEnum("l", []string{"a"}, nil)}, "l", "enumNames has 0 entries but enum has 1"},
		{"duplicate property", []*Field{String("x"), Boolean("x")}, "x", "duplicate property name"},
		{"empty name", []*Field{String("")}, "", "property name must not be empty"},
		{"nil field", []*Field{nil}, "", "field 0 is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSchema(tt.fields...)
			assertSchemaError(t, err, tt.property, tt.reason)
			_, err = NewForm("m", tt.fields...)
			assertSchemaError(t, err, tt.property, tt.reason)
		})
	}
}

// assertSchemaError checks that err joins a *SchemaError for property
// whose reason contains reason.
func assertSchemaError(t *testing.T, err error, property, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %q on %q, got nil", reason, property)
	}
	var first *SchemaError
	if !errors.As(err, &first) {
		t.Fatalf("error %v is not a *SchemaError", err)
	}
	for _, se := range schemaErrors(err) {
		if se.Property == property && strings.Contains(se.Reason, reason) {
			return
		}
	}
	t.Errorf("no SchemaError{%q, ~%q} in:\n%v", property, reason, err)
}

func schemaErrors(err error) []*SchemaError {
	var out []*SchemaError
	var walk func(error)
	walk = func(err error) {
		if se, ok := err.(*SchemaError); ok {
			out = append(out, se)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

func TestBuilderErrorsAccumulate(t *testing.T) {
	_, err := NewSchema(
		Boolean("b").MinLength(1).Format(FormatEmail),
		Enum("e"),
		String("s").MinLength(3).MaxLength(1),
	)
	if got := len(schemaErrors(err)); got != 4 {
		t.Errorf("want 4 errors, got %d: %v", got, err)
	}
	if !strings.HasPrefix(err.Error(), "elicit: invalid schema: ") {
		t.Errorf("missing context prefix: %v", err)
	}
}

// TestParseSchemaViolations checks the rules and the keyword whitelist
// when parsing.
func TestParseSchemaViolations(t *testing.T) {
	obj := func(props string) string { return `{"type":"object","properties":{` + props + `}}` }
	tests := []struct {
		name     string
		json     string
		property string
		reason   string
	}{
		{"not json", `{`, "", ""},
		{"not object", `[]`, "", ""},
		{"null", `null`, "", ""},
		{"trailing data", obj(``) + ` {}`, "", ""},
		{"missing type", `{"properties":{}}`, "", `missing "type": "object"`},
		{"wrong top type", `{"type":"array","properties":{}}`, "", `type must be "object"`},
		{"missing properties", `{"type":"object"}`, "", `missing "properties"`},
		{"properties not object", `{"type":"object","properties":[]}`, "", "properties must be a JSON object"},
		{"unknown top keyword", `{"type":"object","properties":{},"additionalProperties":false}`, "", `keyword "additionalProperties" is not allowed at the top level`},
		{"$schema not string", `{"$schema":1,"type":"object","properties":{}}`, "", "$schema must be a string"},
		{"required not array", `{"type":"object","properties":{},"required":"a"}`, "", "required must be an array of strings"},
		{"required with null", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a",null]}`, "", "required must be an array of strings"},
		{"required unknown", `{"type":"object","properties":{},"required":["a"]}`, "a", "listed in required but not defined in properties"},
		{"required twice", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","a"]}`, "a", "listed in required more than once"},
		{"duplicate property", obj(`"a":{"type":"string"},"a":{"type":"string"}`), "", `duplicate key "a"`},
		{"duplicate keyword", obj(`"a":{"type":"string","title":"x","title":"y"}`), "a", `duplicate key "title"`},
		{"empty property name", obj(`"":{"type":"string"}`), "", "property name must not be empty"},
		{"property not object", obj(`"a":true`), "a", "definition must be a JSON object"},
		{"missing property type", obj(`"a":{"title":"x"}`), "a", `missing "type"`},
		{"type array form", obj(`"a":{"type":["string","null"]}`), "a", "type must be a single type name string"},
		{"nested object", obj(`"a":{"type":"object","properties":{}}`), "a", "nested objects are not allowed"},
		{"null type", obj(`"a":{"type":"null"}`), "a", `type "null" is not allowed`},
		{"array without items", obj(`"a":{"type":"array"}`), "a", "need items"},
		{"array of strings", obj(`"a":{"type":"array","items":{"type":"string"}}`), "a", "items need enum or anyOf"},
		{"array of objects", obj(`"a":{"type":"array","items":{"type":"object"}}`), "a", "items need enum or anyOf"},
		{"items enum numbers", obj(`"a":{"type":"array","items":{"type":"number","enum":["x"]}}`), "a", `items.type must be "string"`},
		{"items enum missing type", obj(`"a":{"type":"array","items":{"enum":["x"]}}`), "a", `items.type must be "string"`},
		{"items extra keyword", obj(`"a":{"type":"array","items":{"type":"string","enum":["x"],"minLength":1}}`), "a", `keyword "minLength" is not allowed in items`},
		{"items anyOf with type", obj(`"a":{"type":"array","items":{"type":"string","anyOf":[{"const":"x","title":"X"}]}}`), "a", `may only contain "anyOf"`},
		{"anyOf entry without title", obj(`"a":{"type":"array","items":{"anyOf":[{"const":"x"}]}}`), "a", "entry 0 needs both const and title"},
		{"oneOf entry extra key", obj(`"a":{"type":"string","oneOf":[{"const":"x","title":"X","description":"d"}]}`), "a", `keyword "description" is not allowed (allowed: const, title)`},
		{"oneOf const not string", obj(`"a":{"type":"string","oneOf":[{"const":1,"title":"X"}]}`), "a", "const must be a string"},
		{"oneOf not array", obj(`"a":{"type":"string","oneOf":{}}`), "a", "must be an array of {const, title} objects"},
		{"oneOf and enum", obj(`"a":{"type":"string","enum":["x"],"oneOf":[{"const":"x","title":"X"}]}`), "a", "enum and oneOf cannot be combined"},
		{"enumNames without enum", obj(`"a":{"type":"string","enumNames":["X"]}`), "a", "enumNames requires enum"},
		{"enumNames length", obj(`"a":{"type":"string","enum":["x","y"],"enumNames":["X"]}`), "a", "enumNames has 1 entries but enum has 2"},
		{"enum not strings", obj(`"a":{"type":"string","enum":["x",1]}`), "a", "enum must be an array of strings"},
		{"enum empty", obj(`"a":{"type":"string","enum":[]}`), "a", "enum must list at least one value"},
		{"enum duplicate", obj(`"a":{"type":"string","enum":["x","x"]}`), "a", `enum value "x" is listed more than once`},
		{"pattern on string", obj(`"a":{"type":"string","pattern":"x"}`), "a", `keyword "pattern" is not allowed on a string property`},
		{"minLength on enum", obj(`"a":{"type":"string","enum":["x"],"minLength":1}`), "a", `keyword "minLength" is not allowed on a single-select enum property`},
		{"exclusiveMinimum", obj(`"a":{"type":"number","exclusiveMinimum":1}`), "a", `keyword "exclusiveMinimum" is not allowed on a number property`},
		{"format on boolean", obj(`"a":{"type":"boolean","format":"email"}`), "a", `keyword "format" is not allowed on a boolean property`},
		{"pattern on integer", obj(`"a":{"type":"integer","pattern":"x"}`), "a", `keyword "pattern" is not allowed on an integer property`},
		{"enum on boolean", obj(`"a":{"type":"boolean","enum":[true]}`), "a", `keyword "enum" is not allowed on a boolean property`},
		{"$ref", obj(`"a":{"type":"string","$ref":"#/x"}`), "a", `keyword "$ref" is not allowed`},
		{"properties on string", obj(`"a":{"type":"string","properties":{}}`), "a", `keyword "properties" is not allowed`},
		{"bad format", obj(`"a":{"type":"string","format":"ipv4"}`), "a", `format "ipv4" is not allowed`},
		{"title not string", obj(`"a":{"type":"string","title":1}`), "a", "title must be a string"},
		{"minLength string", obj(`"a":{"type":"string","minLength":"1"}`), "a", "minLength must be a number"},
		{"minLength negative", obj(`"a":{"type":"string","minLength":-1}`), "a", "must be a non-negative integer"},
		{"minLength fractional", obj(`"a":{"type":"string","minLength":1.5}`), "a", "must be a non-negative integer"},
		{"minItems huge", obj(`"a":{"type":"array","minItems":1e300,"items":{"type":"string","enum":["x"]}}`), "a", "must be a non-negative integer"},
		{"minimum out of range", obj(`"a":{"type":"number","minimum":1e400}`), "a", "is out of range"},
		{"minimum > maximum", obj(`"a":{"type":"number","minimum":2,"maximum":1}`), "a", "minimum 2 is greater than maximum 1"},
		{"string default number", obj(`"a":{"type":"string","default":1}`), "a", "default must be a string"},
		{"integer default fractional", obj(`"a":{"type":"integer","default":1.5}`), "a", "default 1.5 is not an integer"},
		{"number default string", obj(`"a":{"type":"number","default":"1"}`), "a", "default must be a number"},
		{"boolean default string", obj(`"a":{"type":"boolean","default":"true"}`), "a", "default must be a boolean"},
		{"default null", obj(`"a":{"type":"boolean","default":null}`), "a", "default must be a boolean"},
		{"multi default string", obj(`"a":{"type":"array","items":{"type":"string","enum":["x"]},"default":"x"}`), "a", "default must be an array of strings"},
		{"multi default non-member", obj(`"a":{"type":"array","items":{"type":"string","enum":["x"]},"default":["y"]}`), "a", `default value "y" is not one of the options`},
		{"enum default non-member", obj(`"a":{"type":"string","enum":["x"],"default":"y"}`), "a", `default "y" is not one of the options`},
		{"default bad email", obj(`"a":{"type":"string","format":"email","default":"x"}`), "a", `default "x" is not a valid email address`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSchemaJSON([]byte(tt.json))
			if err == nil {
				t.Fatalf("accepted: %s", mustJSON(t, s))
			}
			if !strings.HasPrefix(err.Error(), "elicit: invalid schema: ") {
				t.Errorf("missing context prefix: %v", err)
			}
			if tt.reason != "" {
				assertSchemaError(t, err, tt.property, tt.reason)
			}
			// UnmarshalJSON enforces the same rules.
			var s2 Schema
			if err := s2.UnmarshalJSON([]byte(tt.json)); err == nil && tt.json != "null" {
				t.Errorf("UnmarshalJSON accepted %s", tt.json)
			}
		})
	}
}

func TestParseSchemaReportsEveryBadProperty(t *testing.T) {
	_, err := parseSchemaJSON([]byte(`{"type":"object","properties":{"a":{"type":"object"},"b":{"type":"string","pattern":"x"},"c":{"type":"string"}}}`))
	errs := schemaErrors(err)
	if len(errs) != 2 || errs[0].Property != "a" || errs[1].Property != "b" {
		t.Errorf("want errors for a and b, got %v", err)
	}
}

func jsonNumber(s string) json.Number { return json.Number(s) }
