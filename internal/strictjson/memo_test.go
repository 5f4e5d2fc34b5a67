package strictjson

import (
	"reflect"
	"strings"
	"testing"
)

func TestMemoKeepsTables(t *testing.T) {
	type answer struct {
		Name string
	}
	var m Memo
	typ := reflect.TypeFor[*answer]()
	if a, b := m.Of(typ), m.Of(typ); a == nil || a != b {
		t.Fatalf("Of twice = %p, %p: want one table, kept", a, b)
	}

	// The memo refuses a case-only match as Bind does.
	var v answer
	err := m.Bind([]byte(`{"name":"Ada"}`), &v)
	if err == nil || !strings.Contains(err.Error(), "Name") {
		t.Fatalf("Memo.Bind of a case-only key = %v, want an error naming the field", err)
	}
	if err := m.Bind([]byte(`{"Name":"Ada"}`), &v); err != nil || v.Name != "Ada" {
		t.Fatalf("Memo.Bind = %v, %+v", err, v)
	}

	// It holds at most MemoSize types; more are built per call, still right.
	types := []reflect.Type{
		reflect.TypeFor[struct{ A int }](), reflect.TypeFor[struct{ B int }](), reflect.TypeFor[struct{ C int }](),
		reflect.TypeFor[struct{ D int }](), reflect.TypeFor[struct{ E int }](), reflect.TypeFor[struct{ F int }](),
		reflect.TypeFor[struct{ G int }](), reflect.TypeFor[struct{ H int }](), reflect.TypeFor[struct{ I int }](),
		reflect.TypeFor[struct{ J int }](), reflect.TypeFor[struct{ K int }](), reflect.TypeFor[struct{ L int }](),
		reflect.TypeFor[struct{ M int }](), reflect.TypeFor[struct{ N int }](), reflect.TypeFor[struct{ O int }](),
		reflect.TypeFor[struct{ P int }](), reflect.TypeFor[struct{ Q int }](),
	}
	for _, typ := range types {
		if m.Of(typ) == nil {
			t.Fatalf("Of(%v) = nil", typ)
		}
	}
	if len(m.tables) != MemoSize {
		t.Errorf("memo holds %d types after %d, want the cap %d", len(m.tables), len(types)+1, MemoSize)
	}
	last := types[len(types)-1]
	if m.Of(last) == m.Of(last) {
		t.Errorf("a type beyond the cap came from the memo")
	}

	// The nil memo builds every time.
	var nilMemo *Memo
	if err := nilMemo.Bind([]byte(`{"name":"Ada"}`), &v); err == nil {
		t.Error("nil Memo.Bind accepted a case-only key")
	}
}
