package round

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// TestParseValidResponses holds ParseValidResponses to ParseResponses on
// valid JSON: the same answers in the same order, the same errors.
func TestParseValidResponses(t *testing.T) {
	many := "{"
	for i := range responsesScanMax + 2 {
		if i > 0 {
			many += ","
		}
		many += fmt.Sprintf(`"k%d":{"action":"accept","content":{"n":%d}}`, i, i)
	}
	many += "}"
	for _, raw := range []string{
		``, `{}`, ` { } `, `null`, `[]`, `"s"`, `1`,
		`{"confirm":{"action":"accept","content":{"confirm":true}}}`,
		` {"a":1, "b" : [1,2,{"c":null}] ,"\u0063":"x"} `,
		`{"a":1,"a":2}`, `{"\u0061":1,"a":2}`,
		`{"é":"\u00e9","esc\"aped":{"x":"\n"}}`,
		many,
	} {
		var in json.RawMessage
		if raw != "" {
			in = json.RawMessage(raw)
		}
		want, werr := ParseResponses(in)
		got, gerr := ParseValidResponses(in)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Errorf("%s: error %v, want %v", raw, gerr, werr)
			continue
		}
		if want.Len() != got.Len() {
			t.Errorf("%s: %d answers, want %d", raw, got.Len(), want.Len())
			continue
		}
		if want.set != nil && !reflect.DeepEqual(want.set.members, got.set.members) {
			t.Errorf("%s: answers %v, want %v", raw, got.set.members, want.set.members)
		}
		if want.set != nil && (want.set.index == nil) != (got.set.index == nil) {
			t.Errorf("%s: indexed %v, want %v", raw, got.set.index != nil, want.set.index != nil)
		}
	}
}
