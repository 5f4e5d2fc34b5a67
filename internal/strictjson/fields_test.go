package strictjson

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

type untagged struct {
	Name  string
	Email string `json:"email"`
}

type address struct {
	City string
}

type person struct {
	Name    string             `json:"name"`
	Home    *address           `json:"home"`
	Past    []address          `json:"past"`
	ByLabel map[string]address `json:"byLabel"`
	When    time.Time          `json:"when"`
	Tree    *person            `json:"tree"`
}

type embedded struct {
	untagged
	Extra int `json:"extra"`
}

func TestBindCaseTrap(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		into       func() any
		key, field string
		path       string
		tagged     bool
		fix        string
	}{
		{"untagged field", `{"name":"Ada","email":"a@b"}`, func() any { return new(untagged) }, "name", "Name", "", false, "`json:\"name\"`"},
		{"tagged field sent in other case", `{"NAME":"Ada"}`, func() any { return new(person) }, "NAME", "Name", "", true, `spelled "name"`},
		{"nested pointer", `{"name":"a","home":{"city":"Oslo"}}`, func() any { return new(person) }, "city", "City", "/home", false, "`json:\"city\"`"},
		{"slice element", `{"past":[{"City":"x"},{"CITY":"y"}]}`, func() any { return new(person) }, "CITY", "City", "/past/1", false, "`json:\"CITY\"`"},
		{"map value", `{"byLabel":{"a/b":{"city":"z"}}}`, func() any { return new(person) }, "city", "City", "/byLabel/a~1b", false, "`json:\"city\"`"},
		{"recursive type", `{"tree":{"tree":{"Name":"deep"}}}`, func() any { return new(person) }, "Name", "Name", "/tree/tree", true, `spelled "name"`},
		{"promoted field", `{"extra":1,"name":"x"}`, func() any { return new(embedded) }, "name", "Name", "", false, "`json:\"name\"`"},
		{"unicode folding", "{\"\u212aey\":1}", func() any { return new(struct{ Key int }) }, "\u212aey", "Key", "", false, "json:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Bind([]byte(tc.data), tc.into())
			var ce *CaseError
			if !errors.As(err, &ce) {
				t.Fatalf("Bind(%s) = %v, want a *CaseError", tc.data, err)
			}
			if ce.Key != tc.key || ce.Field != tc.field || ce.Path != tc.path || ce.Tagged != tc.tagged {
				t.Fatalf("CaseError = %+v, want key %q field %q path %q tagged %v", ce, tc.key, tc.field, tc.path, tc.tagged)
			}
			msg := err.Error()
			for _, want := range []string{`"` + tc.key + `"`, tc.field, "case", tc.fix} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

func TestBindAcceptsExactAndUnknownKeys(t *testing.T) {
	var p person
	data := `{"name":"Ada","home":{"City":"Oslo"},"past":[{"City":"Rome"}],"byLabel":{"Work":{"City":"Bergen"}},"when":"2026-01-02T03:04:05Z","unknown":1,"tree":null}`
	if err := Bind([]byte(data), &p); err != nil {
		t.Fatalf("Bind: %v", err)
	}
	if p.Name != "Ada" || p.Home.City != "Oslo" || p.Past[0].City != "Rome" || p.ByLabel["Work"].City != "Bergen" || p.When.Year() != 2026 {
		t.Fatalf("decoded %+v", p)
	}
	// Maps and generic values take keys as they come.
	var m map[string]any
	if err := Bind([]byte(`{"Name":1,"name":2}`), &m); err != nil || len(m) != 2 {
		t.Fatalf("map: %v %v", m, err)
	}
	var a any
	if err := Bind([]byte(`{"X":1}`), &a); err != nil {
		t.Fatalf("any: %v", err)
	}
	// A key that has an exact match is fine even when another field folds
	// to it.
	var both struct {
		Lower string `json:"id"`
		Upper string `json:"ID"`
	}
	if err := Bind([]byte(`{"id":"a","ID":"b"}`), &both); err != nil || both.Lower != "a" || both.Upper != "b" {
		t.Fatalf("both: %+v %v", both, err)
	}
	// Type errors come first, as from Unmarshal.
	if err := Bind([]byte(`{"name":1}`), new(person)); err == nil || errors.As(err, new(*CaseError)) {
		t.Fatalf("type error: %v", err)
	}
}

func TestFieldsOfNothingToCheck(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[int](), reflect.TypeFor[map[string]any](), reflect.TypeFor[[]string](),
		reflect.TypeFor[time.Time](), reflect.TypeFor[*struct{ x int }](), reflect.TypeFor[any](),
	} {
		if f := FieldsOf(typ); f != nil {
			t.Errorf("FieldsOf(%v) = %+v, want nil", typ, f)
		}
	}
	var f *Fields
	if err := f.Check([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkBind(b *testing.B) {
	data := []byte(`{"name":"Ada","home":{"City":"Oslo"},"past":[{"City":"Rome"}]}`)
	b.Run("Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p person
			if err := Unmarshal(data, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Bind", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p person
			if err := Bind(data, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
	fields := FieldsOf(reflect.TypeFor[person]())
	b.Run("UnmarshalAndCheck", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p person
			if err := Unmarshal(data, &p); err != nil {
				b.Fatal(err)
			}
			if err := fields.Check(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzBind decodes arbitrary input into a nested type: Bind never panics,
// a CaseError names a key that really matches its field only by case, and
// whatever Unmarshal accepts without such a key Bind accepts too.
func FuzzBind(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var p person
		err := Bind(data, &p)
		var q person
		uerr := Unmarshal(data, &q)
		var ce *CaseError
		switch {
		case errors.As(err, &ce):
			if uerr != nil {
				t.Fatalf("case error %v for input Unmarshal refuses (%v)", err, uerr)
			}
			if ce.Key == ce.Want || !strings.EqualFold(ce.Key, ce.Want) {
				t.Fatalf("key %q and field key %q do not differ only by case", ce.Key, ce.Want)
			}
		case (err == nil) != (uerr == nil):
			t.Fatalf("Bind: %v, Unmarshal: %v", err, uerr)
		}
	})
}
