package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
)

// idSeeds are ids as sent, valid and not.
var idSeeds = []string{
	`"b.AAAAAAAAAAAAAAAA"`, `"x-1"`, `""`, `"é"`, "\"\xff\"", `"a\"b"`, `"a\u0041"`, `"\n"`, "\"a\tb\"",
	`"a"b"`, `"a`, `"`, `a"`, `7`, `-3`, `1.5`, `null`, `true`, `[]`, `{}`, ` "x" `, `"x" "y"`, `"\\"`,
}

// FuzzIDUnmarshal holds ID.UnmarshalJSON to encoding/json's decision for
// strings and strconv's for integers (the form before plainString).
func FuzzIDUnmarshal(f *testing.F) {
	for _, s := range idSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var id ID
		err := id.UnmarshalJSON(data)
		b := bytes.TrimSpace(data)
		want := len(b) > 0
		if want {
			switch b[0] {
			case '"':
				var s string
				want = json.Unmarshal(b, &s) == nil
			case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				_, perr := strconv.ParseInt(string(b), 10, 64)
				want = perr == nil
			default:
				want = false
			}
		}
		if (err == nil) != want {
			t.Fatalf("UnmarshalJSON(%q): err %v, want ok %v", data, err, want)
		}
		if err == nil && !bytes.Equal(id.Raw(), b) {
			t.Fatalf("UnmarshalJSON(%q) kept %q", data, id.Raw())
		}
	})
}

func TestIDUnmarshalSeeds(t *testing.T) {
	for _, s := range []string{`"b.AAAAAAAAAAAAAAAA"`, `"é"`, "\"\xff\""} {
		var id ID
		if err := id.UnmarshalJSON([]byte(s)); err != nil || id.String() != s {
			t.Errorf("UnmarshalJSON(%q) = %v, %q", s, err, id.String())
		}
	}
	for _, s := range []string{`"a"b"`, "\"\n\"", "\"a\tb\"", `"a`, `"\q"`} {
		var id ID
		if err := id.UnmarshalJSON([]byte(s)); err == nil {
			t.Errorf("UnmarshalJSON(%q) took it", s)
		}
	}
}
