package elicit

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/baton-mcp/baton/internal/strictjson"
)

// flatTarget is a type flatPlanOf describes: bool and string fields, tag
// names and a Go name.
type flatTarget struct {
	OK      bool   `json:"ok"`
	Name    string `json:"name,omitempty"`
	Plain   string
	Flag    bool   `json:"flag-2"`
	Comment string `json:",omitempty"`
}

// flatStart is the value a decode starts from: fields a decode leaves
// alone keep it.
var flatStart = flatTarget{OK: true, Name: "before", Plain: "p", Flag: false, Comment: "c"}

// FuzzDecodeFlat holds the flat decode (decode_flat.go) to
// strictjson.Unmarshal, what Decode called before: whenever it takes the
// content, the library takes it too and fills the value the same way, and
// when it leaves the content to the library it has written nothing.
func FuzzDecodeFlat(f *testing.F) {
	for _, s := range []string{
		`{"ok":true}`, `{"ok":false}`, `{}`, ` { "ok" : true , "name" : "Ada" } `,
		`{"Plain":"x","flag-2":true,"Comment":"y"}`, `{"ok":true,"ok":false}`,
		`{"OK":true}`, `{"ok":1}`, `{"ok":null}`, `{"ok":"true"}`, `{"name":"a\"b"}`,
		`{"name":"é"}`, `{"other":1}`, `{"ok":true,}`, `{"ok":truex}`, `{"ok":true}x`,
		`{"ok":true}` + "\n", `[true]`, `"x"`, ``, `{"ok":tru`, `{"name":"a` + "\x01" + `"}`,
	} {
		f.Add([]byte(s))
	}
	plan := flatPlanOf(reflect.TypeFor[*flatTarget]())
	if plan == nil {
		f.Fatal("no plan for flatTarget")
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		got, want := flatStart, flatStart
		ok := plan.decode(content, &got)
		err := strictjson.Unmarshal(content, &want)
		if !ok {
			if got != flatStart {
				t.Fatalf("%q: left to the library after writing %+v", content, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: taken, but the library refuses it: %v", content, err)
		}
		if got != want {
			t.Fatalf("%q: %+v, the library %+v", content, got, want)
		}
	})
}

// TestFlatPlanOf: the flat decode is only for types the library would
// decode as plain bool and string fields.
func TestFlatPlanOf(t *testing.T) {
	type named bool
	type withNumber struct {
		N json.Number `json:"n"`
	}
	type withNamed struct {
		B named `json:"b"`
	}
	type withStringOpt struct {
		B bool `json:"b,string"`
	}
	type withUnexported struct {
		B bool `json:"b"`
		c bool
	}
	type inner struct{ B bool }
	type withEmbedded struct {
		inner
	}
	type withDash struct {
		B bool `json:"-"`
	}
	type withDup struct {
		X bool
		Y bool `json:"X"`
	}
	type withOdd struct {
		A bool `json:"a b"`
	}
	type withInt struct {
		N int `json:"n"`
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[flatTarget](), reflect.TypeFor[*withNumber](), reflect.TypeFor[*withNamed](),
		reflect.TypeFor[*withStringOpt](), reflect.TypeFor[*withUnexported](), reflect.TypeFor[*withEmbedded](),
		reflect.TypeFor[*withDash](), reflect.TypeFor[*withDup](), reflect.TypeFor[*withOdd](),
		reflect.TypeFor[*withInt](), reflect.TypeFor[*map[string]any](), reflect.TypeFor[*selfDecoding](),
	} {
		if flatPlanOf(typ) != nil {
			t.Errorf("%v: a flat plan", typ)
		}
	}
	if flatPlanOf(reflect.TypeFor[*struct {
		OK bool `json:"ok"`
	}]()) == nil {
		t.Error("no flat plan for the usual answer type")
	}
	_ = withUnexported{}.c
	plan := flatPlanOf(reflect.TypeFor[*flatTarget]())
	for _, s := range []string{`{"ok":false}`, ` { "name" : "Ada" , "flag-2":true } `, `{}`} {
		v := flatStart
		if !plan.decode([]byte(s), &v) {
			t.Errorf("%s: left to the library", s)
		}
	}
}

// selfDecoding decodes itself.
type selfDecoding struct{ B bool }

func (s *selfDecoding) UnmarshalJSON([]byte) error { return nil }

// TestDecodeFlatThroughDecode: Decode of a checked answer takes the flat
// path for a flat type and gives what the library gives.
func TestDecodeFlatThroughDecode(t *testing.T) {
	form, err := NewForm("Who?", String("name").Required(), Boolean("ok"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := form.CheckResult([]byte(`{"action":"accept","content":{"name":"Ada","ok":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Name string `json:"name"`
		OK   bool   `json:"ok"`
	}
	if err := res.Decode(&v); err != nil || v.Name != "Ada" || !v.OK {
		t.Fatalf("Decode = %v, %+v", err, v)
	}
	if et := form.RequestedSchema.cache.exact.of(form.RequestedSchema, &form.RequestedSchema.cache.decode, reflect.TypeOf(&v)); et.plan == nil {
		t.Error("no flat plan was made for the type")
	}
}

// TestFlatDecodeLeavesUnquotableKeys: a field whose name a plain JSON
// string cannot spell in printable ASCII (here a Go name with a letter
// outside ASCII) is never taken by the flat decode, which leaves the
// content to the library, having written nothing.
func TestFlatDecodeLeavesUnquotableKeys(t *testing.T) {
	type accented struct {
		Café bool
		OK   bool `json:"ok"`
	}
	plan := flatPlanOf(reflect.TypeFor[*accented]())
	if plan == nil {
		t.Fatal("no plan for accented")
	}
	if plan.fields[0].quoted != "" || plan.fields[1].quoted != `"ok"` {
		t.Fatalf("quoted keys %q, %q", plan.fields[0].quoted, plan.fields[1].quoted)
	}
	var got accented
	if plan.decode([]byte(`{"ok":true,"Café":true}`), &got) || got != (accented{}) {
		t.Fatalf("taken: %+v", got)
	}
	if !plan.decode([]byte(`{"ok":true}`), &got) || got != (accented{OK: true}) {
		t.Fatalf("not taken: %+v", got)
	}
}
