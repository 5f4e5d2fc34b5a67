package elicit

import (
	"reflect"
	"testing"
)

// Answers to one schema share its key tables: Decode reflects over a type
// once per schema, not once per answer, and still refuses a key that
// matches a field only when case is ignored.
func TestDecodeUsesTheSchemasMemo(t *testing.T) {
	form, err := NewForm("Name?", String("name").Required())
	if err != nil {
		t.Fatal(err)
	}
	type tagged struct {
		Name string `json:"name"`
	}
	type untagged struct{ Name string }
	var tables []any
	for range 2 {
		res, err := form.CheckResult([]byte(`{"action":"accept","content":{"name":"Ada"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.schema != form.RequestedSchema {
			t.Fatal("the result does not carry its schema")
		}
		var v tagged
		if err := res.Decode(&v); err != nil || v.Name != "Ada" {
			t.Fatalf("Decode = %v, %+v", err, v)
		}
		var u untagged
		if err := res.Decode(&u); err == nil {
			t.Fatal("Decode filled or ignored a field matched only without case")
		}
		tables = append(tables, res.schema.cache.decode.Of(reflect.TypeFor[*tagged]()))
	}
	if tables[0] != tables[1] {
		t.Error("two answers to one schema built the key table twice")
	}
}
