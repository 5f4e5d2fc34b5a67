package elicit

import (
	"reflect"
	"testing"

	"github.com/baton-mcp/baton/internal/strictjson"
)

// TestDecodeCheckedLikeBind: a checked answer decodes exactly as the full
// strictjson.Bind decodes it (the same value, an error in the same
// cases), whether its schema's property names are exact for the type (one
// pass) or not (Bind's second pass finds the key matched only without
// case), through CheckResult and CheckedResult alike.
func TestDecodeCheckedLikeBind(t *testing.T) {
	form, err := NewForm("Who?", String("name").Required(), Integer("age"), Boolean("ok"), MultiEnum("tags", "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	type exact struct {
		Name string   `json:"name"`
		Age  int      `json:"age"`
		Tags []string `json:"tags"`
		Note string   // no schema property folds to "note"
	}
	type caseOnly struct {
		Name string `json:"name"`
		Ok   bool   // "ok" matches only without case
	}
	type nested struct {
		Name string `json:"name"`
		Tags []struct {
			X string
		} `json:"tags"`
	}
	types := []func() any{
		func() any { return new(exact) },
		func() any { return new(caseOnly) },
		func() any { return new(nested) },
		func() any { return new(map[string]any) },
	}
	for _, raw := range []string{
		`{"action":"accept","content":{"name":"Ada"}}`,
		`{"action":"accept","content":{"name":"Ada","age":36,"ok":true,"tags":["a"]}}`,
		`{"action":"accept","content":{"name":"Ada","NOTE":"dropped","Ok":false}}`,
		`{"action":"accept","content":{"name":"Ada","ok":false}}`,
	} {
		res, err := form.CheckResult([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		for _, r := range []*Result{res, form.CheckedResult(res.Action, res.Content)} {
			for _, newV := range types {
				got, want := newV(), newV()
				gotErr := r.Decode(got)
				wantErr := strictjson.Bind(res.Content, want)
				if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
					t.Errorf("%s into %T: Decode = %v %+v, Bind = %v %+v", raw, got, gotErr, got, wantErr, want)
				}
			}
		}
	}
	// The answer to the case-only type is refused (the property "ok" is
	// in the content): the fast path did not skip it.
	res, err := form.CheckResult([]byte(`{"action":"accept","content":{"name":"Ada","ok":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Name string `json:"name"`
		Ok   bool
	}
	if err := res.Decode(&c); err == nil {
		t.Fatal("a key matched only without case was not refused")
	}
	if !form.RequestedSchema.cache.exact.of(form.RequestedSchema, &form.RequestedSchema.cache.decode, reflect.TypeFor[*exact]()).exact {
		t.Error("a type whose fields take the properties exactly was not found exact")
	}
}
