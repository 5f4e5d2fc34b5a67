package elicit

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendString holds appendString to encoding/json: the same bytes
// for every string, plain or not.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "Proceed?", "form", `say "hi"`, `a\b`, "<b>&</b>", "tab\there", "é", "\u2028", "\xff", "\x7f", "~ !"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("appendString(%q) = %s, json.Marshal %s", s, got[1:], want)
		}
	})
}

// TestRequestAppendJSONAllocs shows that encoding a question whose message
// is plain ASCII allocates nothing beyond the buffer it appends to.
func TestRequestAppendJSONAllocs(t *testing.T) {
	req, err := NewForm("Proceed with the transfer?", Boolean("ok").Required())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 512)
	want := req.AppendJSON(nil)
	if n := testing.AllocsPerRun(100, func() { buf = req.AppendJSON(buf[:0]) }); n != 0 {
		t.Fatalf("AppendJSON: %v allocations, want 0", n)
	}
	if !bytes.Equal(buf, want) {
		t.Fatalf("AppendJSON into a buffer %s, into nil %s", buf, want)
	}
	var back map[string]any
	if err := json.Unmarshal(buf, &back); err != nil || back["message"] != "Proceed with the transfer?" || back["mode"] != "form" {
		t.Fatalf("AppendJSON wrote %s (%v)", buf, err)
	}
}
