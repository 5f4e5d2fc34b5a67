package jsonw

import (
	"encoding/json"
	"testing"
)

func TestStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te`, `back\slash`, "tab\tnl\ncr\r", "\x00\x01\x1f", "é€😀", "bad\xffutf8", "\u2028\u2029", "<a&b>"} {
		got := String(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, got, err)
		}
		want := s
		if s == "bad\xffutf8" {
			want = "bad\ufffdutf8"
		}
		if back != want {
			t.Errorf("%q round-tripped to %q via %s", s, back, got)
		}
	}
	if got := string(String(nil, "<a&b>")); got != `"<a&b>"` {
		t.Errorf("HTML must not be escaped: %s", got)
	}
}

func FuzzString(f *testing.F) {
	f.Add("a\"b\\c\n\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(nil, s)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON for %q: %s", s, out)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		if want := string([]rune(s)); back != want {
			t.Fatalf("%q round-tripped to %q", want, back)
		}
	})
}
