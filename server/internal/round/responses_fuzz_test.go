package round

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseValidResponses holds ParseValidResponses, the parser that
// trusts its input to be valid JSON, to ParseResponses (which checks it)
// and to encoding/json. On valid JSON: the same answers in the same order
// and the same error as ParseResponses; accepted only for an object, and
// then exactly the object's members as encoding/json reads them (keys
// unescaped the same, each value the same JSON), indexed past
// responsesScanMax and found by Get either way; refused for an object
// only when a key repeats. On any input, valid or not, it must not panic.
func FuzzParseValidResponses(f *testing.F) {
	f.Add([]byte(`{"confirm":{"action":"accept","content":{"confirm":true}}}`))
	f.Add([]byte(` {"a":1, "b" : [1,2,{"c":null}] ,"\u0063":"x"} `))
	f.Add([]byte(`{"a":1,"\u0061":2}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":{"action":"decline"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gerr := ParseValidResponses(json.RawMessage(data))
		if !json.Valid(data) {
			return // outside its contract: it must only not panic
		}
		want, werr := ParseResponses(json.RawMessage(data))
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("error %v, ParseResponses's %v", gerr, werr)
		}
		if got.Len() != want.Len() || (got.set == nil) != (want.set == nil) {
			t.Fatalf("%d answers, ParseResponses's %d", got.Len(), want.Len())
		}
		if got.set != nil && !reflect.DeepEqual(got.set.members, want.set.members) {
			t.Fatalf("answers %v, ParseResponses's %v", got.set.members, want.set.members)
		}

		trimmed := bytes.TrimSpace(data)
		isObject := trimmed[0] == '{'
		if !isObject {
			if gerr == nil {
				t.Fatalf("accepted %.40q, which is not an object", trimmed)
			}
			return
		}
		keys := objectKeys(t, trimmed)
		var std map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &std); err != nil {
			t.Fatalf("encoding/json refuses the object: %v", err)
		}
		if gerr != nil {
			if len(std) == len(keys) {
				t.Fatalf("refused an object without a repeated key: %v", gerr)
			}
			if !strings.Contains(gerr.Error(), "inputResponses") {
				t.Fatalf("error %q does not name inputResponses", gerr)
			}
			return
		}
		if len(std) != len(keys) {
			t.Fatalf("accepted an object whose keys repeat: %q", keys)
		}
		if got.Len() != len(keys) {
			t.Fatalf("%d answers, the object has %d members", got.Len(), len(keys))
		}
		if (got.set != nil && got.set.index != nil) != (len(keys) > responsesScanMax) {
			t.Fatalf("%d answers: indexed %v", len(keys), got.set.index != nil)
		}
		for i, k := range keys {
			if got.set.members[i].Key != k {
				t.Fatalf("answer %d is under %q, encoding/json reads %q", i, got.set.members[i].Key, k)
			}
			v, ok := got.Get(k)
			if !ok {
				t.Fatalf("Get(%q) found nothing", k)
			}
			if !sameJSON(v, std[k]) {
				t.Fatalf("Get(%q) = %s, encoding/json reads %s", k, v, std[k])
			}
		}
		if _, ok := got.Get("\x00not a key of any answer"); ok && std["\x00not a key of any answer"] == nil {
			t.Fatal("Get found a key the object does not have")
		}
	})
}

// objectKeys returns the keys of the JSON object data, in order, repeats
// included, as encoding/json's decoder reads them.
func objectKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// sameJSON reports whether a and b are the same JSON text but for the
// whitespace between tokens.
func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
