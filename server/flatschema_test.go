package server

import (
	"encoding/json"
	"testing"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/baton-mcp/baton/internal/strictjson"
)

var flatSchemas = []string{
	`{"type":"object","properties":{"id":{"type":"integer"},"text":{"type":"string"},"b":{"type":"boolean"},"f":{"type":"number"}},"required":["id","text","f"],"additionalProperties":false}`,
	`{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"t","properties":{"n":{"type":"number"},"i":{"type":"integer"}},"additionalProperties":true}`,
}

func TestFlatSchemaOf(t *testing.T) {
	for _, s := range flatSchemas {
		if flatSchemaOf(json.RawMessage(s)) == nil {
			t.Errorf("not flat: %s", s)
		}
	}
	for _, s := range []string{
		`{"type":"object","properties":{"id":{"type":"integer","minimum":1}}}`,
		`{"type":"object","properties":{"id":{"type":["integer","null"]}}}`,
		`{"type":"object","properties":{"s":{"type":"string","format":"email"}}}`,
		`{"type":"object","properties":{"o":{"type":"object"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"minProperties":1}`,
		`{"type":"object","$defs":{},"properties":{}}`,
		`{"type":"array"}`,
	} {
		if flatSchemaOf(json.RawMessage(s)) != nil {
			t.Errorf("flat: %s", s)
		}
	}
}

func TestFlatSchemaAccepts(t *testing.T) {
	f := flatSchemaOf(json.RawMessage(flatSchemas[0]))
	for _, tc := range []struct {
		args string
		want bool
	}{
		{`{"id":42,"text":"x","f":1.5}`, true},
		{`{"id":-0,"text":"","f":-1e3,"b":false}`, true},
		{`{ "id" : 1 , "text" : "\u00e9" , "f" : 0 }`, true},
		{`{"\u0069d":1,"text":"x","f":0}`, true},
		{`{"id":1.0,"text":"x","f":0}`, false}, // an integer, but left to the validator
		{`{"id":"1","text":"x","f":0}`, false},
		{`{"id":1,"text":"x"}`, false},
		{`{"id":1,"text":"x","f":0,"extra":1}`, false},
		{`{"id":1,"id":2,"text":"x","f":0}`, false},
		{`{"id":1,"text":null,"f":0}`, false},
		{`{"id":1,"text":"x","f":0,"b":"true"}`, false},
	} {
		if got := f.accepts([]byte(tc.args)); got != tc.want {
			t.Errorf("accepts(%s) = %v, want %v", tc.args, got, tc.want)
		}
	}
	open := flatSchemaOf(json.RawMessage(flatSchemas[2]))
	if !open.accepts([]byte(`{"other":[1,{}],"n":1}`)) {
		t.Error("an open schema refused an unknown property")
	}
	if (*flatSchema)(nil).accepts([]byte(`{}`)) {
		t.Error("nil accepted")
	}
	args := []byte(`{"id":42,"text":"hello","f":1.5}`)
	if n := testing.AllocsPerRun(100, func() { f.accepts(args) }); n != 0 {
		t.Errorf("accepts allocates %v times", n)
	}
}

// FuzzFlatSchema holds flatSchema.accepts to the validator: arguments it
// accepts, the validator accepts.
func FuzzFlatSchema(f *testing.F) {
	for _, a := range []string{`{"id":42,"text":"x","f":1.5}`, `{"text":"a","n":-1,"i":3,"x":null}`, `{"id":1e2,"text":"x","f":0}`, `{"b":true,"id":0,"text":"","f":0}`} {
		f.Add([]byte(a))
	}
	type compiled struct {
		flat *flatSchema
		sch  *jsv.Schema
	}
	var schemas []compiled
	for _, s := range flatSchemas {
		sch, err := compileSchema("fuzz", json.RawMessage(s), true)
		if err != nil {
			f.Fatal(err)
		}
		schemas = append(schemas, compiled{flatSchemaOf(json.RawMessage(s)), sch})
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		if !json.Valid(args) {
			return
		}
		for i, s := range schemas {
			if !s.flat.accepts(args) {
				continue
			}
			inst, err := strictjson.DecodeValue(args)
			if err != nil {
				t.Fatalf("schema %d accepted %s, which does not decode: %v", i, args, err)
			}
			if msg := validateArguments(s.sch, inst); msg != "" {
				t.Fatalf("schema %d accepted %s; the validator says %s", i, args, msg)
			}
		}
	})
}
