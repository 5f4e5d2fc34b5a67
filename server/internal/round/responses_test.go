package round

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// responsesOf returns Responses holding m, through ParseResponses.
func responsesOf(t *testing.T, m map[string]json.RawMessage) Responses {
	t.Helper()
	if m == nil {
		return Responses{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ParseResponses(b)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// Responses finds every answer by its key, on both sides of the count from
// which it builds an index, and nothing else.
func TestResponsesGet(t *testing.T) {
	for _, n := range []int{0, 1, 2, responsesScanMax, responsesScanMax + 1, 40} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var b strings.Builder
			b.WriteString(" {")
			for i := range n {
				if i > 0 {
					b.WriteString(" , ")
				}
				fmt.Fprintf(&b, `"k\u00e9%d" : {"v":%d}`, i, i)
			}
			b.WriteString("} ")
			rs, err := ParseResponses(json.RawMessage(b.String()))
			if err != nil {
				t.Fatal(err)
			}
			if rs.Len() != n {
				t.Fatalf("Len = %d, want %d", rs.Len(), n)
			}
			if indexed := rs.set != nil && rs.set.index != nil; indexed != (n > responsesScanMax) {
				t.Fatalf("indexed = %v with %d answers", indexed, n)
			}
			for i := range n {
				raw, ok := rs.Get(fmt.Sprintf("ké%d", i))
				if want := fmt.Sprintf(`{"v":%d}`, i); !ok || string(raw) != want {
					t.Fatalf("Get(ké%d) = %s, %v; want %s", i, raw, ok, want)
				}
			}
			for _, k := range []string{"", "k", fmt.Sprintf("ké%d", n), `k\u00e90`} {
				if raw, ok := rs.Get(k); ok {
					t.Fatalf("Get(%q) = %s, want nothing", k, raw)
				}
			}
		})
	}
}

// A key given twice is refused, whichever side of the index it falls.
func TestResponsesDuplicate(t *testing.T) {
	for _, n := range []int{2, responsesScanMax + 2} {
		var b strings.Builder
		b.WriteString("{")
		for i := range n - 1 {
			fmt.Fprintf(&b, `"k%d":true,`, i)
		}
		b.WriteString(`"k0":false}`)
		if _, err := ParseResponses(json.RawMessage(b.String())); err == nil || !strings.Contains(err.Error(), "duplicate") {
			t.Fatalf("%d answers, one key twice: err = %v", n, err)
		}
	}
}
