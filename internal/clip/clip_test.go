package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	short := strings.Repeat("a", Max)
	if String(short) != short || Quote(short) != `"`+short+`"` {
		t.Errorf("a string of Max bytes is changed: %q, %s", String(short), Quote(short))
	}
	long := strings.Repeat("k", 40<<10)
	if got, want := String(long), strings.Repeat("k", Max)+"…(40960 bytes)"; got != want {
		t.Errorf("String(40 KiB) = %q, want %q", got, want)
	}
	if got, want := Quote(long), `"`+strings.Repeat("k", Max)+`"…(40960 bytes)`; got != want {
		t.Errorf("Quote(40 KiB) = %q, want %q", got, want)
	}
	// A cut never splits a rune.
	runes := strings.Repeat("é", Max) // 2 bytes each
	for _, s := range []string{runes, "x" + runes} {
		got := String(s)
		if !utf8.ValidString(got) || len(got) > Max+len("…(9999 bytes)") {
			t.Errorf("String(%d bytes of runes) = %q", len(s), got)
		}
	}
}
